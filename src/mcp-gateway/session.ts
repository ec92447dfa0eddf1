// One client's governed session: a run bound to the principal its credential names.
// Lists show only what the principal's policy can ever allow; every call, resource read
// and prompt get is a Gate request in this run, executed with the Gate's ticket only, and
// its result recorded (taint and provenance into the run, the journal) before it is
// returned. A refusal reaches the client as a coded error, never as upstream output.
import type { AgentIdentityFacts, TaintLabel } from "../contracts/index.js";
import {
  bindingForContract,
  type ExecutionResult,
  type McpOutput,
  type McpRequestBinding,
  metadataAsTool,
} from "../executors/index.js";
import { type ExecutionTicket, ticketOf } from "../gate/index.js";
import type { CompiledTool } from "../tools/index.js";
import {
  GATEWAY_ACTIONS,
  type LocalEntry,
  NAME_SEPARATOR,
  type PromptEntry,
  type ToolEntry,
} from "./catalog.js";
import type { Gateway } from "./gateway.js";

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What a governed operation answers: the output with its decision, or a coded refusal. */
export type Governed =
  | { ok: true; output: Record<string, unknown>; decisionId: string; taint: TaintLabel[] }
  | { ok: false; code: string; message: string; decisionId: string | null };

export interface ListedResource {
  uri: string;
  name: string;
  description?: string;
  mimeType?: string;
}

export class GatewaySession {
  readonly principalId: string;
  /** The verified AgentPin identity of the session's credential, when it was one (policy sees it). */
  readonly identity: AgentIdentityFacts | undefined;
  #runId: string;
  readonly #gw: Gateway;
  readonly #resources = new Map<string, string>();
  readonly #prompts = new Map<string, PromptEntry>();

  constructor(gw: Gateway, principalId: string, runId: string, identity?: AgentIdentityFacts) {
    this.#gw = gw;
    this.principalId = principalId;
    this.identity = identity;
    this.#runId = runId;
  }

  /** The session's run (a new one after the old one was evicted for idleness). */
  get runId(): string {
    return this.#runId;
  }

  /** Ends the session's run (the client left); later calls are refused. */
  end(): void {
    this.#gw.runtime.sessions.end(this.#runId);
  }

