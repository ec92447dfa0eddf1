// Library mode: a governed call inside the process, over a runtime built by the one
// composition root (`composeRuntime`). The path is the ORGA loop's: the contract catalog
// checks and classifies the structured arguments (`contractCatalog`), the Gate decides
// and journals (a step-up waits in `runtime.approvals`, bounded), the ticket is redeemed
// by the executor route, and the output is reported back with `recordResult` so its
// taint and value provenance enter the run's session before the framework sees it.
// Only structured arguments reach the Gate: no rationale, no chat, no original prompt.
import {
  AdapterError,
  type DecisionId,
  type GateRequestInput,
  type Sha256Hash,
  sha256Of,
  type TaintLabel,
  taskOutcomeOf,
  timedScope,
  WardenError,
} from "../contracts/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import {
  type ContractSource,
  contractCatalog,
  type ExecutorRoute,
  type GovernedResult,
  type ToolCatalog,
} from "../loop/index.js";
import type { Runtime } from "../runtime/index.js";
import {
  type CompiledTool,
  classifyContract,
  type ModelTool,
  type ToolClassification,
  toModelTool,
} from "../tools/index.js";
import { contractRoute } from "./library-executor.js";
import { deniedOutcome, faultOutcome, type GovernedOutcome } from "./outcome.js";
import { type CallOptions, checkWait, type GovernedTarget, RunOnce, TaintCarry } from "./target.js";

export interface LibraryOptions {
  /** A runtime from `composeRuntime` (its Gate, approvals, contracts and executors). */
  runtime: Runtime;
  /** The principal the agent acts as (one of the Gate configuration's principals). */
  principalId: string;
  /** A run the runtime started for this principal; without it one is started on the first call. */
  runId?: string;
  /**
   * The user's request, for the run started on the first call: the trusted origin of flow
   * control (docs/threat-model.md#flow-control). Without it nothing is vouched for by the
   * user: every target taken from a tool's output is denied by the flow rules.
   */
  originalRequest?: string;
  /** The Gate request class/action of a contract (default: the contracts layer's classification). */
  classify?: (tool: CompiledTool) => ToolClassification;
  /** Executes a ticket (default: the runtime's http and process executors by the contract's backend). */
  route?: ExecutorRoute<ExecutionTicket>;
  /** How long a call may wait for a step-up or deferral, at most (default 60 s); then it is denied. */
  stepUpWaitMs?: number;
}

export class LibraryTarget implements GovernedTarget {
  readonly mode = "library" as const;
  readonly #o: LibraryOptions;
  readonly #source: ContractSource;
  readonly #catalog: ToolCatalog;
  readonly #route: ExecutorRoute<ExecutionTicket>;
  readonly #waitMs: number;
  readonly #taint = new TaintCarry();
  readonly #run: RunOnce;

  constructor(o: LibraryOptions) {
    const registry = o.runtime.contracts;
    if (registry === undefined)
      throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", "the runtime has no contracts to govern");
    this.#o = o;
    this.#waitMs = checkWait(o.stepUpWaitMs);
    this.#source = { get: (n) => registry.get(n), names: () => registry.names() };
    this.#catalog = contractCatalog(this.#source, { classify: o.classify ?? classifyContract });
    this.#route = o.route ?? contractRoute((n) => registry.get(n), o.runtime.executors);
    const start = o.originalRequest !== undefined ? { originalRequest: o.originalRequest } : {};
    this.#run = new RunOnce(async () => (await o.runtime.startRun(o.principalId, start)).runId, o.runId);
  }

  modelTool(name: string): ModelTool | undefined {
    const tool = this.#source.get(name);
    return tool === undefined ? undefined : toModelTool(tool);
  }

