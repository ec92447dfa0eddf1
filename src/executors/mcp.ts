// The MCP executor: governs tools of downstream MCP servers (stdio or Streamable
// HTTP, via the official SDK). A tool's name, description and input schema are
// what the model reads and trusts, so they are pinned on first use (TOFU) in a
// pin store; before every call the current definition is fetched and compared,
// and a changed tool (a "rug pull") is refused until an operator re-approves it.
// Pins, changes and approvals are journal events. Tools can also be wrapped as
// derived Warden contracts so they go through the same Gate as any other tool.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { z } from "zod";
import { ExecutorError, isSha256Hash, type Sha256Hash, sha256Of } from "../contracts/index.js";
import { type ToolContract, ToolContractSchema } from "../tools/index.js";
import { type McpConnection, type McpToolInfo, McpUpstreams } from "./mcp-connection.js";
import { metadataAsTool, parseMetadataKey } from "./mcp-metadata.js";
import { type McpFinding, scanMcpTool } from "./mcp-scan.js";
import {
  abortCode,
  type CallOptions,
  type ExecutionResult,
  type ExecutorDeps,
  type ExecutorErrorCode,
  runBound,
  type ToolIdentity,
} from "./runtime.js";

export {
  MCP_MAX_LIST_ENTRIES,
  McpConnection,
  type McpPromptInfo,
  type McpResourceInfo,
  type McpServerSpec,
  type McpToolInfo,
  McpUpstreams,
} from "./mcp-connection.js";

/** The pinned identity of a tool: what the model reads (name, description) and what it fills in (schema). */
export function mcpToolHash(tool: McpToolInfo): Sha256Hash {
  return sha256Of({ name: tool.name, description: tool.description ?? null, inputSchema: tool.inputSchema });
}

const PinFile = z.strictObject({
  version: z.literal(1),
  pins: z.record(z.string(), z.record(z.string(), z.string().refine(isSha256Hash))),
});

/**
 * Where tool definition pins live (the executor's port): McpPinStore (one node, in memory
 * or a file), or the table every replica shares (src/store-pg PgMcpPins), where the
 * first pin of a tool wins across replicas.
 */
export interface McpPinFirst {
  hash: Sha256Hash;
  pinnedNow: boolean;
}

export interface McpPins {
  get(server: string, tool: string): Sha256Hash | undefined | Promise<Sha256Hash | undefined>;
  /** Pins `hash` unless the tool is pinned already: the pin in force afterwards, and whether this call set it. */
  pinFirst(server: string, tool: string, hash: Sha256Hash): McpPinFirst | Promise<McpPinFirst>;
  /** The operator's approval: replaces the tool's pin. */
  set(server: string, tool: string, hash: Sha256Hash): void | Promise<void>;
}

/**
 * Tool definition pins per server, kept in a JSON file (written atomically, 0600). The
 * file is read again whenever it changed on disk, so an approval written by another
 * process (`warden mcp approve`) takes effect in a running gateway and is not overwritten
 * by its next pin.
 */
export class McpPinStore implements McpPins {
  readonly #path: string | undefined;
  #pins: Record<string, Record<string, Sha256Hash>> = {};
  #stamp = "";

  /** Without a path the store lives in memory only. */
  constructor(path?: string) {
    this.#path = path;
    this.#reload();
  }

