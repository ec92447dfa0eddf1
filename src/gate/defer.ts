// Deferred actions (OATS §7.6): held without effect until resolved or timed out.
// The number held at once is bounded, in all and per principal, so one agent cannot fill
// the queue for everyone (beyond either bound the Gate denies); a timeout denies,
// and releases keep the order in which actions were deferred within a run: an
// action resolved early still waits for the ones deferred before it.
// Who may release or deny one (`checkRelease`) is the same on one node and across replicas:
// an operator with the approver role, never the principal whose action it is, with a
// justification. In distributed mode the held items are also rows of the shared queue
// (src/store-pg deferred.ts, through `share`), so any replica lists and answers them.
import type { Approver, DecideResult } from "./approvals.js";

export type DeferResolution =
  | { outcome: "allow" | "deny"; by: string; note?: string }
  | { outcome: "timeout" }
  | { outcome: "cancelled" };

export interface DeferredItem {
  id: string;
  runId: string;
  /** Who asked; counted against the per-principal bound. */
  principalId?: string;
  decisionId: string;
  summary: { toolClass: string; action: string; tool?: string };
  createdAt: string;
  expiresAt: string;
}

/** An operator's word on a deferred action, as the approvals API and the console give it. */
export interface DeferVerdict {
  outcome: "allow" | "deny";
  releaser: Approver;
  note: string;
}

/**
 * The shared copy of the held items (distributed mode). `stored` is called when an item is
 * held: a rejection cancels the hold (no row, no operator anywhere: the Gate denies, fail
 * closed). `ended` is called once, when the item has its answer (released, denied, timed
 * out) or is cancelled: nobody can answer it any more, even while a released item still
 * waits for the ones deferred before it in its run.
 */
export interface DeferShare {
  stored(item: DeferredItem, timeoutMs: number): Promise<void>;
  ended(id: string): void;
}

/** The operators' side of the deferred actions (the approvals API, the console). */
export interface DeferredQueue {
  /** Every held item (in distributed mode every replica's). */
  list(): Promise<DeferredItem[]>;
  /** The held item with that id, undefined when there is none (it may be a step-up). */
  find(id: string): Promise<DeferredItem | undefined>;
  /** Checks the verdict (`checkRelease`) and releases or denies the item. */
  release(id: string, verdict: DeferVerdict): Promise<DecideResult>;
}

const MIN_NOTE = 10;
export const DEFER_NOT_FOUND: DecideResult = {
  ok: false,
  code: "ERR_APPROVAL_NOT_FOUND",
  message: "no pending approval with that id",
};

/**
 * Whether `releaser` may release or deny `item`: the approver role, not the principal
 * whose action it is, a justification of at least 10 characters. Deferred releases are not
 * approver-signed (docs/identity.md).
 */
export function checkRelease(item: DeferredItem, releaser: Approver, note: string): DecideResult {
  if (!releaser.roles.includes("approver"))
    return { ok: false, code: "ERR_APPROVAL_FORBIDDEN", message: "approver lacks role approver" };
  if (item.principalId !== undefined && releaser.id === item.principalId)
    return {
      ok: false,
      code: "ERR_APPROVAL_FORBIDDEN",
      message: "a principal cannot release its own action",
    };
  if (note.trim().length < MIN_NOTE)
    return {
      ok: false,
      code: "ERR_APPROVAL_INVALID",
      message: `justification must be at least ${MIN_NOTE} characters`,
    };
  return { ok: true };
}

/** The operators' queue of one node: its DeferQueue. */
export function localDeferredQueue(defer: DeferQueue): DeferredQueue {
  return {
    list: async () => defer.list(),
    find: async (id) => defer.list().find((d) => d.id === id),
    release: async (id, v) => {
      const item = defer.list().find((d) => d.id === id);
      if (item === undefined) return DEFER_NOT_FOUND;
      const checked = checkRelease(item, v.releaser, v.note);
      if (!checked.ok) return checked;
      return defer.resolve(id, { outcome: v.outcome, by: v.releaser.id, note: v.note })
        ? { ok: true }
        : DEFER_NOT_FOUND;
    },
  };
}

interface Held {
  item: DeferredItem;
  resolution?: DeferResolution;
  release: (r: DeferResolution) => void;
  timer: NodeJS.Timeout;
}

