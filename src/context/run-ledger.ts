// One run's side of the budget ledger: how a call's reservation is taken, kept while a
// human decides, and settled. A Session owns one; the ledger itself is shared by every
// run of a store (rate-limit slots are per principal, across runs).
import type { Reservation, ReserveRefusal, SyncBudgetLedger } from "./ledger.js";

/** A call's hold on the ledger: a live reservation, or `refused` when reserve said no. */
export type HoldSlot = Reservation | "refused";

export type ReserveResult =
  | { ok: true; reservation: Reservation }
  | {
      ok: false;
      code: "ERR_RUN_RATE_LIMITED" | "ERR_RUN_BUDGET_EXHAUSTED";
      reasonCodes: (ReserveRefusal | "budget_network_requests_exhausted")[];
    };

/** A network call refused at reserve: the run's network-requests budget is spent (budgets.ts). */
export const NETWORK_REQUESTS_REFUSED: ReserveResult = {
  ok: false,
  code: "ERR_RUN_BUDGET_EXHAUSTED",
  reasonCodes: ["budget_network_requests_exhausted"],
};

export class RunLedger {
  readonly #ledger: SyncBudgetLedger;
  readonly #runId: string;
  readonly #toolCallLimit: number | undefined;

  constructor(ledger: SyncBudgetLedger, runId: string, toolCallLimit: number | undefined) {
    this.#ledger = ledger;
    this.#runId = runId;
    this.#toolCallLimit = toolCallLimit;
  }

  /** Committed tool calls of the run. */
  admitted(): number {
    return this.#ledger.usage(this.#runId).used;
  }

  rateUsed(principalId: string, now: number): number {
    return this.#ledger.rateUsed(principalId, now);
  }

  /** The atomic check-and-take: the run's tool-call unit and the principal's rate slot. */
  reserve(principalId: string, now: number, ratePerMinute: number | undefined): ReserveResult {
    const out = this.#ledger.reserve({
      runId: this.#runId,
      principalId,
      now,
      toolCallLimit: this.#toolCallLimit,
      ratePerMinute,
    });
    if (out.ok) return out;
    const code = out.reasons.includes("rate_limited") ? "ERR_RUN_RATE_LIMITED" : "ERR_RUN_BUDGET_EXHAUSTED";
    return { ok: false, code, reasonCodes: out.reasons };
  }

  /** A hold taken without limits, when the decision is already made (a Gate that did not reserve). */
  hold(principalId: string, now: number, takeRateSlot: boolean): HoldSlot {
    const out = this.#ledger.reserve({ runId: this.#runId, principalId, now, takeRateSlot });
    // Without limits a reservation is never refused; fail closed all the same.
    return out.ok ? out.reservation : "refused";
  }

  /**
   * Counts an admitted call. Admitted without a live reservation (refused, or expired while
   * waiting on a human) it still counts: a budget can be overrun by it, never undercounted.
   */
  admit(slot: HoldSlot, principalId: string, now: number): void {
    if (slot !== "refused" && this.#ledger.commit(slot, now) === "committed") return;
    const out = this.#ledger.reserve({ runId: this.#runId, principalId, now, takeRateSlot: false });
    if (out.ok) this.#ledger.commit(out.reservation, now);
  }

  release(slot: HoldSlot, now: number): void {
    if (slot !== "refused") this.#ledger.release(slot, now);
  }

  /** A step_up or defer waits on a human: its reservation is extended, not settled. */
  renew(slot: HoldSlot, now: number): HoldSlot {
    if (slot === "refused") return slot;
    return this.#ledger.renew(slot, now) ?? slot;
  }
}
