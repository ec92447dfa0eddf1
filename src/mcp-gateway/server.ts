// The MCP face of a governed session, built with the SDK's low-level Server: tools/list,
// tools/call, resources/list, resources/read, prompts/list and prompts/get answered by a
// GatewaySession. A refused tool call is a tool result with isError and the Warden code
// (so the model reads why); a refused read or prompt is a JSON-RPC error carrying the code.
// Every answer carries the decision id and the result's taint in `_meta` (warden/*).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { McpGatewayError } from "../contracts/index.js";
import type { Gateway } from "./gateway.js";
import type { GatewaySession, Governed } from "./session.js";

const VERSION = "0.1.0";

function meta(g: Governed & { ok: true }) {
  return { "warden/decisionId": g.decisionId, "warden/taint": g.taint };
}

function refusal(g: Governed & { ok: false }): McpError {
  return new McpError(ErrorCode.InvalidRequest, `${g.code}: ${g.message}`, {
    code: g.code,
    decisionId: g.decisionId,
  });
}

function signalOf(extra: { signal: AbortSignal }): AbortSignal {
  return extra.signal;
}

/** Only the fields of a CallToolResult a client needs; the upstream's own `_meta` is not passed on. */
function toolResult(output: Record<string, unknown>) {
  return {
    content: Array.isArray(output.content) ? output.content : [],
    ...(output.structuredContent !== undefined ? { structuredContent: output.structuredContent } : {}),
    ...(output.isError === true ? { isError: true } : {}),
  };
}

/** An SDK Server that serves one governed session. */
export function sessionServer(session: GatewaySession): Server {
  const server = new Server(
    { name: "warden-mcp-gateway", version: VERSION },
    { capabilities: { tools: { listChanged: false }, resources: {}, prompts: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await session.listTools()).map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object" },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const g = await session.callTool(req.params.name, req.params.arguments ?? {}, signalOf(extra));
    if (!g.ok) {
      return {
        content: [{ type: "text" as const, text: `${g.code}: ${g.message}` }],
        isError: true,
        _meta: { "warden/code": g.code, "warden/decisionId": g.decisionId },
      };
    }
    return { ...toolResult(g.output), _meta: meta(g) };
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: (await session.listResources()).map((r) => ({ ...r })),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const g = await session.readResource(req.params.uri, signalOf(extra));
    if (!g.ok) throw refusal(g);
    return { contents: Array.isArray(g.output.contents) ? g.output.contents : [], _meta: meta(g) };
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: (await session.listPrompts()).map((p) => ({
      name: p.exposed,
      ...(p.info.description !== undefined ? { description: p.info.description } : {}),
      ...(p.info.arguments !== undefined ? { arguments: p.info.arguments } : {}),
    })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const g = await session.getPrompt(req.params.name, req.params.arguments ?? {}, signalOf(extra));
    if (!g.ok) throw refusal(g);
    return { messages: Array.isArray(g.output.messages) ? g.output.messages : [], _meta: meta(g) };
  });
  return server;
}

/** Serves one session over stdin/stdout for the configured stdio principal; resolves when the client leaves. */
export async function serveStdio(gw: Gateway): Promise<void> {
  const principal = gw.loaded.config.stdio?.principal;
  if (principal === undefined)
    throw new McpGatewayError("ERR_MCP_CONFIG_INVALID", "stdio.principal is required to serve over stdio");
  const session = await gw.session(principal);
  const server = sessionServer(session);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      session.end();
      resolve();
    };
  });
  await server.connect(transport);
  await closed;
}
