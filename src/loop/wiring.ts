// Adapters from the real layers to the loop's ports: the contract registry becomes the
// model's tool list and the pre-Gate argument check; the Gate's authorize/recordResult
// become GatePort; a governed executor's result becomes an ExecutionOutcome (bindings
// from contracts to executors are the executors layer's `bindingForContract`). Each adapter only
// reshapes data: decisions, tickets and invocations still come from their own layers.
import { type Decision, type Sha256Hash, sha256Of, type TaintLabel } from "../contracts/index.js";
import {
  type CompiledTool,
  classifyContract,
  type ToolClassification,
  toModelTool,
  type ValidateOptions,
  validateArgs,
} from "../tools/index.js";
import type { ModelTool } from "./model.js";
import type {
  ExecutionOutcome,
  ExecutorPort,
  GatePort,
  LoopUsage,
  ResolvedCall,
  RunRef,
  TicketLike,
  ToolCatalog,
} from "./ports.js";
import type { LoopOptions } from "./types.js";

// ---------------------------------------------------------------------------------
// Contracts → ToolCatalog

export interface ContractSource {
  get(name: string): CompiledTool | undefined;
  names(): string[];
}

export { classifyContract, type ToolClassification };

export interface ContractCatalogOptions {
  classify?: (tool: CompiledTool) => ToolClassification;
  validateOptions?: ValidateOptions;
}

/** The model sees `toModelTool` of each contract; a proposal is checked with `validateArgs` before the Gate. */
export function contractCatalog(source: ContractSource, options: ContractCatalogOptions = {}): ToolCatalog {
  const classify = options.classify ?? classifyContract;
  const tools: ModelTool[] = source
    .names()
    .map((n) => source.get(n))
    .filter((t): t is CompiledTool => t !== undefined)
    .map((t) => toModelTool(t));
  return {
    modelTools: () => tools,
    resolve(name: string, args: Record<string, unknown>): ResolvedCall {
      const tool = source.get(name);
      if (tool === undefined)
        return { ok: false, code: "ERR_TOOL_UNKNOWN", message: `no tool named ${name.slice(0, 64)}` };
      const v = validateArgs(tool, args, options.validateOptions ?? {});
      if (!v.ok) return { ok: false, code: v.code, message: v.message };
      const { toolClass, action } = classify(tool);
      // The Gate validates again against the same contract; the loop passes the raw, checked arguments.
      return { ok: true, toolClass, action, tool: tool.name, parameters: { ...args } };
    },
  };
}

// ---------------------------------------------------------------------------------
// Gate → GatePort

/** The part of the Gate's outcome the loop reads (src/gate's GateOutcome satisfies it). */
export interface AuthorizeOutcome<T> {
  decisionId: string | null;
  decision: Decision;
  reasonCodes: readonly string[];
  matchedRules: readonly { id: string; reason?: string }[];
  parameters: Record<string, unknown>;
  ticket?: T;
}

/** The part of the Gate the loop drives (src/gate's Gate satisfies it). */
export interface AuthorizingGate<T> {
  authorize(raw: unknown, signal?: AbortSignal): Promise<AuthorizeOutcome<T>>;
  recordResult(
    decisionId: string,
    result: {
      taintLabels?: TaintLabel[];
      data?: unknown;
      outputHash?: Sha256Hash;
      usage?: Readonly<Record<string, number>>;
    },
  ): Promise<unknown>;
  readonly sessions?: { get(runId: string): { readonly quarantined: boolean } | undefined };
  /** Drops the pending result of a decision nothing will report (src/gate's Gate has it). */
  release?(decisionId: string): unknown;
  /** Meters a run's usage against its budgets; the reason codes of spent budgets (src/gate's Gate has it). */
  recordUsage?(runId: string, principalId: string, usage: LoopUsage): readonly string[];
}

