// The one path every executor takes: redeem the Gate's ticket (nothing runs
// without one), ask the tool's circuit breaker, build the invocation from the
// ticket's frozen parameters only, run it under a deadline and the caller's
// cancellation signal, then seal what happened into an evidence envelope and a
// DARE ToolResponseEnvelope and journal both. Executors supply only the attempt.

import {
  ERROR_CODES,
  ExecutorError,
  isoTime,
  newTraceId,
  type Sha256Hash,
  TaintLabel,
  type TaintSource,
  type ToolResponseEnvelope,
  uuidv7,
  WardenError,
} from "../contracts/index.js";
import { type ExecutionTicket, redeemTicket, type TicketFailureCode } from "../gate/index.js";
import type { BreakerRegistry, BreakerTransition } from "./breaker.js";
import {
  type DareDeployment,
  EVIDENCE_SCHEMA,
  EvidenceEnvelope,
  type ExecutionStatus,
  type Invocation,
  parametersHash,
  rawOutputHash,
  toolResponseFor,
} from "./evidence.js";
import { checkObligations, maskOutput, OBLIGATIONS_EVENT, type ObligationPorts } from "./obligations.js";

export type ExecutorErrorCode = (typeof ERROR_CODES.executor)[number];
export type ExecFailureCode = ExecutorErrorCode | TicketFailureCode;

/**
 * What one execution used, in the OATS §9.2 resources the run's budgets meter (the same
 * names as the context layer's ResourceUsage): network requests and bytes, bytes and
 * files written. The caller reports it with the result (Gate.recordResult's `usage`).
 */
export type ResourceUsage = Partial<
  Record<"networkRequests" | "networkBytes" | "fsBytesWritten" | "fsFilesWritten", number>
>;

/** What executors need from a journal: `Journal.append` fits. */
export interface ExecutorJournal {
  append(event: { type: string; run_id: string; trace_id?: string; body: Record<string, unknown> }): unknown;
}

/** Dependencies every executor takes. */
export interface ExecutorDeps {
  journal?: ExecutorJournal;
  breakers?: BreakerRegistry;
  /** Facts for the DARE response record. */
  dare?: DareDeployment;
  /** The agent this runtime executes for (recorded in every envelope). */
  agentId?: string;
  /** What obligations need from the runtime (the notifier, shared rate windows). */
  obligations?: ObligationPorts;
  /** The replay recorder: receives the raw output bytes of every execution, keyed by their output_hash. */
  snapshots?: ResponseSnapshots;
}

/** Where response snapshots go (src/evidence's store); `put` must not throw. */
export interface ResponseSnapshots {
  put(bytes: Uint8Array, hash: Sha256Hash): void;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the tool's timeout, never upwards of the executor's maximum. */
  timeoutMs?: number;
  traceId?: string;
  /** The human on whose behalf the agent acts, when known. */
  userId?: string;
}

/** The tool facts an executor needs besides the invocation. */
export interface ToolIdentity {
  name: string;
  version: string;
  /** Taint sources the contract adds to the executor's own. */
  taint?: readonly TaintSource[];
  /** Default deadline for this tool (ms). */
  timeoutMs?: number;
}

export interface ExecutionSuccess<O> {
  ok: true;
  output: O;
  evidence: EvidenceEnvelope;
  response: ToolResponseEnvelope;
  taint: TaintLabel[];
  /** What the execution used: the caller reports it with the result (Gate.recordResult). */
  usage?: ResourceUsage;
}

export interface ExecutionFailure<O> {
  ok: false;
  code: ExecFailureCode;
  message: string;
  /** Present once the ticket was redeemed: refusals after that point are evidence too. */
  evidence?: EvidenceEnvelope;
  response?: ToolResponseEnvelope;
  /** The output, when the tool ran and failed (non-zero exit, error status). */
  output?: O;
  /** What the execution used before it failed (a failed download still moved bytes). */
  usage?: ResourceUsage;
}

export type ExecutionResult<O> = ExecutionSuccess<O> | ExecutionFailure<O>;

