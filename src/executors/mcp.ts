// The MCP executor: governs tools of downstream MCP servers (stdio or Streamable
// HTTP, via the official SDK). A tool's name, description and input schema are
// what the model reads and trusts, so they are pinned on first use (TOFU) in a
// pin store; before every call the current definition is fetched and compared,
// and a changed tool (a "rug pull") is refused until an operator re-approves it.
// Pins, changes and approvals are journal events. Tools can also be wrapped as
// derived Warden contracts so they go through the same Gate as any other tool.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import { ExecutorError, isSha256Hash, type Sha256Hash, sha256Of } from "../contracts/index.js";
import { type ToolContract, ToolContractSchema } from "../tools/index.js";
import {
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  runBound,
  type ToolIdentity,
} from "./runtime.js";

export type McpServerSpec =
  | { kind: "stdio"; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; headers?: Record<string, string> };

export interface McpToolInfo {
  name: string;
  description: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** The pinned identity of a tool: what the model reads (name, description) and what it fills in (schema). */
export function mcpToolHash(tool: McpToolInfo): Sha256Hash {
  return sha256Of({ name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema });
}

/** One live connection to a downstream MCP server. */
export class McpConnection {
  readonly name: string;
  readonly #client: Client;

  private constructor(name: string, client: Client) {
    this.name = name;
    this.#client = client;
  }

  static async connect(name: string, spec: McpServerSpec): Promise<McpConnection> {
    const client = new Client({ name: "warden", version: "0.1.0" });
    const transport =
      spec.kind === "stdio"
        ? new StdioClientTransport({
            command: spec.command,
            ...(spec.args !== undefined ? { args: spec.args } : {}),
            ...(spec.env !== undefined ? { env: spec.env } : {}),
            ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
            stderr: "ignore",
          })
        : new StreamableHTTPClientTransport(
            new URL(spec.url),
            spec.headers !== undefined ? { requestInit: { headers: spec.headers } } : undefined,
          );
    try {
      await client.connect(transport);
    } catch (err) {
      throw new ExecutorError(
        "ERR_EXEC_MCP_PROTOCOL",
        `cannot connect to MCP server ${name}: ${(err as Error).message}`,
      );
    }
    return new McpConnection(name, client);
  }

  async listTools(): Promise<McpToolInfo[]> {
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#client.listTools(cursor === undefined ? {} : { cursor });
      for (const t of page.tools) {
        out.push({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema as Record<string, unknown>,
        });
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined && out.length < 10_000);
    return out;
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    return this.#client.callTool({ name, arguments: args }, undefined, { signal, timeout: 24 * 3600 * 1000 });
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}

const PinFile = z.strictObject({
  version: z.literal(1),
  pins: z.record(z.string(), z.record(z.string(), z.string().refine(isSha256Hash))),
});

/** Tool definition pins per server, kept in a JSON file (written atomically, 0600). */
export class McpPinStore {
  readonly #path: string | undefined;
  #pins: Record<string, Record<string, Sha256Hash>> = {};

  /** Without a path the store lives in memory only. */
  constructor(path?: string) {
    this.#path = path;
    if (path !== undefined && existsSync(path)) {
      let parsed: z.infer<typeof PinFile>;
      try {
        parsed = PinFile.parse(JSON.parse(readFileSync(path, "utf8")));
      } catch (err) {
        throw new ExecutorError("ERR_EXEC_MCP_PIN_STORE", `invalid MCP pin store: ${(err as Error).message}`);
      }
      this.#pins = parsed.pins as Record<string, Record<string, Sha256Hash>>;
    }
  }

