// Deferred actions (OATS §7.6): held without effect until resolved or timed out.
// The number held at once is bounded, in all and per principal, so one agent cannot fill
// the queue for everyone (beyond either bound the Gate denies); a timeout denies,
// and releases keep the order in which actions were deferred within a run: an
// action resolved early still waits for the ones deferred before it.

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

interface Held {
  item: DeferredItem;
  resolution?: DeferResolution;
  release: (r: DeferResolution) => void;
  timer: NodeJS.Timeout;
}

export class DeferQueue {
  readonly #held = new Map<string, Held>();
  /** Per-run FIFO of item ids, for in-order release. */
  readonly #order = new Map<string, string[]>();

  /**
   * @param maxConcurrent items held at once, in all
   * @param maxPerPrincipal items one principal may have held at once (default a quarter of
   *   the total, at least 1)
   */
  constructor(
    readonly maxConcurrent = 16,
    readonly maxPerPrincipal = Math.max(1, Math.ceil(maxConcurrent / 4)),
  ) {}

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
}
