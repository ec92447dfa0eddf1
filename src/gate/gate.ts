// The Gate: the reference monitor (OATS §7, Ari Kernel §5–§10). It takes a structured
// proposal, never natural language, and returns one of five decisions that no model
// output can negotiate. It runs its stages in order, each fail-closed, one file each:
//   admission.ts   parse, id grammar, principal (from configuration), contract (typed
//                  parameters; anything the contract cannot express is denied before policy)
//   capability.ts  a delegated run's ceiling and a presented capability token (awaited only then)
//   judgement.ts   session context (taint, provenance, budgets, rate limits, quarantine,
//                  behavioural rules), trust, policy → verdict
//   record.ts      the decision record, committed to the journal → only then a ticket
//   resolution.ts  step_up and defer block (in `authorize`) until resolved; journaled
//   outcome.ts     the GateOutcome union and the ticket
//   results.ts     a reported result: into the session, screened (screening.ts), journaled
// Reason codes: reasons.ts (meanings in docs/gate.md).

import { type Context, type Span, trace } from "@opentelemetry/api";
import type { ResourceUsage, SessionStore } from "../context/index.js";
import { createSessionStore } from "../context/index.js";
import type { DecisionId, PrincipalId, Sha256Hash, TaintLabel, TaskOutcome } from "../contracts/index.js";
import { ContextError } from "../contracts/index.js";
import { type Admission, admit } from "./admission.js";
import { admitGrants } from "./capability.js";
import { DeferQueue } from "./defer.js";
import { scoreDrift } from "./drift.js";
import { type Judgement, judge } from "./judgement.js";
import type { GateDeps, GateOptions, Pending, PrincipalConfig } from "./options.js";
import { commonOf, faultOf, type GateOutcome, rejectedOutcome } from "./outcome.js";
import { PendingResults } from "./pending-results.js";
import { commitDecision, draftOutcome, hasQuarantine, journalQuarantine } from "./record.js";
import { awaitApproval, awaitRelease, grant } from "./resolution.js";
import { type RecordedOutput, recordResult } from "./results.js";
import { type ActionFacts, endActionSpan, SPAN, stage, startActionSpan, traceparentOf } from "./tracing.js";

/** What an executed call produced, as reported to `recordResult`. */
export interface ReportedResult {
  taintLabels?: TaintLabel[];
  data?: unknown;
  classification?: string;
  outputHash?: Sha256Hash;
  tokens?: number;
  cost?: number;
  /** How the execution ended (journaled; APAE turns it into a task_* trust event). */
  outcome?: TaskOutcome;
  /** What the execution used (network requests/bytes, filesystem writes): metered against the run's budgets. */
  usage?: ResourceUsage;
  /**
   * The text a failed call's caller sees (an executor's or upstream's error message): screened
   * like `data` (output screening), since it reaches the agent just the same.
   */
  error?: string;
}

export class Gate {
  readonly #d: GateDeps;