  get(server: string, tool: string): Sha256Hash | undefined {
    const s = Object.hasOwn(this.#pins, server) ? this.#pins[server] : undefined;
    return s !== undefined && Object.hasOwn(s, tool) ? s[tool] : undefined;
  }

  set(server: string, tool: string, hash: Sha256Hash): void {
    const s = Object.hasOwn(this.#pins, server) ? (this.#pins[server] as Record<string, Sha256Hash>) : {};
    s[tool] = hash;
    this.#pins[server] = s;
    this.#save();
  }

  #save(): void {
    if (this.#path === undefined) return;
    const tmp = `${this.#path}.${randomBytes(6).toString("hex")}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: 1, pins: this.#pins }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.#path);
  }
}

export interface McpBinding extends ToolIdentity {
  server: string;
  /** The downstream tool's name. */
  tool: string;
  /** Builds the downstream arguments from the ticket's parameters (contract field_map). */
  build(parameters: Readonly<Record<string, unknown>>): Record<string, unknown>;
}

export interface McpExecutorOptions {
  servers: Readonly<Record<string, McpConnection>>;
  pins: McpPinStore;
  maxOutputBytes?: number;
  maxTimeoutMs?: number;
}

export interface McpOutput {
  /** The CallToolResult as returned by the server. */
  result: Record<string, unknown>;
  isError: boolean;
}

export type McpCheck =
  | { ok: true; tool: McpToolInfo; hash: Sha256Hash; pinnedNow: boolean }
  | {
      ok: false;
      code: "ERR_EXEC_MCP_TOOL_UNKNOWN" | "ERR_EXEC_MCP_TOOL_CHANGED";
      message: string;
      hash?: Sha256Hash;
    };

export class McpExecutor {
  readonly #servers: Readonly<Record<string, McpConnection>>;
  readonly #pins: McpPinStore;
  readonly #maxBytes: number;
  readonly #maxTimeoutMs: number;
  readonly #deps: ExecutorDeps;

  constructor(options: McpExecutorOptions, deps: ExecutorDeps = {}) {
    this.#servers = options.servers;
    this.#pins = options.pins;
    this.#maxBytes = options.maxOutputBytes ?? 1024 * 1024;
    this.#maxTimeoutMs = options.maxTimeoutMs ?? 60_000;
    this.#deps = deps;
  }

  #server(name: string): McpConnection {
    const s = Object.hasOwn(this.#servers, name) ? this.#servers[name] : undefined;
    if (s === undefined) throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", `no MCP server named ${name}`);
    return s;
  }

  async #journal(type: string, body: Record<string, unknown>): Promise<void> {
    await this.#deps.journal?.append({ type, run_id: "warden-executors", body });
  }

  /** Compares a tool's current definition with its pin, pinning it on first use. */
  async check(server: string, tool: string): Promise<McpCheck> {
    const tools = await this.#server(server).listTools();
    const info = tools.find((t) => t.name === tool);
    if (info === undefined) {
      return { ok: false, code: "ERR_EXEC_MCP_TOOL_UNKNOWN", message: `${server} has no tool ${tool}` };
    }
    const hash = mcpToolHash(info);
    const pinned = this.#pins.get(server, tool);
    if (pinned === undefined) {
      this.#pins.set(server, tool, hash);
      await this.#journal("warden.executor.mcp_tool_pinned", { server, tool, tool_hash: hash });
      return { ok: true, tool: info, hash, pinnedNow: true };
    }
    if (pinned !== hash) {
      await this.#journal("warden.executor.mcp_tool_changed", {
        server,
        tool,
        pinned_hash: pinned,
        observed_hash: hash,
      });
      return {
        ok: false,
        code: "ERR_EXEC_MCP_TOOL_CHANGED",
        message: `${server}/${tool} changed since it was approved; re-approve it to use it`,
        hash,
      };
    }
    return { ok: true, tool: info, hash, pinnedNow: false };
  }

  /** Operator action: accept a tool's current definition (after review). Returns the new pin. */
  async approve(server: string, tool: string): Promise<Sha256Hash> {
    const tools = await this.#server(server).listTools();
    const info = tools.find((t) => t.name === tool);
    if (info === undefined)
      throw new ExecutorError("ERR_EXEC_MCP_TOOL_UNKNOWN", `${server} has no tool ${tool}`);
    const hash = mcpToolHash(info);
    const previous = this.#pins.get(server, tool) ?? null;
    this.#pins.set(server, tool, hash);
    await this.#journal("warden.executor.mcp_tool_approved", {
      server,
      tool,
      tool_hash: hash,
      previous_hash: previous,
    });
    return hash;
  }

  /** Derived contracts for a server's tools (arguments the contract format cannot express are listed). */
  async wrapTools(server: string): Promise<{ contract: ToolContract; unsupported: string[] }[]> {
    const tools = await this.#server(server).listTools();
    return tools.map((t) => contractFromMcpTool(server, t));
  }

  execute(ticket: unknown, binding: McpBinding, opts: CallOptions = {}): Promise<ExecutionResult<McpOutput>> {
    return runBound(
      ticket,
      {
        executor: "mcp",
        binding,
        defaultTaint: "mcp",
        maxTimeoutMs: this.#maxTimeoutMs,
        attempt: async (args, { signal }) => {
          const inv = {
            kind: "mcp" as const,
            server: binding.server,
            tool: binding.tool,
            tool_hash: null as Sha256Hash | null,
          };
          let check: McpCheck;
          try {
            check = await this.check(binding.server, binding.tool);
          } catch (err) {
            if (err instanceof ExecutorError) throw err;
            return {
              invocation: inv,
              error: { code: "ERR_EXEC_MCP_PROTOCOL", message: (err as Error).message },
            };
          }
          if (!check.ok) {
            if (check.hash !== undefined) inv.tool_hash = check.hash;
            return { invocation: inv, error: { code: check.code, message: check.message } };
          }
          inv.tool_hash = check.hash;
          let result: Record<string, unknown>;
          try {
            result = (await this.#server(binding.server).callTool(binding.tool, args, signal)) as Record<
              string,
              unknown
            >;
          } catch (err) {
            if (signal.aborted)
              return { invocation: inv, error: { code: abortCode(signal), message: "MCP call aborted" } };
            return {
              invocation: inv,
              error: { code: "ERR_EXEC_MCP_PROTOCOL", message: (err as Error).message },
            };
          }
          const raw = Buffer.from(JSON.stringify(result));
          if (raw.length > this.#maxBytes) {
            return {
              invocation: inv,
              error: {
                code: "ERR_EXEC_OUTPUT_TOO_LARGE",
                message: `MCP result over ${this.#maxBytes} bytes`,
              },
            };
          }
          const isError = result.isError === true;
          const output: McpOutput = { result, isError };
          const base = {
            invocation: inv,
            raw,
            output,
            contentType: "application/json",
            origin: `${binding.server}/${binding.tool}`,
          };
          return isError
            ? { ...base, error: { code: "ERR_EXEC_TOOL_FAILED", message: "MCP tool reported an error" } }
            : base;
        },
      },
      this.#deps,
      opts,
    );
  }
}

