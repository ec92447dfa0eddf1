// Per-principal revocation floors: "everything granted to P at or before time T is void".
// Bounded without failing open: entries older than `horizonMs` are dropped (whatever they
// voided has expired on its own), and past `maxEntries` the oldest entry is folded into a
// floor that applies to every principal (over-revoking rather than forgetting).

export const DEFAULT_MAX_REVOCATIONS = 4096;

export interface RevocationFloorsOptions {
  /** Past this many principals the oldest entry becomes a floor for everyone. */
  maxEntries?: number;
  /** Grants issued longer ago than this have expired anyway (undefined: never dropped). */
  horizonMs?: number;
}

export class RevocationFloors {
  /** Principal → revocation time (ms). Insertion order is refreshed on every revoke. */
  readonly #at = new Map<string, number>();
  readonly #max: number;
  readonly #horizon: number | undefined;
  /** Everything issued at or before this time (ms) is void, whoever it was issued to. */
  #all = Number.NEGATIVE_INFINITY;

  constructor(options: RevocationFloorsOptions = {}) {
    this.#max = Math.max(1, options.maxEntries ?? DEFAULT_MAX_REVOCATIONS);
    this.#horizon = options.horizonMs;
  }

  /** Voids what `principal` was granted at or before `at` (ms); a later floor only raises it. */
  revoke(principal: string, at: number, now: number = at): void {
    const floor = Math.max(at, this.#at.get(principal) ?? Number.NEGATIVE_INFINITY);
    this.#at.delete(principal);
    this.#at.set(principal, floor);
    if (this.#horizon !== undefined)
      for (const [p, t] of [...this.#at]) if (t < now - this.#horizon) this.#at.delete(p);
    while (this.#at.size > this.#max) {
      const oldest = this.#at.entries().next().value;
      if (oldest === undefined) break;
      this.#at.delete(oldest[0]);
      this.#all = Math.max(this.#all, oldest[1]);
    }
  }

  /** Voids what anyone was granted at or before `at` (ms). */
  revokeAll(at: number): void {
    this.#all = Math.max(this.#all, at);
  }

  /** Whether a grant to `principal` issued at `issuedAt` (ms) is void. */
  revoked(principal: string, issuedAt: number): boolean {
    if (issuedAt <= this.#all) return true;
    const at = this.#at.get(principal);
    return at !== undefined && issuedAt <= at;
  }

  get size(): number {
    return this.#at.size;
  }
}