  constructor(options: GateOptions) {
    const principals = options.principals;
    this.#d = {
      o: options,
      sessions: options.sessions ?? createSessionStore(),
      defer: options.defer ?? new DeferQueue(),
      clock: options.clock ?? Date.now,
      // Admitted calls awaiting recordResult, per principal; results never reported must not
      // accumulate (each principal's newest kept), nor push out another principal's.
      pending: new PendingResults(options.pendingResultsPerPrincipal),
      principal: (id: PrincipalId): PrincipalConfig | undefined =>
        typeof principals === "function"
          ? principals(id)
          : Object.hasOwn(principals, id)
            ? principals[id]
            : undefined,
    };
  }

  get sessions(): SessionStore {
    return this.#d.sessions;
  }

  get deferQueue(): DeferQueue {
    return this.#d.defer;
  }

  /** Admitted calls whose result has not been reported yet (bounded per principal). */
  get pendingResults(): number {
    return this.#d.pending.size;
  }

  /**
   * Drops the pending result of an evaluated call that nothing will report (a host that
   * executes on its own and has no result channel), so it does not hold memory until
   * evicted. The decision stays journaled; returns whether an entry was held.
   */
  release(decisionId: DecisionId): boolean {
    return this.#d.pending.take(decisionId) !== undefined;
  }

  /**
   * Decision only (for hosts that execute themselves): step_up and defer are returned, not
   * awaited. With `noResult`, the host has no result channel: an admitted call is not held
   * for `recordResult` (what `release` would drop at once). `valuesIn`: the parameter holding
   * the call's data values, the others being its identity set by Warden's own caller (the
   * hooks' MCP calls): value provenance and flow control judge that parameter only.
   */
  evaluate(
    raw: unknown,
    trace?: TraceOptions & { noResult?: boolean; valuesIn?: string },
  ): Promise<GateOutcome> {
    return this.#traced(raw, false, undefined, trace);
  }

  /** Decision plus resolution: blocks on step_up/defer; allow/modify carry an execution ticket. */
  authorize(raw: unknown, signal?: AbortSignal, trace?: TraceOptions): Promise<GateOutcome> {
    return this.#traced(raw, true, signal, trace);
  }

  /**
   * Reports the observed output of an executed call: its taint propagates into the
   * session (and value-level provenance), its text is screened (`outputScreening`), and
   * the result is journaled — resolving only once it is (results.ts).
   */
  recordResult(decisionId: DecisionId, result: ReportedResult): Promise<RecordedOutput> {
    return recordResult(this.#d, decisionId, result);
  }

  /**
   * Meters a run's usage outside a call's result (the loop's completed iterations, a
   * model's tokens) against its OATS §9.2 budgets; returns the reason codes of the run's
   * budgets now spent (its next call is denied with them). The run must be the principal's
   * (with `runs: "runtime"`, an open run: ERR_RUN_UNKNOWN otherwise).
   */
  recordUsage(
    runId: string,
    principalId: string,
    usage: { tokens?: number; cost?: number } & ResourceUsage,
  ): string[] {
    const d = this.#d;
    const now = d.clock();
    const session =
      d.o.runs === "runtime"
        ? d.sessions.run(runId, principalId)
        : d.sessions.open({ runId, principalId }, now);
    if (session.principalId !== principalId)
      throw new ContextError("ERR_RUN_UNKNOWN", "no such run for this principal");
    session.recordUsage(usage, now);
    // Read-only: only the budgets are asked about, not the quarantine.
    return session.standingDenials(true, now);
  }

  // The action span wraps the whole decision (resolution included); its traceparent goes
  // on the outcome so the execution span can be its child.
  async #traced(
    raw: unknown,
    wait: boolean,
    signal: AbortSignal | undefined,
    t?: TraceOptions & { noResult?: boolean; valuesIn?: string },
  ) {
    const { span, ctx } = startActionSpan(t?.parent);
    let o: GateOutcome | undefined;
    try {
      const traced: Traced = { span, ctx, hold: t?.noResult !== true };
      if (t?.valuesIn !== undefined) traced.valuesIn = t.valuesIn;
      o = await this.#decide(raw, wait, signal, traced);
      const tp = traceparentOf(span);
      if (tp !== undefined) o.traceparent = tp;
      return o;
    } finally {
      // Without a tracer recording, the span is a no-op: its facts are not gathered.
      if (span.isRecording()) endActionSpan(span, actionFacts(raw, o));
      else span.end();
    }
  }

  async #decide(
    raw: unknown,
    wait: boolean,
    signal: AbortSignal | undefined,
    t: Traced,
  ): Promise<GateOutcome> {
    const d = this.#d;
    const a = stage(t.span, t.ctx, SPAN.contract, () => admit(d, raw));
    if (a.kind === "invalid") return rejectedOutcome(a.reason);
    if (t.valuesIn !== undefined) a.valuesIn = t.valuesIn;
    const judged = judgeTraced(d, a, t);
    const j = judged instanceof Promise ? await judged : judged;
    const o = draftOutcome(a, j);
    const { session, prepared } = j;
    try {
      o.journalSeqs.push(await stage(t.span, t.ctx, SPAN.journal, () => commitDecision(d, a, j, o)));
    } catch {
      // Fail closed: an unrecorded decision never authorises anything.
      if (session && prepared) {
        try {
          session.recordDecision(prepared, "deny", ["journal_unavailable"], d.clock());
        } catch {
          // already recorded: nothing more to do
        }
      }
      return {
        ...commonOf(o),
        decision: "deny",
        reasonCodes: ["journal_unavailable"],
        fault: "journal_unavailable",
      };
    }
    if (!session || !prepared) return o;
    const events = session.recordDecision(prepared, o.decision, o.reasonCodes, a.now);
    if (hasQuarantine(events))
      await journalQuarantine(d, events, { runId: a.request.runId, traceId: a.traceId }, o.journalSeqs);
    const p: Pending = {
      prepared,
      session,
      decisionId: a.decisionId,
      traceId: a.traceId,
      riskScore: j.riskScore ?? 1,
    };
    switch (o.decision) {
      case "allow":
      case "modify":
        if (!wait) {
          if (t.hold) d.pending.set(a.request.principalId, p);
          return o;
        }
        return grant(d, o, p, a.principal!.id);
      case "deny":
        return o;
      case "step_up":
        return wait
          ? stage(t.span, t.ctx, SPAN.resolution, () => awaitApproval(d, { o, p, tool: a.tool }, signal))
          : o;
      case "defer":
        return wait
          ? stage(t.span, t.ctx, SPAN.resolution, () => awaitRelease(d, { o, p, tool: a.tool }, signal))
          : o;
    }
  }
}

