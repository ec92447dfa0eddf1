// Deferred actions (OATS §7.6): held without effect until resolved or timed out.
// The number held at once is bounded (beyond it the Gate denies), a timeout denies,
// and releases keep the order in which actions were deferred within a run: an
// action resolved early still waits for the ones deferred before it.

export type DeferResolution =
  | { outcome: "allow" | "deny"; by: string; note?: string }
  | { outcome: "timeout" };

export interface DeferredItem {
  id: string;
  runId: string;
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

  constructor(readonly maxConcurrent = 16) {}

  get size(): number {
    return this.#held.size;
  }

  list(): DeferredItem[] {
    return [...this.#held.values()].map((h) => h.item);
  }

  /** Returns null when the queue is full (the Gate then denies). */
  hold(item: DeferredItem, timeoutMs: number): Promise<DeferResolution> | null {
    if (this.#held.size >= this.maxConcurrent) return null;
    return new Promise((release) => {
      const timer = setTimeout(() => this.#settle(item.id, { outcome: "timeout" }), Math.max(0, timeoutMs));
      this.#held.set(item.id, { item, release, timer });
      const q = this.#order.get(item.runId) ?? [];
      q.push(item.id);
      this.#order.set(item.runId, q);
    });
  }

  /** Resolves a deferred item; false when unknown or already resolved. */
  resolve(id: string, resolution: Exclude<DeferResolution, { outcome: "timeout" }>): boolean {
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
