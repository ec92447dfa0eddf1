// From an execution ticket to a result the agent may see. The executor is chosen by
// the contract's backend (exec → process, http → http), the invocation is built from
// the contract's template by the executors layer, and the raw output is parsed and
// validated against the contract's output schema before it leaves the sidecar: the
// agent gets typed, checked data, never the executor's raw buffers.
import { agentErrorText, type TaintLabel } from "../contracts/index.js";
import {
  bindingForContract,
  type CallOptions,
  type ContractBinding,
  type ExecutionResult,
  type HttpExecutor,
  type HttpOutput,
  type ProcessExecutor,
  type ProcessOutput,
} from "../executors/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import type { RuntimeExecutors } from "../runtime/index.js";
import { type CompiledTool, parseOutput } from "../tools/index.js";

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
}

export interface ToolRunnerOptions {
  /** The runtime's executors (built by the composition root); an absent one serves nothing. */
  executors: Pick<RuntimeExecutors, "http" | "process">;
  /** Environment variable names process contracts may receive (bindingForContract's processEnv). */
  processEnv?: readonly string[];
}

/** Runs contract-named tools; knows which backends this deployment can execute. */
export class ToolRunner {
  readonly #http: HttpExecutor | undefined;
  readonly #process: ProcessExecutor | undefined;
  readonly #processEnv: readonly string[] | undefined;
  readonly #bindings = new WeakMap<CompiledTool, ContractBinding>();

  constructor(options: ToolRunnerOptions) {
    this.#http = options.executors.http;
    this.#process = options.executors.process;
    this.#processEnv = options.processEnv;
  }

  /** Why a tool cannot be executed here, or undefined when it can. */
  unsupported(tool: CompiledTool): string | undefined {
    const kind = tool.backend.kind;
    if (kind === "exec" && this.#process === undefined)
      return "no process executor is configured (executors.process)";
    if (kind === "http" && this.#http === undefined) return "no http executor is configured (executors.http)";
    if (kind === "mcp") return "MCP-backed contracts are not served by the sidecar";
    return undefined;
  }

  #binding(tool: CompiledTool): ContractBinding {
    let b = this.#bindings.get(tool);
    if (b === undefined) {
      b = bindingForContract(tool, this.#processEnv !== undefined ? { processEnv: this.#processEnv } : {});
      this.#bindings.set(tool, b);
    }
    return b;
  }

  /** Executes a ticket. Journal faults (evidence cannot be written) propagate as thrown errors. */
  async run(ticket: ExecutionTicket, tool: CompiledTool, opts: CallOptions): Promise<RunOutcome> {
    const b = this.#binding(tool);
    let r: ExecutionResult<HttpOutput> | ExecutionResult<ProcessOutput>;
    let raw: (o: HttpOutput | ProcessOutput) => Buffer;
    if (b.kind === "process" && this.#process) {
      r = await this.#process.execute(ticket, b.binding, opts);
      raw = (o) => (o as ProcessOutput).stdout;
    } else if (b.kind === "http" && this.#http) {
      r = await this.#http.execute(ticket, b.binding, opts);
      raw = (o) => (o as HttpOutput).body;
    } else {
      return {
        view: { ok: false, code: "ERR_SERVER_NO_EXECUTOR", message: "no executor serves this tool" },
        evidenceId: null,
        outputHash: null,
        taint: [],
      };
    }
    const exit = r.evidence?.exit;
    const exitInfo = {
      ...(exit?.code !== undefined && exit.code !== null ? { exitCode: exit.code } : {}),
      ...(exit?.http_status !== undefined && exit.http_status !== null
        ? { httpStatus: exit.http_status }
        : {}),
    };
    const evidenceId = r.evidence?.evidence_id ?? null;
    const outputHash = r.evidence?.output_hash ?? null;
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
      };
    }
    return {
      view: { ok: true, output: parsed.value, outputHash, durationMs: r.evidence.duration_ms, ...exitInfo },
      data: parsed.value,
      evidenceId,
      outputHash,
      taint: r.taint,
    };
  }
}