/** Where a call's spans go: under `parent` (e.g. the sidecar's incoming traceparent), else the active context. */
export interface TraceOptions {
  parent?: Context;
}

interface Traced {
  span: Span;
  ctx: Context;
  /** Whether an admitted call is held for recordResult (`evaluate`'s `noResult` says not). */
  hold: boolean;
  /** `evaluate`'s `valuesIn`. */
  valuesIn?: string;
}

/**
 * Grants, drift and judgement of an admitted call, each in its span. Without a grant to
 * await or a drift to score, the judgement is returned as is (no promise and microtask
 * turn of its own); either way the session's reservation is taken before the first await.
 */
function judgeTraced(d: GateDeps, a: Admission, t: Traced): Judgement | Promise<Judgement> {
  // A caller's trace (the sidecar's traceparent) names the journal's trace unless the request does.
  const sc = trace.getSpanContext(t.ctx);
  if (a.request.traceId === undefined && sc !== undefined && trace.isSpanContextValid(sc))
    a.traceId = sc.traceId;
  const granted = admitGrants(d, a);
  if (granted === undefined && (d.o.drift === undefined || a.refused !== undefined))
    return stage(t.span, t.ctx, SPAN.policy, () => judge(d, a));
  return judgeAwaited(d, a, t, granted);
}

async function judgeAwaited(
  d: GateDeps,
  a: Admission,
  t: Traced,
  granted: Promise<void> | undefined,
): Promise<Judgement> {
  if (granted !== undefined) await stage(t.span, t.ctx, SPAN.contract, () => granted);
  const drift =
    d.o.drift !== undefined && a.refused === undefined
      ? await stage(t.span, t.ctx, SPAN.drift, () => scoreDrift(d, a))
      : undefined;
  return stage(t.span, t.ctx, SPAN.policy, () => judge(d, a, drift));
}

function actionFacts(raw: unknown, o: GateOutcome | undefined): ActionFacts {
  const r = (raw ?? {}) as Partial<
    Record<"tool" | "toolClass" | "action" | "runId" | "principalId", unknown>
  >;
  const str = (v: unknown) => (typeof v === "string" ? v.slice(0, 256) : undefined);
  const toolClass = str(r.toolClass);
  const action = str(r.action);
  const f: ActionFacts = {
    tool: str(r.tool) ?? `${toolClass ?? "unknown"}.${action ?? "unknown"}`,
    decisionId: o?.decisionId ?? null,
    decision: o?.decision ?? "deny",
    reasonCodes: o?.reasonCodes ?? ["gate_error"],
    riskScore: o?.riskScore,
    drift: o?.drift,
    fault: o === undefined ? "gate_error" : faultOf(o),
  };
  for (const [k, v] of [
    ["runId", str(r.runId)],
    ["principalId", str(r.principalId)],
    ["toolClass", toolClass],
    ["action", action],
    ["traceId", o?.traceId],
  ] as const)
    if (v !== undefined) f[k] = v;
  return f;
}