export class DeferQueue {
  readonly #held = new Map<string, Held>();
  readonly #watchers: ((item: DeferredItem) => void)[] = [];
  /** Per-run FIFO of item ids, for in-order release. */
  readonly #order = new Map<string, string[]>();
  #share: DeferShare | undefined;

  /**
   * @param maxConcurrent items held at once, in all
   * @param maxPerPrincipal items one principal may have held at once (default a quarter of
   *   the total, at least 1)
   */
  constructor(
    readonly maxConcurrent = 16,
    readonly maxPerPrincipal = Math.max(1, Math.ceil(maxConcurrent / 4)),
  ) {}

  /** Called with each item as it is held (notifiers); an observer that throws changes nothing. */
  watch(observer: (item: DeferredItem) => void): void {
    this.#watchers.push(observer);
  }

  /** Distributed mode: every held item is also stored for the other replicas (set once). */
  share(share: DeferShare): void {
    if (this.#share !== undefined) throw new Error("the defer queue is already shared");
    this.#share = share;
  }

  #heldBy(principalId: string): number {
    let n = 0;
    for (const h of this.#held.values()) if (h.item.principalId === principalId) n++;
    return n;
  }

  get size(): number {
    return this.#held.size;
  }

  list(): DeferredItem[] {
    return [...this.#held.values()].map((h) => h.item);
  }

  /**
   * Returns null when the queue, or the principal's share of it, is full (the Gate then denies). An aborted `signal` (the
   * caller went away, the server is shutting down) cancels the item at once: it leaves
   * the queue, so it can no longer be released, and later items of its run stop waiting on it.
   */
  hold(item: DeferredItem, timeoutMs: number, signal?: AbortSignal): Promise<DeferResolution> | null {
    if (this.#held.size >= this.maxConcurrent || this.#held.has(item.id)) return null;
    if (item.principalId !== undefined && this.#heldBy(item.principalId) >= this.maxPerPrincipal) return null;
    if (signal?.aborted) return Promise.resolve({ outcome: "cancelled" });
    return new Promise((release) => {
      const timer = setTimeout(() => this.#settle(item.id, { outcome: "timeout" }), Math.max(0, timeoutMs));
      this.#held.set(item.id, { item, release, timer });
      const q = this.#order.get(item.runId) ?? [];
      q.push(item.id);
      this.#order.set(item.runId, q);
      signal?.addEventListener("abort", () => this.#cancel(item.id), { once: true });
      this.#share?.stored(item, timeoutMs).catch(() => this.#cancel(item.id));
      for (const w of this.#watchers) {
        try {
          w(item);
        } catch {
          // An observer (a notifier whose queue is full) never changes the hold.
        }
      }
    });
  }

  /** Resolves a deferred item; false when unknown or already resolved. */
  resolve(
    id: string,
    resolution: Exclude<DeferResolution, { outcome: "timeout" } | { outcome: "cancelled" }>,
  ): boolean {
    const h = this.#held.get(id);
    if (!h || h.resolution) return false;
    this.#settle(id, resolution);
    return true;
  }

  #settle(id: string, resolution: DeferResolution): void {
    const h = this.#held.get(id);
    if (!h || h.resolution) return;
    clearTimeout(h.timer);
    h.resolution = resolution;
    this.#ended(id);
    this.#drain(h.item.runId);
  }

  #cancel(id: string): void {
    // Also an item already resolved but still waiting on an earlier one: its caller is gone.
    const h = this.#held.get(id);
    if (!h) return;
    clearTimeout(h.timer);
    this.#held.delete(id);
    const q = this.#order.get(h.item.runId);
    if (q) {
      const i = q.indexOf(id);
      if (i >= 0) q.splice(i, 1);
    }
    if (!h.resolution) this.#ended(id); // a resolved item's end was reported then
    h.release({ outcome: "cancelled" });
    this.#drain(h.item.runId);
  }

  #drain(runId: string): void {
    const q = this.#order.get(runId);
    if (!q) return;
    while (q.length > 0) {
      const h = this.#held.get(q[0]!);
      if (!h?.resolution) break;
      q.shift();
      this.#held.delete(h.item.id);
      h.release(h.resolution);
    }
    if (q.length === 0) this.#order.delete(runId);
  }

  #ended(id: string): void {
    try {
      this.#share?.ended(id);
    } catch {
      // The shared row expires by itself; the hold has ended here either way.
    }
  }
}