  /** The principal's tools, after re-listing the upstreams (a rug pull drops a tool here). */
  async listTools(): Promise<ListedTool[]> {
    await this.#gw.refresh();
    return this.#gw.toolsFor(this.principalId).map((t) => ({
      name: t.exposed,
      description: t.kind === "tool" ? (t.info.description ?? "") : t.description,
      inputSchema: t.schema,
    }));
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<Governed> {
    // The Gate's request schema would silently drop a `__proto__` member; an argument that
    // carries one is refused here at the edge instead, like a malformed request.
    if (hasProtoKey(args, 0)) {
      return {
        ok: false,
        code: "ERR_TOOL_ARG_JSON_UNSAFE_KEY",
        message: "arguments hold a __proto__ key",
        decisionId: null,
      };
    }
    const entry: ToolEntry | LocalEntry | undefined = this.#gw.tool(name) ?? this.#gw.local(name);
    if (entry === undefined || !this.#gw.visible(this.principalId, entry.tool)) {
      const decisionId = await this.#attempt(name, entry?.tool, args, signal);
      return { ok: false, code: "ERR_MCP_NOT_FOUND", message: `no tool ${name}`, decisionId };
    }
    if (entry.kind === "local") return this.#local(entry, args, signal);
    const b = bindingForContract(entry.tool);
    const mcp = this.#gw.executor;
    if (b.kind !== "mcp") throw new Error("an upstream tool's contract is not an MCP contract");
    return this.#govern(entry.tool, args, signal, (t) => mcp.execute(t, b.binding, { signal }));
  }

  /**
   * Resources of the upstreams whose reads the principal may ever be allowed. Each one's
   * metadata is pinned and scanned like a tool (mcp-metadata.ts): a changed or flagged
   * resource is not listed and cannot be read.
   */
  async listResources(): Promise<ListedResource[]> {
    const out: ListedResource[] = [];
    this.#resources.clear();
    for (const server of Object.keys(this.#gw.loaded.config.upstreams)) {
      const contract = this.#gw.contract(`${server}${NAME_SEPARATOR}${GATEWAY_ACTIONS.read.action}`);
      if (contract === undefined || !this.#gw.visible(this.principalId, contract)) continue;
      let list: ListedResource[];
      try {
        list = await (await this.#gw.executor.upstreams.get(server)).listResources();
      } catch {
        continue;
      }
      for (const r of list) {
        if (this.#resources.has(r.uri)) continue;
        const check = await this.#gw.executor.compare(server, metadataAsTool("resource", r));
        if (!check.ok) continue;
        this.#resources.set(r.uri, server);
        out.push(r);
      }
    }
    return out;
  }

  async readResource(uri: string, signal: AbortSignal): Promise<Governed> {
    // Listed again on every read: a resource whose metadata changed since it was pinned is refused.
    await this.listResources();
    const server = this.#resources.get(uri);
    const contract =
      server === undefined
        ? undefined
        : this.#gw.contract(`${server}${NAME_SEPARATOR}${GATEWAY_ACTIONS.read.action}`);
    if (server === undefined || contract === undefined)
      return { ok: false, code: "ERR_MCP_NOT_FOUND", message: "no such resource", decisionId: null };
    const binding = requestBinding(contract, server, (p) => ({ kind: "resource", uri: String(p.uri) }));
    const mcp = this.#gw.executor;
    return this.#govern(contract, { uri }, signal, (t) => mcp.request(t, binding, { signal }));
  }

  async listPrompts(): Promise<PromptEntry[]> {
    const all = await this.#gw.prompts();
    const visible = all.filter((p) => this.#gw.visible(this.principalId, p.tool));
    for (const p of visible) this.#prompts.set(p.exposed, p);
    return visible;
  }

  async getPrompt(name: string, args: Record<string, string>, signal: AbortSignal): Promise<Governed> {
    if (!this.#prompts.has(name)) await this.listPrompts();
    const p = this.#prompts.get(name);
    if (p === undefined)
      return { ok: false, code: "ERR_MCP_NOT_FOUND", message: `no prompt ${name}`, decisionId: null };
    const binding = requestBinding(p.tool, p.server, (params) => ({
      kind: "prompt",
      name: p.info.name,
      arguments: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
    }));
    const mcp = this.#gw.executor;
    return this.#govern(p.tool, args, signal, (t) => mcp.request(t, binding, { signal }));
  }

  async #local(entry: LocalEntry, args: Record<string, unknown>, signal: AbortSignal): Promise<Governed> {
    return this.#govern(entry.tool, args, signal, async (t, taint) => {
      const r = await entry.provider.execute(t, entry.tool, {
        signal,
        principalId: this.principalId,
        runId: this.runId,
        taint,
      });
      return r.ok
        ? {
            ok: true,
            output: { result: { structuredContent: r.output }, isError: false },
            taint: r.taint,
            evidence: { output_hash: r.outputHash ?? null },
            ...(r.classification !== undefined ? { classification: r.classification } : {}),
          }
        : { ok: false, code: r.code, message: r.message };
    });
  }

  /**
   * A call for a tool this principal cannot see still goes to the Gate, so the attempt is
   * journaled (unknown names are denied `tool_unknown`); nothing is executed, whatever the
   * decision, and a granted ticket is closed at once.
   */
  async #attempt(
    name: string,
    tool: CompiledTool | undefined,
    parameters: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<string | null> {
    const c = tool === undefined ? GATEWAY_ACTIONS.call : this.#gw.classification(tool);
    const gate = this.#gw.runtime.gate;
    const o = await gate.authorize(
      {
        principalId: this.principalId,
        runId: this.#runId,
        toolClass: c.toolClass,
        action: c.action,
        tool: name.slice(0, 128),
        parameters,
      },
      signal,
    );
    if (o.decisionId !== null && ticketOf(o) !== undefined) await gate.recordResult(o.decisionId, {});
    return o.decisionId;
  }

  /** Gate → ticket → executor → recorded result. */
  async #govern(
    contract: CompiledTool,
    parameters: Record<string, unknown>,
    signal: AbortSignal,
    run: (ticket: ExecutionTicket, taint: TaintLabel[]) => Promise<Executed>,
  ): Promise<Governed> {
    const gate = this.#gw.runtime.gate;
    const classification = this.#gw.classification(contract);
    const ask = () =>
      gate.authorize(
        {
          principalId: this.principalId,
          runId: this.#runId,
          toolClass: classification.toolClass,
          action: classification.action,
          tool: contract.name,
          parameters,
          ...(this.identity !== undefined
            ? { identity: { ...this.identity, capabilities: [...this.identity.capabilities] } }
            : {}),
        },
        signal,
      );
    let outcome = await ask();
    if (outcome.decision === "deny" && outcome.reasonCodes.includes("run_unknown")) {
      // A long-lived client outlived its idle run: a new run for the same principal
      // (quarantine, trust and budgets are the principal's and carry over).
      this.#runId = (await this.#gw.runtime.startRun(this.principalId)).runId;
      outcome = await ask();
    }
    const ticket = ticketOf(outcome);
    const decisionId = outcome.decisionId;
    if (ticket === undefined || decisionId === null) {
      const why = [...outcome.reasonCodes, ...outcome.matchedRules.map((r) => r.id)].join(", ");
      return {
        ok: false,
        code: "ERR_MCP_DENIED",
        message: `${outcome.decision}: ${why || "no rule allows it"}`,
        decisionId,
      };
    }
    const r = await run(ticket, outcome.taint);
    if (!r.ok) {
      // The message reaches the client: an upstream's JSON-RPC error text is screened like output.
      const message = r.message.slice(0, 500);
      await gate.recordResult(decisionId, { error: message });
      return { ok: false, code: r.code, message, decisionId };
    }
    const data = r.output.result;
    const hash = r.evidence?.output_hash ?? null;
    const recorded = await gate.recordResult(decisionId, {
      taintLabels: r.taint,
      data,
      ...(hash !== null ? { outputHash: hash } : {}),
      ...(r.classification !== undefined ? { classification: r.classification } : {}),
    });
    return { ok: true, output: data, decisionId, taint: recorded.taint };
  }
}

type Executed =
  | (Pick<ExecutionResult<McpOutput> & { ok: true }, "ok" | "output" | "taint"> & {
      evidence?: { output_hash: `sha256:${string}` | null };
      classification?: string;
    })
  | { ok: false; code: string; message: string };

function requestBinding(
  contract: CompiledTool,
  server: string,
  build: McpRequestBinding["build"],
): McpRequestBinding {
  const t = contract.contract.tool;
  return { name: t.name, version: t.version, timeoutMs: t.timeout_seconds * 1000, server, build };
}

/** Whether a `__proto__` own key appears anywhere in a parsed JSON value (bounded walk). */
function hasProtoKey(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== "object") return false;
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((item) => hasProtoKey(item, depth + 1));
  for (const key of Object.keys(v)) {
    if (key === "__proto__" || hasProtoKey((v as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}