/** What an executor's attempt reports back. */
export interface AttemptOutcome<O> {
  invocation: Invocation | null;
  raw?: Uint8Array;
  output?: O;
  contentType?: string;
  exit?: { code?: number | null; signal?: string | null; httpStatus?: number | null };
  error?: { code: ExecutorErrorCode; message: string };
  /** How many secret occurrences were masked in `raw` (and the output) before hashing. */
  masked?: number;
  /** Extra taint origin (e.g. the final URL) for the output label. */
  origin?: string;
  /** What the attempt used (OATS §9.2 metered resources), reported with the call's result. */
  usage?: ResourceUsage;
}

export interface AttemptContext {
  parameters: Readonly<Record<string, unknown>>;
  ticket: ExecutionTicket;
  signal: AbortSignal;
}

/** Codes that mean "the tool is unhealthy": these count towards opening the breaker. */
const BREAKER_FAILURES: ReadonlySet<ExecutorErrorCode> = new Set([
  "ERR_EXEC_TOOL_FAILED",
  "ERR_EXEC_TIMEOUT",
  "ERR_EXEC_IO",
  "ERR_EXEC_DNS",
  "ERR_EXEC_OUTPUT_TOO_LARGE",
  "ERR_EXEC_MCP_PROTOCOL",
]);

const EXECUTOR_CODES: ReadonlySet<string> = new Set(ERROR_CODES.executor);

function statusOf(code: ExecutorErrorCode | undefined): ExecutionStatus {
  if (code === undefined) return "success";
  if (code === "ERR_EXEC_TIMEOUT") return "timeout";
  if (code === "ERR_EXEC_CANCELLED") return "cancelled";
  if (BREAKER_FAILURES.has(code)) return "error";
  return "rejected";
}

/** Why a signal fired, in executor codes. */
export function abortCode(signal: AbortSignal): ExecutorErrorCode {
  return signal.reason === TIMEOUT_REASON ? "ERR_EXEC_TIMEOUT" : "ERR_EXEC_CANCELLED";
}

export const TIMEOUT_REASON: unique symbol = Symbol("warden.executor.timeout");

export interface RunSpec<O> {
  executor: "http" | "file" | "process" | "database" | "mcp";
  tool: ToolIdentity;
  defaultTaint: TaintSource;
  maxTimeoutMs: number;
  attempt(ctx: AttemptContext): Promise<AttemptOutcome<O>>;
}

function toError(err: unknown): { code: ExecutorErrorCode; message: string } {
  if (err instanceof WardenError && EXECUTOR_CODES.has(err.code)) {
    return { code: err.code as ExecutorErrorCode, message: err.message };
  }
  if (err instanceof WardenError) return { code: "ERR_EXEC_PARAMS_INVALID", message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: "ERR_EXEC_IO", message };
}

/**
 * Applies mask_fields to the output (withholding an output that cannot be masked) and
 * journals the obligations' fulfilment before the action completes.
 */
async function fulfil<O>(
  deps: ExecutorDeps,
  t: ExecutionTicket,
  pre: Extract<Awaited<ReturnType<typeof checkObligations>>, { ok: true }>,
  x: { outcome: AttemptOutcome<O>; tool: string; traceId: string },
): Promise<void> {
  const fulfilled = [...pre.fulfilled];
  let unmet: { type: string; reason: string } | undefined;
  if (pre.mask.length > 0 && x.outcome.output !== undefined) {
    const m = maskOutput(x.outcome.output, pre.mask);
    if (m === undefined) {
      unmet = { type: "mask_fields", reason: "the output is not a JSON object" };
      delete x.outcome.output;
      x.outcome.error = {
        code: "ERR_EXEC_OBLIGATION_UNMET",
        message: "obligation mask_fields not met: the output is not a JSON object",
      };
    } else {
      x.outcome.output = m.output;
      fulfilled.push({ type: "mask_fields", detail: `masked ${m.masked} field(s)` });
    }
  }
  const body = { decision_id: t.decisionId, tool: x.tool, fulfilled, ...(unmet ? { unmet } : {}) };
  await journal(deps, OBLIGATIONS_EVENT, t.runId, x.traceId, body);
}

