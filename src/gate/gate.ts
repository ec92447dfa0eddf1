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
// Reason codes: reasons.ts (meanings in docs/gate.md).

import type { SessionStore } from "../context/index.js";
import { createSessionStore } from "../context/index.js";
import type { DecisionId, PrincipalId, Sha256Hash, TaintLabel } from "../contracts/index.js";
import { admit } from "./admission.js";
import { admitGrants } from "./capability.js";
import { DeferQueue } from "./defer.js";
import { GATE_RESULT } from "./events.js";
import { judge } from "./judgement.js";
import type { GateDeps, GateOptions, Pending, PrincipalConfig } from "./options.js";
import { commonOf, type GateOutcome, rejectedOutcome } from "./outcome.js";
import { PendingResults } from "./pending-results.js";
import { commitDecision, draftOutcome, journalQuarantine } from "./record.js";
import { awaitApproval, awaitRelease, grant } from "./resolution.js";

/** What an executed call produced, as reported to `recordResult`. */
export interface ReportedResult {
  taintLabels?: TaintLabel[];
  data?: unknown;
  classification?: string;
  outputHash?: Sha256Hash;
  tokens?: number;
  cost?: number;
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

  /** Decision only (for hosts that execute themselves): step_up and defer are returned, not awaited. */
  evaluate(raw: unknown): Promise<GateOutcome> {
    return this.#decide(raw, false);
  }

  /** Decision plus resolution: blocks on step_up/defer; allow/modify carry an execution ticket. */
  authorize(raw: unknown, signal?: AbortSignal): Promise<GateOutcome> {
    return this.#decide(raw, true, signal);
  }

  /**
   * Reports the observed output of an executed call: its taint propagates into the
   * session (and value-level provenance), and the result is journaled.
   */
  async recordResult(
    decisionId: DecisionId,
    result: ReportedResult,
  ): Promise<{ taint: TaintLabel[]; classification: string }> {
    const d = this.#d;
    const p = d.pending.take(decisionId);
    if (!p) throw new Error("recordResult: unknown or already reported decision id");
    const input: ReportedResult = {};
    for (const k of ["taintLabels", "data", "classification", "outputHash", "tokens", "cost"] as const) {
      if (result[k] !== undefined) (input as Record<string, unknown>)[k] = result[k];
    }
    const rec = p.session.recordResult(p.prepared, input, d.clock());
    const runId = p.prepared.request.runId;
    const resultSeq = rec.events.find((e) => e.type === "call.result")?.seq;
    if (resultSeq !== undefined) d.o.onResult?.({ decisionId, runId, resultSeq });
    await d.o.journal.appendBuilt({
      type: GATE_RESULT,
      run_id: runId,
      trace_id: p.traceId,
      body: {
        decision_id: decisionId,
        ...(input.outputHash !== undefined ? { output_hash: input.outputHash } : {}),
        classification: rec.classification,
        taint: rec.taint,
      },
    });
    await journalQuarantine(d, rec.events, { runId, traceId: p.traceId });
    return { taint: rec.taint, classification: rec.classification };
  }

  async #decide(raw: unknown, wait: boolean, signal?: AbortSignal): Promise<GateOutcome> {
    const d = this.#d;
    const a = admit(d, raw);
    if (a.kind === "invalid") return rejectedOutcome(a.reason);
    const granted = admitGrants(d, a);
    if (granted !== undefined) await granted;
    const j = judge(d, a);
    const o = draftOutcome(a, j);
    const { session, prepared } = j;
    try {
      o.journalSeqs.push(await commitDecision(d, a, j, o));
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
    if (events.length > 0)
      await journalQuarantine(d, events, { runId: a.request.runId, traceId: a.traceId }, o.journalSeqs);
    const p: Pending = { prepared, session, decisionId: a.decisionId, traceId: a.traceId };
    switch (o.decision) {
      case "allow":
      case "modify":
        if (!wait) {
          d.pending.set(a.request.principalId, p);
          return o;
        }
        return grant(d, o, p, a.principal!.id);
      case "deny":
        return o;
      case "step_up":
        return wait ? awaitApproval(d, { o, p, tool: a.tool }, signal) : o;
      case "defer":
        return wait ? awaitRelease(d, { o, p, tool: a.tool }, signal) : o;
    }
  }
}