const TYPE_MAP: Record<string, "string" | "integer" | "number" | "boolean"> = {
  string: "string",
  integer: "integer",
  number: "number",
  boolean: "boolean",
};

/** A Warden contract derived from an MCP tool's input schema. */
export function contractFromMcpTool(
  server: string,
  tool: McpToolInfo,
): { contract: ToolContract; unsupported: string[] } {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(
    Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : [],
  );
  const args: Record<string, unknown> = {};
  const unsupported: string[] = [];
  for (const [name, schema] of Object.entries(props)) {
    if (!/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name)) {
      unsupported.push(name);
      continue;
    }
    const description = typeof schema.description === "string" ? { description: schema.description } : {};
    if (
      Array.isArray(schema.enum) &&
      schema.enum.every((v) => typeof v === "string") &&
      schema.enum.length > 0
    ) {
      args[name] = { type: "enum", allowed: schema.enum, required: required.has(name), ...description };
      continue;
    }
    const t = typeof schema.type === "string" ? TYPE_MAP[schema.type] : undefined;
    if (t === undefined) {
      unsupported.push(name);
      continue;
    }
    args[name] = { type: t, required: required.has(name), ...description };
  }
  const hash = mcpToolHash(tool);
  const safe = `${server}__${tool.name}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  const contract = ToolContractSchema.parse({
    tool: {
      name: safe,
      version: `mcp-${hash.slice(7, 19)}`,
      description: (tool.description ?? tool.name).slice(0, 4096) || tool.name,
      dispatch: "mcp",
    },
    args,
    mcp: { server, tool: tool.name },
    output: { format: "json", schema: { type: "object" } },
  });
  return { contract, unsupported };
}
