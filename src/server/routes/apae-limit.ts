// The rate limit of the unauthenticated `POST /v1/apae/notify` (docs/trust.md, In the
// sidecar): a token bucket per source address, applied before the ECT's signature is
// verified (the expensive part). Memory is bounded: at most `maxSources` buckets; a source
// that finds the table full shares one overflow bucket with every other such source, so a
// flood from many addresses is limited as a whole instead of evicting (and so resetting)
// the buckets of the sources already tracked. Idle buckets (refilled to capacity) are
// swept when the table fills, at most once per sweep interval.

export interface SourceLimitOptions {
  /** Requests per minute per source (also the burst). Default 60. */
  perMinute?: number;
  /** Sources tracked individually. Default 4096. */
  maxSources?: number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

const SWEEP_INTERVAL_MS = 1000;

export class SourceLimiter {
  readonly perMinute: number;
  readonly maxSources: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  readonly #overflow: Bucket;
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(o: SourceLimitOptions = {}) {
    this.perMinute = o.perMinute ?? 60;
    this.maxSources = o.maxSources ?? 4096;
    this.#now = o.now ?? (() => performance.now());
    this.#overflow = { tokens: this.perMinute, at: this.#now() };
  }

  /** Sources tracked individually now (never above maxSources). */
  get size(): number {
    return this.#buckets.size;
  }

  #refill(b: Bucket, now: number): void {
    b.tokens = Math.min(this.perMinute, b.tokens + ((now - b.at) * this.perMinute) / 60_000);
    b.at = now;
  }

  #sweep(now: number): void {
    if (now - this.#sweptAt < SWEEP_INTERVAL_MS) return;
    this.#sweptAt = now;
    for (const [source, b] of this.#buckets) {
      this.#refill(b, now);
      if (b.tokens >= this.perMinute) this.#buckets.delete(source);
    }
  }

  #bucketOf(source: string, now: number): Bucket {
    const known = this.#buckets.get(source);
    if (known !== undefined) return known;
    if (this.#buckets.size >= this.maxSources) this.#sweep(now);
    if (this.#buckets.size >= this.maxSources) return this.#overflow;
    const b = { tokens: this.perMinute, at: now };
    this.#buckets.set(source, b);
    return b;
  }

  /** Takes one request for `source`: 0 when admitted, else the milliseconds to wait. */
  take(source: string): number {
    const now = this.#now();
    const b = this.#bucketOf(source, now);
    this.#refill(b, now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute);
  }
}
