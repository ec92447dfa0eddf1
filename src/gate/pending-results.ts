// Admitted calls awaiting recordResult, kept per principal. Each principal has its own
// bounded share (the newest kept), so a principal whose host never reports results can
// only push out its own oldest entries, never another principal's: its result, once
// reported, still carries its taint into that principal's run. Memory is bounded by the
// configured principals times the share.

import { BoundedMap } from "./bounded-map.js";
import type { Pending } from "./options.js";

export const PENDING_RESULTS_PER_PRINCIPAL = 1024;

export class PendingResults {
  readonly #shares = new Map<string, BoundedMap<string, Pending>>();
  /** decisionId → the principal whose share holds it. */
  readonly #owner = new Map<string, string>();

  constructor(readonly perPrincipal = PENDING_RESULTS_PER_PRINCIPAL) {
    if (!Number.isSafeInteger(perPrincipal) || perPrincipal < 1)
      throw new RangeError("pendingResultsPerPrincipal must be an integer >= 1");
  }

  get size(): number {
    return this.#owner.size;
  }

  set(principalId: string, p: Pending): void {
    let share = this.#shares.get(principalId);
    if (share === undefined) {
      share = new BoundedMap<string, Pending>(this.perPrincipal, (id) => this.#owner.delete(id));
      this.#shares.set(principalId, share);
    }
    share.set(p.decisionId, p);
    this.#owner.set(p.decisionId, principalId);
  }

  /** Removes and returns the pending call of `decisionId`, if it is still held. */
  take(decisionId: string): Pending | undefined {
    const who = this.#owner.get(decisionId);
    if (who === undefined) return undefined;
    this.#owner.delete(decisionId);
    const share = this.#shares.get(who);
    const p = share?.get(decisionId);
    share?.delete(decisionId);
    if (share !== undefined && share.size === 0) this.#shares.delete(who);
    return p;
  }
}