async function journal(
  deps: ExecutorDeps,
  type: string,
  runId: string,
  traceId: string | undefined,
  body: Record<string, unknown>,
): Promise<void> {
  if (deps.journal === undefined) return;
  await deps.journal.append({
    type,
    run_id: runId,
    ...(traceId !== undefined ? { trace_id: traceId } : {}),
    body,
  });
}

/** Journal breaker transitions of a registry (call once per registry + journal pair). */
export function journalBreakerTransitions(
  breakers: BreakerRegistry,
  sink: ExecutorJournal,
  runId = "warden-executors",
): () => void {
  return breakers.onTransition((t: BreakerTransition) => {
    void Promise.resolve(
      sink.append({
        type: "warden.executor.breaker",
        run_id: runId,
        body: {
          tool: t.tool,
          from: t.from,
          to: t.to,
          consecutive_failures: t.consecutiveFailures,
          at: isoTime(t.at),
        },
      }),
    ).catch(() => {
      // A failing journal must not turn a state change into an unhandled rejection;
      // the next evidence append surfaces the journal fault to the caller.
    });
  });
}

/** Runs one governed execution. Never throws for expected outcomes; journal faults propagate. */
export async function runGoverned<O>(
  ticket: unknown,
  spec: RunSpec<O>,
  deps: ExecutorDeps,
  opts: CallOptions = {},
): Promise<ExecutionResult<O>> {
  const redeemed = redeemTicket(ticket, { tool: spec.tool.name });
  if (!redeemed.ok) {
    await journal(deps, "warden.executor.ticket_rejected", "unattributed", undefined, {
      executor: spec.executor,
      tool: spec.tool.name,
      code: redeemed.code,
    });
    return { ok: false, code: redeemed.code, message: redeemed.message };
  }
  const t = redeemed.ticket;
  const traceId = opts.traceId ?? newTraceId();
  const pre = await checkObligations(t, spec.tool.name, deps.obligations ?? {});
  if (!pre.ok) {
    const body = {
      decision_id: t.decisionId,
      tool: spec.tool.name,
      fulfilled: pre.fulfilled,
      unmet: pre.unmet,
    };
    await journal(deps, OBLIGATIONS_EVENT, t.runId, traceId, body);
    const message = `obligation ${pre.unmet.type} not met: ${pre.unmet.reason}`;
    return { ok: false, code: "ERR_EXEC_OBLIGATION_UNMET", message };
  }
  const started = Date.now();
  const startedAt = isoTime(started);

  let outcome: AttemptOutcome<O>;
  const breaker = deps.breakers?.for(spec.tool.name);
  const admission = breaker?.admit();
  if (admission !== undefined && !admission.ok) {
    outcome = {
      invocation: null,
      error: {
        code: "ERR_EXEC_CIRCUIT_OPEN",
        message: `circuit breaker for ${spec.tool.name} is ${admission.state}; retry after ${admission.retryAfterMs} ms`,
      },
    };
  } else {
    const permit = admission?.ok ? admission.permit : undefined;
    const timeoutMs = Math.min(opts.timeoutMs ?? spec.tool.timeoutMs ?? spec.maxTimeoutMs, spec.maxTimeoutMs);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMEOUT_REASON), timeoutMs);
    const onAbort = () => controller.abort(opts.signal?.reason ?? "cancelled");
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      outcome = await spec.attempt({ parameters: redeemed.parameters, ticket: t, signal: controller.signal });
    } catch (err) {
      outcome = { invocation: null, error: toError(err) };
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
    const code = outcome.error?.code;
    if (permit !== undefined) {
      if (code === undefined) permit.success();
      else if (BREAKER_FAILURES.has(code)) permit.failure();
      else permit.release();
    }
  }

  if (t.obligations.length > 0) await fulfil(deps, t, pre, { outcome, tool: spec.tool.name, traceId });
  const status = statusOf(outcome.error?.code);
  const taint: TaintLabel[] =
    status === "success" || outcome.raw !== undefined
      ? [spec.defaultTaint, ...(spec.tool.taint ?? [])]
          .filter((s, i, all) => all.indexOf(s) === i)
          .map((source) =>
            TaintLabel.parse({
              source,
              origin: (outcome.origin ?? spec.tool.name).slice(0, 512),
              confidence: 1,
              addedAt: isoTime(Date.now()),
            }),
          )
      : [];
  const evidence = EvidenceEnvelope.parse({
    schema: EVIDENCE_SCHEMA,
    evidence_id: uuidv7(),
    time: isoTime(Date.now()),
    tool: { name: spec.tool.name, version: spec.tool.version, class: t.toolClass, action: t.action },
    parameters: t.parameters,
    parameters_hash: parametersHash(t.parameters),
    invocation: outcome.invocation,
    started_at: startedAt,
    duration_ms: Math.max(0, Math.round(Date.now() - started)),
    status,
    exit: {
      code: outcome.exit?.code ?? null,
      signal: outcome.exit?.signal ?? null,
      http_status: outcome.exit?.httpStatus ?? null,
    },
    ...(outcome.error !== undefined ? { error_code: outcome.error.code } : {}),
    output_hash: outcome.raw !== undefined ? rawOutputHash(outcome.raw) : null,
    output_bytes: outcome.raw?.byteLength ?? 0,
    ...(outcome.masked !== undefined && outcome.masked > 0 ? { output_masked: outcome.masked } : {}),
    decision_id: t.decisionId,
    run_id: t.runId,
    trace_id: traceId,
    identity: {
      principal_id: t.principalId,
      ...(deps.agentId !== undefined ? { agent_id: deps.agentId } : {}),
      ...(opts.userId !== undefined ? { user_id: opts.userId } : {}),
    },
    taint,
  });
  const response = toolResponseFor(evidence, deps.dare, outcome.contentType);
  if (outcome.raw !== undefined && evidence.output_hash !== null)
    deps.snapshots?.put(outcome.raw, evidence.output_hash);
  await journal(deps, "warden.executor.evidence", t.runId, traceId, evidence);
  await journal(deps, "dare.tool.response", t.runId, traceId, response as unknown as Record<string, unknown>);

  if (outcome.error !== undefined) {
    return {
      ok: false,
      code: outcome.error.code,
      message: outcome.error.message,
      evidence,
      response,
      ...(outcome.output !== undefined ? { output: outcome.output } : {}),
      ...(outcome.usage !== undefined ? { usage: outcome.usage } : {}),
    };
  }
  if (outcome.output === undefined) {
    throw new ExecutorError("ERR_EXEC_IO", `${spec.executor} executor produced no output`);
  }
  const usage = outcome.usage !== undefined ? { usage: outcome.usage } : {};
  return { ok: true, output: outcome.output, evidence, response, taint, ...usage };
}