  #reload(): void {
    if (this.#path === undefined || !existsSync(this.#path)) return;
    const st = statSync(this.#path);
    const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (stamp === this.#stamp) return;
    let parsed: z.infer<typeof PinFile>;
    try {
      parsed = PinFile.parse(JSON.parse(readFileSync(this.#path, "utf8")));
    } catch (err) {
      throw new ExecutorError("ERR_EXEC_MCP_PIN_STORE", `invalid MCP pin store: ${(err as Error).message}`);
    }
    this.#pins = parsed.pins as Record<string, Record<string, Sha256Hash>>;
    this.#stamp = stamp;
  }

  get(server: string, tool: string): Sha256Hash | undefined {
    this.#reload();
    const s = Object.hasOwn(this.#pins, server) ? this.#pins[server] : undefined;
    return s !== undefined && Object.hasOwn(s, tool) ? s[tool] : undefined;
  }

  pinFirst(server: string, tool: string, hash: Sha256Hash): McpPinFirst {
    const pinned = this.get(server, tool);
    if (pinned !== undefined) return { hash: pinned, pinnedNow: false };
    this.set(server, tool, hash);
    return { hash, pinnedNow: true };
  }

  set(server: string, tool: string, hash: Sha256Hash): void {
    this.#reload();
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
    const st = statSync(this.#path);
    this.#stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
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
  /** The upstreams (connected on first use), or live connections by name. */
  servers: McpUpstreams | Readonly<Record<string, McpConnection>>;
  pins: McpPins;
  maxOutputBytes?: number;
  maxTimeoutMs?: number;
  /**
   * A tool whose definition carries hidden instructions (mcp-scan.ts) when first seen:
   * `refuse` (default) leaves it unpinned and refuses it until an operator approves it;
   * `pin` pins it like any tool (the gateway then marks it critical for policy).
   */
  onFlagged?: "refuse" | "pin";
}

export interface McpOutput {
  /** The CallToolResult as returned by the server. */
  result: Record<string, unknown>;
  isError: boolean;
}

export type McpCheck =
  | { ok: true; tool: McpToolInfo; hash: Sha256Hash; pinnedNow: boolean; findings: McpFinding[] }
  | {
      ok: false;
      code: "ERR_EXEC_MCP_TOOL_UNKNOWN" | "ERR_EXEC_MCP_TOOL_CHANGED" | "ERR_EXEC_MCP_TOOL_FLAGGED";
      message: string;
      hash?: Sha256Hash;
      findings?: McpFinding[];
    };

export class McpExecutor {
  readonly #servers: McpUpstreams;
  readonly #pins: McpPins;
  readonly #maxBytes: number;
  readonly #maxTimeoutMs: number;
  readonly #onFlagged: "refuse" | "pin";
  readonly #deps: ExecutorDeps;

  constructor(options: McpExecutorOptions, deps: ExecutorDeps = {}) {
    this.#servers =
      options.servers instanceof McpUpstreams ? options.servers : McpUpstreams.of(options.servers);
    this.#pins = options.pins;
    this.#maxBytes = options.maxOutputBytes ?? 1024 * 1024;
    this.#maxTimeoutMs = options.maxTimeoutMs ?? 60_000;
    this.#onFlagged = options.onFlagged ?? "refuse";
    this.#deps = deps;
  }

  /** The declared upstreams. */
  get upstreams(): McpUpstreams {
    return this.#servers;
  }

  get maxOutputBytes(): number {
    return this.#maxBytes;
  }

  #server(name: string): Promise<McpConnection> {
    return this.#servers.get(name);
  }

  async #journal(type: string, body: Record<string, unknown>): Promise<void> {
    await this.#deps.journal?.append({ type, run_id: "warden-executors", body });
  }

  /** Compares a tool's current definition with its pin, pinning it on first use. */
  async check(server: string, tool: string, otherTools: readonly string[] = []): Promise<McpCheck> {
    const tools = await (await this.#server(server)).listTools();
    const info = tools.find((t) => t.name === tool);
    if (info === undefined) {
      return { ok: false, code: "ERR_EXEC_MCP_TOOL_UNKNOWN", message: `${server} has no tool ${tool}` };
    }
    return this.compare(server, info, otherTools);
  }

  /** Every tool of a server compared with its pin (one listing); see `compare`. */
  async checkAll(server: string, otherTools: readonly string[] = []): Promise<McpCheck[]> {
    const tools = await (await this.#server(server)).listTools();
    const out: McpCheck[] = [];
    for (const t of tools) out.push(await this.compare(server, t, otherTools));
    return out;
  }

  /**
   * The pin decision for a tool definition: a pinned tool must hash to its pin; an
   * unpinned one is scanned, pinned when clean (or when flagged tools are pinned), and
   * refused ERR_EXEC_MCP_TOOL_FLAGGED otherwise. An approved pin is the operator's word.
   */
  async compare(server: string, info: McpToolInfo, otherTools: readonly string[] = []): Promise<McpCheck> {
    const tool = info.name;
    const hash = mcpToolHash(info);
    const pinned = await this.#pins.get(server, tool);
    if (pinned === hash) return { ok: true, tool: info, hash, pinnedNow: false, findings: [] };
    if (pinned !== undefined) return this.#changed(server, tool, pinned, hash);
    const findings = scanMcpTool(info, otherTools);
    if (findings.length > 0) {
      const refused = this.#onFlagged === "refuse";
      await this.#journal("warden.executor.mcp_tool_flagged", {
        server,
        tool,
        tool_hash: hash,
        findings: findings.map((f) => ({ ...f, detail: f.detail.slice(0, 4096) })),
        refused,
      });
      if (refused) {
        return {
          ok: false,
          code: "ERR_EXEC_MCP_TOOL_FLAGGED",
          message: `${server}/${tool} carries hidden instructions (${findings[0]?.detail}); an operator must approve it`,
          hash,
          findings,
        };
      }
    }
    // A shared store may have been pinned by another replica since the read: that pin wins.
    // Of concurrent first sightings (here or on other replicas) one pins and journals it.
    const won = await this.#pins.pinFirst(server, tool, hash);
    if (won.hash !== hash) return this.#changed(server, tool, won.hash, hash);
    if (won.pinnedNow)
      await this.#journal("warden.executor.mcp_tool_pinned", { server, tool, tool_hash: hash });
    return { ok: true, tool: info, hash, pinnedNow: won.pinnedNow, findings };
  }

  async #changed(server: string, tool: string, pinned: Sha256Hash, hash: Sha256Hash): Promise<McpCheck> {
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

  /** Operator action: accept a tool's current definition (after review). Returns the new pin. */
  async approve(server: string, tool: string): Promise<Sha256Hash> {
    const info = await this.#listed(server, tool);
    if (info === undefined)
      throw new ExecutorError("ERR_EXEC_MCP_TOOL_UNKNOWN", `${server} has no tool ${tool}`);
    const hash = mcpToolHash(info);
    const previous = (await this.#pins.get(server, tool)) ?? null;
    await this.#pins.set(server, tool, hash);
    await this.#journal("warden.executor.mcp_tool_approved", {
      server,
      tool,
      tool_hash: hash,
      previous_hash: previous,
    });
    return hash;
  }

  /** A tool, or a resource or prompt by its pin key (`resource:<uri>`, `prompt:<name>`), as listed now. */
  async #listed(server: string, key: string): Promise<McpToolInfo | undefined> {
    const conn = await this.#server(server);
    const meta = parseMetadataKey(key);
    if (meta === undefined) return (await conn.listTools()).find((t) => t.name === key);
    const entries =
      meta.kind === "resource"
        ? (await conn.listResources()).map((r) => metadataAsTool("resource", r))
        : (await conn.listPrompts()).map((p) => metadataAsTool("prompt", p));
    return entries.find((e) => e.name === key);
  }

  /** Redeems a ticket for an upstream resource read or prompt get (bounded like a tool call). */
  request(
    ticket: unknown,
    binding: McpRequestBinding,
    opts: CallOptions = {},
  ): Promise<ExecutionResult<McpOutput>> {
    return runBound(
      ticket,
      {
        executor: "mcp",
        binding,
        defaultTaint: "mcp",
        maxTimeoutMs: this.#maxTimeoutMs,
        attempt: async (req, { signal }) => {
          const what = req.kind === "resource" ? "resources/read" : `prompts/get:${req.name}`;
          const inv = {
            kind: "mcp" as const,
            server: binding.server,
            tool: what.slice(0, 4096),
            tool_hash: null,
          };
          let result: Record<string, unknown>;
          try {
            const conn = await this.#server(binding.server);
            result =
              req.kind === "resource"
                ? await conn.readResource(req.uri, signal)
                : await conn.getPrompt(req.name, req.arguments, signal);
          } catch (err) {
            if (signal.aborted)
              return { invocation: inv, error: { code: abortCode(signal), message: `${what} aborted` } };
            const code =
              err instanceof ExecutorError ? (err.code as ExecutorErrorCode) : "ERR_EXEC_MCP_PROTOCOL";
            return { invocation: inv, error: { code, message: (err as Error).message } };
          }
          const raw = Buffer.from(JSON.stringify(result));
          if (raw.length > this.#maxBytes) {
            return {
              invocation: inv,
              error: {
                code: "ERR_EXEC_OUTPUT_TOO_LARGE",
                message: `${what} result over ${this.#maxBytes} bytes`,
              },
            };
          }
          const origin =
            req.kind === "resource" ? `${binding.server}:${req.uri}` : `${binding.server}/prompt:${req.name}`;
          return {
            invocation: inv,
            raw,
            output: { result, isError: false },
            contentType: "application/json",
            origin: origin.slice(0, 2048),
          };
        },
      },
      this.#deps,
      opts,
    );
  }

  /** Derived contracts for a server's tools (arguments the contract format cannot express are listed). */
  async wrapTools(server: string): Promise<{ contract: ToolContract; unsupported: string[] }[]> {
    const tools = await (await this.#server(server)).listTools();
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
            const code =
              err instanceof ExecutorError ? (err.code as ExecutorErrorCode) : "ERR_EXEC_MCP_PROTOCOL";
            return { invocation: inv, error: { code, message: (err as Error).message } };
          }
          if (!check.ok) {
            if (check.hash !== undefined) inv.tool_hash = check.hash;
            return { invocation: inv, error: { code: check.code, message: check.message } };
          }
          inv.tool_hash = check.hash;
          let result: Record<string, unknown>;
          try {
            const conn = await this.#server(binding.server);
            result = (await conn.callTool(binding.tool, args, signal)) as Record<string, unknown>;
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

/** A resource read or prompt get, built from a ticket's parameters. */
export type McpRequest =
  | { kind: "resource"; uri: string }
  | { kind: "prompt"; name: string; arguments: Record<string, string> };

export interface McpRequestBinding extends ToolIdentity {
  server: string;
  build(parameters: Readonly<Record<string, unknown>>): McpRequest;
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
    if (schema.type === "object" || schema.type === "array") {
      // Structured: validated against the pinned schema of this property (compiled strictly
      // at load; a schema that does not compile leaves the tool refused).
      args[name] = { type: "json", schema, required: required.has(name), ...description };
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
