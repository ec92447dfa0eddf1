// From an execution ticket to a result the agent may see. The executor is chosen by
// the contract's backend (exec → process, http → http, mcp → file, database or an MCP
// upstream by its server: execute-routes.ts), the invocation is built from
// the contract's template by the executors layer, and the raw output is parsed and
// validated against the contract's output schema before it leaves the sidecar: the
// agent gets typed, checked data, never the executor's raw buffers.

import type { ResourceUsage } from "../context/index.js";
import { agentErrorText, type TaintLabel } from "../contracts/index.js";
import {
  bindingForContract,
  type CallOptions,
  type DatabaseOutput,
  type ExecutionResult,
  type FileOutput,
  type HttpOutput,
  type McpOutput,
  type ProcessOutput,
} from "../executors/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import type { RuntimeExecutors } from "../runtime/index.js";
import { type CompiledTool, parseOutput, type ToolClassification } from "../tools/index.js";
import {
  classifyRoute,
  databaseBinding,
  type ExecutorDeclarations,
  fileBinding,
  routeOf,
} from "./execute-routes.js";

export type ExecutionView =
  | {
      ok: true;
      output: unknown;
      outputHash: string | null;
      durationMs: number;
      exitCode?: number | null;
      httpStatus?: number | null;
    }
  | {
      ok: false;
      code: string;
      message: string;
      status?: string;
      exitCode?: number | null;
      httpStatus?: number | null;
    };

export interface RunOutcome {
  view: ExecutionView;
  /** The parsed output (for the Gate's provenance index), when the call succeeded. */
  data?: unknown;
  evidenceId: string | null;
  outputHash: string | null;
  /** Taint labels of the output (empty when nothing was produced). */
  taint: TaintLabel[];
  /** What the execution used (network, filesystem): reported with the result to the Gate. */
  usage?: ResourceUsage;
}

export interface ToolRunnerOptions {
  /** The runtime's executors (built by the composition root); an absent one serves nothing. */
  executors: RuntimeExecutors;
  /** Environment variable names process contracts may receive (bindingForContract's processEnv). */
  processEnv?: readonly string[];
  /** Declared database statements and MCP upstreams (the sidecar configuration). */
  declarations?: ExecutorDeclarations;
}

type AnyResult = ExecutionResult<unknown>;
type Served = { r: AnyResult; raw: (o: unknown) => Buffer } | { none: string };

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** The bytes a file operation hands to the contract's output parser (a JSON document). */
function fileJson(o: FileOutput): Buffer {
  if (o.op === "read") return json(o.content.toString("utf8"));
  if (o.op === "list") return json(o.entries);
  if (o.op === "write") return json({ bytes: o.bytes, created: o.created });
  return json({ deleted: true });
}

/** Runs contract-named tools; knows which backends this deployment can execute. */
export class ToolRunner {
  readonly #x: RuntimeExecutors;
  readonly #processEnv: readonly string[] | undefined;
  readonly #decl: ExecutorDeclarations;
  readonly #bindings = new WeakMap<CompiledTool, unknown>();

  constructor(options: ToolRunnerOptions) {
    this.#x = options.executors;
    this.#processEnv = options.processEnv;
    this.#decl = options.declarations ?? { statements: {}, upstreams: [], file: false };
  }