export function gatePort<T extends TicketLike>(gate: AuthorizingGate<T>): GatePort<T> {
  return {
    async decide(request, options = {}) {
      const o = await gate.authorize(request, options.signal);
      const reasons = [
        ...o.reasonCodes,
        ...o.matchedRules.filter((r) => r.reason !== undefined).map((r) => `${r.id}: ${r.reason}`),
      ];
      return {
        decision: o.decision,
        decisionId: o.decisionId ?? "unrecorded",
        reasons,
        policyIds: o.matchedRules.map((r) => r.id),
        ...(o.ticket !== undefined ? { ticket: o.ticket } : {}),
        ...(o.decision === "modify" ? { parameters: o.parameters } : {}),
        ...(gate.sessions?.get(request.runId)?.quarantined ? { quarantined: true } : {}),
      };
    },
    release(decisionId) {
      if (decisionId !== "unrecorded") gate.release?.(decisionId);
    },
    async recordResult(decisionId, result) {
      if (decisionId === "unrecorded") return;
      await gate.recordResult(decisionId, {
        taintLabels: [...result.taintLabels],
        data: result.output,
        ...(result.evidenceHash !== undefined ? { outputHash: result.evidenceHash } : {}),
        ...(result.outcome !== undefined ? { outcome: result.outcome } : {}),
        ...(result.usage !== undefined ? { usage: result.usage } : {}),
      });
    },
    ...(gate.recordUsage !== undefined
      ? {
          async recordUsage(run: RunRef, usage: LoopUsage) {
            return gate.recordUsage!(run.runId, run.principalId, usage);
          },
        }
      : {}),
  };
}

// ---------------------------------------------------------------------------------
// Executors → ExecutorPort

/** The shape every governed executor returns (src/executors' ExecutionResult satisfies it). */
export type GovernedResult =
  | {
      ok: true;
      output: unknown;
      evidence: { duration_ms: number; output_hash: Sha256Hash | null };
      taint: TaintLabel[];
      usage?: Readonly<Record<string, number>>;
    }
  | {
      ok: false;
      code: string;
      message: string;
      evidence?: { duration_ms: number; output_hash: Sha256Hash | null };
      usage?: Readonly<Record<string, number>>;
    };

/** Routes a ticket to the executor (and binding) for its tool; `undefined` means no executor serves it. */
export type ExecutorRoute<T> = (
  ticket: T,
  options: { signal?: AbortSignal },
) => Promise<GovernedResult> | undefined;

export function executorPort<T extends TicketLike>(route: ExecutorRoute<T>): ExecutorPort<T> {
  return {
    async execute(ticket, options = {}): Promise<ExecutionOutcome> {
      const p = route(ticket, options.signal === undefined ? {} : { signal: options.signal });
      if (p === undefined)
        return { ok: false, code: "ERR_LOOP_NO_EXECUTOR", message: "no executor serves this tool" };
      const r = await p;
      const evidenceHash = r.evidence ? sha256Of(r.evidence) : undefined;
      const durationMs = r.evidence?.duration_ms;
      const usage = r.usage !== undefined ? { usage: r.usage } : {};
      if (r.ok) {
        return {
          ok: true,
          output: r.output,
          taintLabels: r.taint,
          ...(evidenceHash ? { evidenceHash } : {}),
          ...(durationMs !== undefined ? { durationMs } : {}),
          ...usage,
        };
      }
      return {
        ok: false,
        code: r.code,
        message: r.message,
        ...(evidenceHash ? { evidenceHash } : {}),
        ...(durationMs !== undefined ? { durationMs } : {}),
        ...usage,
      };
    },
  };
}

// ---------------------------------------------------------------------------------
// A composed runtime → the loop's ports

/**
 * What the loop needs from a runtime built by the composition root (src/runtime's
 * composeRuntime) and its entry point: the Gate, the journal, the model's tool catalog,
 * the executor port, the principal it acts as, and run creation.
 */
export interface GovernedRuntime<T extends TicketLike> {
  readonly gate: AuthorizingGate<T>;
  readonly journal: LoopOptions<T>["journal"];
  readonly catalog: ToolCatalog;
  readonly executor: ExecutorPort<T>;
  readonly principalId: string;
  startRun(principalId: string, options?: { parentRun?: string }): Promise<{ readonly runId: string }>;
}

export type RuntimePorts<T extends TicketLike> = Pick<
  LoopOptions<T>,
  "gate" | "executor" | "journal" | "tools" | "principalId"
> & { runId: string };

/**
 * The loop's ports over a runtime, with a run the runtime started for the principal (its
 * persisted quarantine applies; `parentRun` carries a parent run's taint in). The loop
 * wires nothing of its own.
 */
export async function runtimePorts<T extends TicketLike>(
  rt: GovernedRuntime<T>,
  options: { parentRun?: string; runId?: string } = {},
): Promise<RuntimePorts<T>> {
  // A run the caller already started through the same runtime (e.g. to bind an ask port to it).
  const run =
    options.runId !== undefined
      ? { runId: options.runId }
      : await rt.startRun(
          rt.principalId,
          options.parentRun !== undefined ? { parentRun: options.parentRun } : {},
        );
  return {
    gate: gatePort<T>(rt.gate),
    executor: rt.executor,
    journal: rt.journal,
    tools: rt.catalog,
    principalId: rt.principalId,
    runId: run.runId,
  };
}
