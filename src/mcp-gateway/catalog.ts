// What the gateway serves: every upstream tool as a derived Warden contract (so the Gate
// validates its arguments and policy sees it like any tool), every upstream resource
// read and prompt as a governed action, and the tools of local providers. A tool is
// pinned on first sight by the MCP executor (rug-pull logic); a changed or flagged one
// is kept out of the catalog (its calls are refused), with the event in the journal.
import {
  contractFromMcpTool,
  type McpCheck,
  type McpExecutor,
  type McpFinding,
  type McpPromptInfo,
  type McpToolInfo,
  metadataAsTool,
  metadataKey,
  scanMcpTool,
} from "../executors/index.js";
import {
  type CompiledTool,
  compileContract,
  type ToolClassification,
  ToolContractSchema,
} from "../tools/index.js";
import type { LocalToolProvider } from "./providers.js";

/** Separates the upstream's name from its tool's in the names a client sees. */
export const NAME_SEPARATOR = "__";

export interface ToolEntry {
  kind: "tool";
  /** The name the client sees and the contract's name: `<upstream>__<tool>`. */
  exposed: string;
  server: string;
  info: McpToolInfo;
  /** The input schema shown to clients: the pinned one, cut to what the contract can express. */
  schema: Record<string, unknown>;
  tool: CompiledTool;
  findings: McpFinding[];
}

export interface LocalEntry {
  kind: "local";
  exposed: string;
  provider: LocalToolProvider;
  tool: CompiledTool;
  classification: ToolClassification;
  description: string;
  schema: Record<string, unknown>;
}

export interface Refusal {
  server: string;
  tool: string;
  code: string;
  message: string;
}

const READ_CONTRACT = "resource_read";
const PROMPT_CONTRACT = "prompt_get";

/** The actions the gateway's own requests are classified as (policy matches these). */
export const GATEWAY_ACTIONS = {
  call: { toolClass: "mcp", action: "call" },
  read: { toolClass: "mcp", action: READ_CONTRACT },
  prompt: { toolClass: "mcp", action: PROMPT_CONTRACT },
} as const satisfies Record<string, ToolClassification>;

function compiled(contract: unknown): CompiledTool {
  const r = compileContract(ToolContractSchema.parse(contract));
  if (!r.ok) throw new Error(`derived contract does not compile: ${r.code}: ${r.message}`);
  return r.tool;
}

/** The contract of an upstream's resource reads: one `uri` argument policy can match. */
export function resourceContract(server: string): CompiledTool {
  return compiled({
    tool: {
      name: `${server}${NAME_SEPARATOR}${READ_CONTRACT}`,
      version: "1",
      description: `read a resource of ${server}`,
    },
    args: { uri: { type: "string", required: true, max_length: 2048 } },
    mcp: { server, tool: READ_CONTRACT },
    output: { format: "json", schema: { type: "object" } },
  });
}

export interface PromptEntry {
  kind: "prompt";
  /** `<upstream>__prompt_<name>`: the contract's name and the name clients see. */
  exposed: string;
  server: string;
  info: McpPromptInfo;
  tool: CompiledTool;
}

const PROMPT_PREFIX = "prompt_";

/** The contract of one upstream prompt: its declared arguments, all strings. */
export function promptEntry(server: string, info: McpPromptInfo): PromptEntry | undefined {
  const args: Record<string, unknown> = {};
  for (const a of (info.arguments ?? []).slice(0, 64)) {
    if (!/^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(a.name)) return undefined;
    args[a.name] = { type: "string", required: a.required === true, max_length: 8192 };
  }
  const exposed = `${server}${NAME_SEPARATOR}${PROMPT_PREFIX}${info.name}`
    .replace(/[^A-Za-z0-9_-]/g, "_")
    .slice(0, 64);
  const tool = compiled({
    tool: {
      name: exposed,
      version: "1",
      description: (info.description ?? info.name).slice(0, 4096) || info.name,
    },
    args,
    mcp: { server, tool: `${PROMPT_CONTRACT}:${info.name}` },
    output: { format: "json", schema: { type: "object" } },
  });
  return { kind: "prompt", exposed, server, info, tool };
}

/** The pinned schema restricted to the properties the derived contract accepts. */
function exposedSchema(info: McpToolInfo, tool: CompiledTool): Record<string, unknown> {
  const props = (info.inputSchema.properties ?? {}) as Record<string, unknown>;
  const kept = Object.fromEntries(Object.entries(props).filter(([k]) => tool.args.has(k)));
  const required = Array.isArray(info.inputSchema.required)
    ? (info.inputSchema.required as string[]).filter((k) => tool.args.has(k))
    : [];
  return { type: "object", properties: kept, ...(required.length > 0 ? { required } : {}) };
}