  /** The tool class and action the Gate sees for a contract in this deployment. */
  classify(tool: CompiledTool): ToolClassification {
    return classifyRoute(tool, this.#decl);
  }

  /** Why a tool cannot be executed here, or undefined when it can. */
  unsupported(tool: CompiledTool): string | undefined {
    const r = routeOf(tool, this.#decl);
    if (r.kind === "none") return r.why;
    if (r.kind === "process" && this.#x.process === undefined)
      return "no process executor is configured (executors.process)";
    if (r.kind === "http" && this.#x.http === undefined)
      return "no http executor is configured (executors.http)";
    if (r.kind === "file" && !this.#decl.file) return "no file executor is configured (executors.file)";
    if (r.kind === "mcp" && this.#x.mcp === undefined)
      return "no MCP upstreams are configured (executors.mcp)";
    return undefined;
  }

  #binding<B>(tool: CompiledTool, make: () => B): B {
    let b = this.#bindings.get(tool) as B | undefined;
    if (b === undefined) {
      b = make();
      this.#bindings.set(tool, b);
    }
    return b;
  }

  async #serve(ticket: ExecutionTicket, tool: CompiledTool, opts: CallOptions): Promise<Served> {
    const route = routeOf(tool, this.#decl);
    const why = this.unsupported(tool);
    if (why !== undefined) return { none: why };
    const contract = () =>
      bindingForContract(tool, this.#processEnv !== undefined ? { processEnv: this.#processEnv } : {});
    switch (route.kind) {
      case "process": {
        const b = this.#binding(tool, contract);
        if (b.kind !== "process" || !this.#x.process) break;
        return {
          r: await this.#x.process.execute(ticket, b.binding, opts),
          raw: (o) => (o as ProcessOutput).stdout,
        };
      }
      case "http": {
        const b = this.#binding(tool, contract);
        if (b.kind !== "http" || !this.#x.http) break;
        return { r: await this.#x.http.execute(ticket, b.binding, opts), raw: (o) => (o as HttpOutput).body };
      }
      case "file": {
        const ex = this.#x.file();
        if (ex === undefined) break;
        const b = this.#binding(tool, () => fileBinding(tool, route.op));
        return { r: await ex.execute(ticket, b, opts), raw: (o) => fileJson(o as FileOutput) };
      }
      case "database": {
        const ex = this.#x.database(route.statement.connection);
        if (ex === undefined) break;
        const b = this.#binding(tool, () => databaseBinding(tool, route.statement));
        const raw = (o: unknown) =>
          json({ rows: (o as DatabaseOutput).rows, changes: (o as DatabaseOutput).changes });
        return { r: await ex.execute(ticket, b, opts), raw };
      }
      case "mcp": {
        const b = this.#binding(tool, contract);
        if (b.kind !== "mcp" || !this.#x.mcp) break;
        return {
          r: await this.#x.mcp.execute(ticket, b.binding, opts),
          raw: (o) => json((o as McpOutput).result),
        };
      }
    }
    return { none: "no executor serves this tool" };
  }

  /** Executes a ticket. Journal faults (evidence cannot be written) propagate as thrown errors. */
  async run(ticket: ExecutionTicket, tool: CompiledTool, opts: CallOptions): Promise<RunOutcome> {
    const served = await this.#serve(ticket, tool, opts);
    if ("none" in served) {
      return {
        view: { ok: false, code: "ERR_SERVER_NO_EXECUTOR", message: served.none },
        evidenceId: null,
        outputHash: null,
        taint: [],
      };
    }
    const { r, raw } = served;
    const exit = r.evidence?.exit;
    const exitInfo = {
      ...(exit?.code !== undefined && exit.code !== null ? { exitCode: exit.code } : {}),
      ...(exit?.http_status !== undefined && exit.http_status !== null
        ? { httpStatus: exit.http_status }
        : {}),
    };
    const evidenceId = r.evidence?.evidence_id ?? null;
    const outputHash = r.evidence?.output_hash ?? null;
    const usage = r.usage !== undefined ? { usage: r.usage } : {};
    if (!r.ok) {
      // The agent reads a cleaned first line (no internal paths, stack frames or secret
      // variable names; the evidence keeps the detail), and text that may quote the tool's
      // output is tainted as tool output (issue 17 #8).
      return {
        view: {
          ok: false,
          code: r.code,
          message: agentErrorText(r.message),
          ...(r.evidence ? { status: r.evidence.status } : {}),
          ...exitInfo,
        },
        evidenceId,
        outputHash,
        taint: [{ source: "tool-output", origin: tool.name }],
        ...usage,
      };
    }
    const parsed = parseOutput(tool, raw(r.output));
    if (!parsed.ok) {
      return {
        view: {
          ok: false,
          code: parsed.code,
          message: agentErrorText(parsed.message),
          status: "output_invalid",
          ...exitInfo,
        },
        evidenceId,
        outputHash,
        taint: r.taint,
        ...usage,
      };
    }
    return {
      view: { ok: true, output: parsed.value, outputHash, durationMs: r.evidence.duration_ms, ...exitInfo },
      data: parsed.value,
      evidenceId,
      outputHash,
      taint: r.taint,
      ...usage,
    };
  }
}
