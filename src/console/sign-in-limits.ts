// Sign-in limits (issue 37 finding 3): strangers must not lock approvers out. There is no
// limit shared by every address any more: each source address has its own bucket
// (`signInPerMinute`) with a backoff that doubles after every further run of refused
// attempts (up to 15 minutes, cleared by a good sign-in), and each account — known once
// its credential checks out — has its own bucket with the same backoff, so a stolen
// credential cannot churn sessions either. What all addresses together still share is
// the journal: past `4 × signInPerMinute` refused attempts a minute, a refusal is answered
// (401) but not journaled one by one (`journalRefusal` says whether to).
import { performance } from "node:perf_hooks";

export const BACKOFF_MAX_MS = 15 * 60_000;
/** Addresses and accounts remembered at most (the oldest is forgotten past it). */
export const MAX_KEYS = 4096;

interface Entry {
  tokens: number;
  at: number;
  /** Consecutive refusals (failures, or attempts while limited). */
  strikes: number;
  lockedUntil: number;
}

export type Admission = { ok: true } | { ok: false; retryAfterSeconds: number };

/** A token bucket per key with a doubling lock after each full bucket of strikes. */
export class BackoffLimiter {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly perMinute: number,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one attempt for `key` (counted either way). */
  take(key: string): Admission {
    const t = this.now();
    const e = this.#entry(key, t);
    e.tokens = Math.min(this.perMinute, e.tokens + ((t - e.at) * this.perMinute) / 60_000);
    e.at = t;
    if (t < e.lockedUntil) return { ok: false, retryAfterSeconds: Math.ceil((e.lockedUntil - t) / 1000) };
    if (e.tokens < 1) {
      this.strike(key);
      return { ok: false, retryAfterSeconds: Math.ceil(60 / this.perMinute) };
    }
    e.tokens -= 1;
    return { ok: true };
  }

  /** A refused attempt: every `perMinute` in a row doubles the lock (1 s, 2 s, … 15 min). */
  strike(key: string): void {
    const t = this.now();
    const e = this.#entry(key, t);
    e.strikes++;
    if (e.strikes % this.perMinute === 0) {
      const rounds = e.strikes / this.perMinute;
      e.lockedUntil = t + Math.min(BACKOFF_MAX_MS, 1000 * 2 ** Math.min(rounds, 20));
    }
  }

  /** A good attempt clears the key's strikes and lock. */
  clear(key: string): void {
    const e = this.#entries.get(key);
    if (e === undefined) return;
    e.strikes = 0;
    e.lockedUntil = 0;
  }

  #entry(key: string, t: number): Entry {
    let e = this.#entries.get(key);
    if (e === undefined) {
      if (this.#entries.size >= MAX_KEYS) {
        const first = this.#entries.keys().next().value;
        if (first !== undefined) this.#entries.delete(first);
      }
      e = { tokens: this.perMinute, at: t, strikes: 0, lockedUntil: 0 };
      this.#entries.set(key, e);
    }
    return e;
  }
}

/** The console's sign-in limits: per source address, per account, and the refusal journal budget. */
export class SignInLimits {
  readonly #addresses: BackoffLimiter;
  readonly #accounts: BackoffLimiter;
  readonly #journal: { tokens: number; at: number };

  constructor(
    readonly perMinute: number,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#addresses = new BackoffLimiter(perMinute, now);
    this.#accounts = new BackoffLimiter(perMinute, now);
    this.#journal = { tokens: perMinute * 4, at: now() };
  }

  /** Before the credential is looked at: the source address's own limit. */
  admitAddress(address: string): Admission {
    return this.#addresses.take(address);
  }

  /** A credential that did not check out: the address's strike. */
  refused(address: string): void {
    this.#addresses.strike(address);
  }

  /** A good credential: the account's own limit (the address's strikes are cleared). */
  admitAccount(address: string, account: string): Admission {
    this.#addresses.clear(address);
    const r = this.#accounts.take(account);
    if (r.ok) this.#accounts.clear(account);
    return r;
  }

  /** Whether a refused sign-in is journaled one by one (all addresses share this budget). */
  journalRefusal(): boolean {
    const t = this.now();
    const cap = this.perMinute * 4;
    const b = this.#journal;
    b.tokens = Math.min(cap, b.tokens + ((t - b.at) * cap) / 60_000);
    b.at = t;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