export interface UpstreamCatalog {
  tools: ToolEntry[];
  refused: Refusal[];
}

/**
 * Lists, pins and scans every tool of every upstream. Shadowing is judged against the
 * other upstreams' tool names; a tool whose required arguments the contract format cannot
 * express (an unusable name or type, a structured argument whose schema is unsafe or does
 * not compile strictly) is refused here rather than shown and failing later.
 */
export async function discoverTools(
  executor: McpExecutor,
  servers: readonly string[],
  flagged: "refuse" | "policy",
): Promise<UpstreamCatalog> {
  const listed = new Map<string, McpToolInfo[]>();
  const refused: Refusal[] = [];
  for (const server of servers) {
    try {
      listed.set(server, await (await executor.upstreams.get(server)).listTools());
    } catch (err) {
      refused.push({
        server,
        tool: "*",
        code: (err as { code?: string }).code ?? "ERR_EXEC_MCP_PROTOCOL",
        message: (err as Error).message,
      });
    }
  }
  const tools: ToolEntry[] = [];
  for (const [server, infos] of listed) {
    const others = [...listed].filter(([s]) => s !== server).flatMap(([, ts]) => ts.map((t) => t.name));
    for (const info of infos) {
      const check: McpCheck = await executor.compare(server, info, others);
      if (!check.ok) {
        refused.push({ server, tool: info.name, code: check.code, message: check.message });
        continue;
      }
      // Under `policy` a flagged tool stays critical every time it is listed, not only when
      // first pinned; under `refuse` a pinned tool was clean or approved by an operator.
      const findings = flagged === "policy" ? scanMcpTool(info, others) : check.findings;
      const entry = toolEntry(server, info, findings);
      if ("refusal" in entry) refused.push(entry.refusal);
      else tools.push(entry);
    }
  }
  return { tools, refused };
}

function toolEntry(
  server: string,
  info: McpToolInfo,
  findings: McpFinding[],
): ToolEntry | { refusal: Refusal } {
  const { contract, unsupported } = contractFromMcpTool(server, info);
  const required = Array.isArray(info.inputSchema.required) ? (info.inputSchema.required as string[]) : [];
  const missing = unsupported.filter((u) => required.includes(u));
  if (missing.length > 0) {
    return {
      refusal: {
        server,
        tool: info.name,
        code: "ERR_EXEC_PARAMS_INVALID",
        message: `required arguments the contract format cannot express: ${missing.join(", ")}`,
      },
    };
  }
  // A flagged tool served under `flagged: policy` is critical, so rules can single it out.
  const withTier =
    findings.length > 0
      ? { ...contract, tool: { ...contract.tool, risk_tier: "critical" as const } }
      : contract;
  // A structured argument whose pinned schema is unsafe or does not compile strictly
  // leaves the tool refused (its code says which rule), never served unchecked.
  const c = compileContract(ToolContractSchema.parse(withTier));
  if (!c.ok) return { refusal: { server, tool: info.name, code: c.code, message: c.message } };
  const tool = c.tool;
  return {
    kind: "tool",
    exposed: tool.name,
    server,
    info,
    schema: exposedSchema(info, tool),
    tool,
    findings,
  };
}

/**
 * Every prompt of every upstream as a governed contract (an upstream that fails is skipped).
 * A prompt's metadata is pinned and scanned like a tool's (mcp-metadata.ts): a changed or
 * flagged prompt is refused, not served.
 */
export async function discoverPrompts(
  executor: McpExecutor,
  servers: readonly string[],
): Promise<{ prompts: PromptEntry[]; refused: Refusal[] }> {
  const out: PromptEntry[] = [];
  const refused: Refusal[] = [];
  for (const server of servers) {
    let prompts: McpPromptInfo[];
    try {
      prompts = await (await executor.upstreams.get(server)).listPrompts();
    } catch {
      continue;
    }
    for (const p of prompts) {
      const check = await executor.compare(server, metadataAsTool("prompt", p));
      if (!check.ok) {
        refused.push({ server, tool: metadataKey("prompt", p), code: check.code, message: check.message });
        continue;
      }
      const e = promptEntry(server, p);
      if (e !== undefined && !out.some((o) => o.exposed === e.exposed)) out.push(e);
    }
  }
  return { prompts: out, refused };
}