/** A tool binding: its identity plus the contract's builder of the executor's own spec. */
export interface SpecBinding<S> extends ToolIdentity {
  /** May be asynchronous (a just-in-time secret is fetched while the call's spec is built). */
  build(parameters: Readonly<Record<string, unknown>>, ctx?: AttemptContext): S | Promise<S>;
}

/** A RunSpec whose attempt starts from the spec the binding builds. */
export interface BoundRunSpec<S, O> extends Omit<RunSpec<O>, "tool" | "attempt"> {
  binding: SpecBinding<S>;
  attempt(spec: S, ctx: AttemptContext): Promise<AttemptOutcome<O>>;
}

/**
 * runGoverned for a binding: the spec is built from the ticket's frozen parameters
 * inside the attempt, and parameters the contract cannot build from are refused as
 * ERR_EXEC_PARAMS_INVALID before anything is invoked.
 */
export function runBound<S, O>(
  ticket: unknown,
  spec: BoundRunSpec<S, O>,
  deps: ExecutorDeps,
  opts: CallOptions = {},
): Promise<ExecutionResult<O>> {
  const { binding, attempt, ...rest } = spec;
  return runGoverned(
    ticket,
    {
      ...rest,
      tool: binding,
      attempt: async (ctx) => {
        let built: S;
        try {
          built = await binding.build(ctx.parameters, ctx);
        } catch (err) {
          return {
            invocation: null,
            error: {
              code: "ERR_EXEC_PARAMS_INVALID",
              message: (err as Error).message ?? "invalid parameters",
            },
          };
        }
        return attempt(built, ctx);
      },
    },
    deps,
    opts,
  );
}