  /** The run the calls are made in (started on first use). */
  runId(): Promise<string> {
    return this.#run.get();
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<GovernedOutcome> {
    const outcome = await this.#call(tool, args, options);
    this.#taint.observe(outcome);
    return outcome;
  }

  async #call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<GovernedOutcome> {
    const resolved = this.#catalog.resolve(tool, args);
    if (!resolved.ok)
      return { kind: "denied", code: resolved.code, reasonCodes: [resolved.code], decisionId: null };
    let runId: string;
    try {
      runId = await this.runId();
    } catch (err) {
      // No run (a trust quarantine refuses new runs, a store is down): nothing is decided.
      return faultOutcome(err instanceof WardenError ? err.code : "ERR_ADAPTER_GATE_FAULT", String(err));
    }
    const request: GateRequestInput = {
      principalId: this.#o.principalId,
      runId,
      toolClass: resolved.toolClass,
      action: resolved.action,
      tool: resolved.tool,
      parameters: resolved.parameters as GateRequestInput["parameters"],
      taintLabels: this.#taint.labels(),
      ...(options.traceId !== undefined ? { traceId: options.traceId } : {}),
    };
    // The caller's signal may serve many calls: the decision follows it only while it is
    // awaited (`timedScope`, not `AbortSignal.any`, which leaves an entry per call in Node 20–24).
    const scope = timedScope(options.signal, this.#waitMs);
    let o: Awaited<ReturnType<Runtime["gate"]["authorize"]>>;
    try {
      o = await this.#o.runtime.gate.authorize(request, scope.signal);
    } catch (err) {
      return faultOutcome(err instanceof WardenError ? err.code : "ERR_ADAPTER_GATE_FAULT", String(err));
    } finally {
      scope.release();
    }
    if ((o.decision !== "allow" && o.decision !== "modify") || o.ticket === undefined)
      return deniedOutcome(o.decisionId, o.reasonCodes);
    return this.#execute(o.decisionId, o.decision, o.parameters, o.ticket, options.signal);
  }

  async #execute(
    decisionId: DecisionId,
    decision: "allow" | "modify",
    parameters: Record<string, unknown>,
    ticket: ExecutionTicket,
    signal: AbortSignal | undefined,
  ): Promise<GovernedOutcome> {
    let r: GovernedResult;
    try {
      r = await (this.#route(ticket, signal === undefined ? {} : { signal }) ?? noRoute());
    } catch (err) {
      r = {
        ok: false,
        code: err instanceof WardenError ? err.code : "ERR_ADAPTER_NO_EXECUTOR",
        message: String(err),
      };
    }
    const name = ticket.tool ?? "tool";
    // A failure's message may quote the tool: it is tool output, tainted as such (as the loop does).
    const labels: TaintLabel[] = r.ok ? r.taint : [{ source: "tool-output", origin: name }];
    const evidenceHash: Sha256Hash | undefined = r.evidence ? sha256Of(r.evidence) : undefined;
    let taint: TaintLabel[];
    try {
      const recorded = await this.#o.runtime.gate.recordResult(decisionId, {
        taintLabels: labels,
        data: r.ok ? r.output : { error: { code: r.code, message: r.message } },
        outcome: taskOutcomeOf(r.ok, r.ok ? undefined : r.code),
        ...(evidenceHash !== undefined ? { outputHash: evidenceHash } : {}),
        ...(r.usage !== undefined ? { usage: r.usage } : {}),
      });
      taint = recorded.taint;
    } catch (err) {
      // The session would miss this output's taint: the output is withheld (fail closed).
      return faultOutcome("ERR_ADAPTER_GATE_FAULT", `the result could not be recorded: ${String(err)}`, {
        decisionId,
      });
    }
    if (!r.ok) return faultOutcome(r.code, r.message, { decisionId, taint });
    return { kind: "allowed", decisionId, decision, output: r.output, taint, parameters };
  }
}

function noRoute(): Promise<GovernedResult> {
  return Promise.resolve({
    ok: false,
    code: "ERR_ADAPTER_NO_EXECUTOR",
    message: "no executor serves this tool",
  });
}
