// Budget ledger: a call takes its tool-call unit and its principal's rate-limit slot by a
// reservation made atomically *before* any await, then commits it (admitted) or releases
// it (denied). Checking first and counting after an await let 40 concurrent calls through
// a budget of 5; a reservation counts the call the moment it is admitted to judgement.
//
// The interface is what a shared store implements too. For PostgreSQL, per replica fleet:
//   reserve  = one transaction: `UPDATE run_budgets SET held = held + 1 WHERE run_id = $1
//              AND used + held + 1 <= $limit RETURNING …` (zero rows = refused), and for the
//              rate slot `SELECT … FROM principal_rate WHERE principal_id = $2 FOR UPDATE`,
//              count the slots newer than now - 60 s, insert one if under the limit;
//              then `INSERT INTO reservations (id, run_id, principal_id, expires_at)`.
//   commit   = `DELETE FROM reservations WHERE id = $1 RETURNING run_id` then
//              `UPDATE run_budgets SET held = held - 1, used = used + 1` (no row: already
//              settled or expired, so the call is idempotent).
//   release  = the same delete, then `held = held - 1`.
//   expiry   = a periodic `DELETE … WHERE expires_at < now()` that gives the held units back.
// Hence every method may return a promise; the in-memory ledger answers synchronously,
// and its state changes before it returns, so the event loop serializes reservations.
import { ContextError } from "../contracts/index.js";

export type MaybePromise<T> = T | Promise<T>;

export interface ReserveRequest {
  runId: string;
  principalId: string;
  now: number;
  /** The run's tool-call budget (absent: unlimited). */
  toolCallLimit?: number | undefined;
  /** The principal's calls per minute, its override already applied (absent: unlimited). */
  ratePerMinute?: number | undefined;
  /** Whether the call takes a rate-limit slot (default true; a call refused for its rate takes none). */
  takeRateSlot?: boolean | undefined;
}

export interface Reservation {
  readonly id: string;
  readonly runId: string;
  readonly principalId: string;
  readonly expiresAt: number;
}

export type ReserveRefusal = "budget_tool_calls_exhausted" | "rate_limited";

export type ReserveOutcome =
  | { ok: true; reservation: Reservation }
  | { ok: false; reasons: ReserveRefusal[] };

/** How a reservation ended. `expired`: it outlived its TTL and its unit was given back. */
export type Settlement = "committed" | "released" | "expired";

export interface RunUsage {
  /** Committed tool calls. */
  used: number;
  /** Tool calls reserved and not yet committed or released. */
  held: number;
}

export interface BudgetLedger {
  reserve(req: ReserveRequest): MaybePromise<ReserveOutcome>;
  /** Counts the reserved unit as used. Idempotent: a settled reservation reports how it ended. */
  commit(reservation: Reservation, now?: number): MaybePromise<Settlement>;
  /** Gives the unit back (the rate-limit slot stays taken: attempts count). Idempotent. */
  release(reservation: Reservation, now?: number): MaybePromise<Settlement>;
  /** Extends a reservation that waits on a human (step_up, defer). */
  renew(reservation: Reservation, now: number): MaybePromise<Reservation | undefined>;
  usage(runId: string, now?: number): MaybePromise<RunUsage>;
  /** Slots the principal took in the minute before `now`. */
  rateUsed(principalId: string, now: number): MaybePromise<number>;
  /** Forgets a run that ended or was evicted; its open reservations are released. */
  forgetRun(runId: string): MaybePromise<void>;
}

export interface MemoryLedgerOptions {
  /** A reservation never settled is given back after this long. Default 15 minutes. */
  ttlMs?: number;
  /** Slots kept per principal regardless of its limit (the log is trimmed by time too). */
  rateLogCap?: number;
}

/** Settled reservations remembered for idempotent commit/release answers. */
const SETTLED_REMEMBERED = 4096;

interface Hold extends Reservation {
  state?: Settlement;
}

/** A principal's sliding one-minute log of call times: a queue with amortized O(1) trimming. */
class RateLog {
  #times: number[] = [];
  #start = 0;

  count(now: number): number {
    while (this.#start < this.#times.length && this.#times[this.#start]! <= now - 60_000) this.#start++;
    this.#compact();
    return this.#times.length - this.#start;
  }

  add(now: number, keep: number): void {
    this.#times.push(now);
    const live = this.#times.length - this.#start;
    if (live > keep) this.#start += live - keep;
    this.#compact();
  }

  /** Entries held in memory, dropped ones not yet compacted included. */
  get retained(): number {
    return this.#times.length;
  }

  /** Drops the dead prefix once it is most of the array: O(1) amortized. */
  #compact(): void {
    if (this.#start > 64 && this.#start * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#start);
      this.#start = 0;
    }
  }
}

export class MemoryBudgetLedger implements BudgetLedger {
  readonly #ttl: number;
  readonly #rateCap: number;
  readonly #runs = new Map<string, RunUsage>();
  readonly #rates = new Map<string, RateLog>();
  /** Open holds in expiry order (constant TTL, renewals re-inserted at the end). */
  readonly #holds = new Map<string, Hold>();
  /** Settled holds by id, for idempotent answers (bounded: oldest forgotten first). */
  readonly #settled = new Map<string, Settlement>();
  /**
   * #settled's ids in insertion order from #settledHead on. Not `keys().next()`: V8 keeps
   * deleted slots at the front of a Map's table until it rehashes, so that call skipped
   * up to ~4,000 holes on every settle once the map was full.
   */
  #settledOrder: string[] = [];
  #settledHead = 0;
  #seq = 0;

  constructor(opts: MemoryLedgerOptions = {}) {
    this.#ttl = opts.ttlMs ?? 15 * 60_000;
    this.#rateCap = opts.rateLogCap ?? 10_000;
    if (!(this.#ttl > 0) || !(this.#rateCap >= 1))
      throw new ContextError("ERR_CONTEXT_CONFIG_INVALID", "ledger ttl and rate log cap must be positive");
  }

  reserve(req: ReserveRequest): ReserveOutcome {
    this.#expire(req.now);
    const run = this.#run(req.runId);
    const reasons: ReserveRefusal[] = [];
    if (req.toolCallLimit !== undefined && run.used + run.held + 1 > req.toolCallLimit)
      reasons.push("budget_tool_calls_exhausted");
    const log = this.#rates.get(req.principalId);
    if (req.ratePerMinute !== undefined && log !== undefined && log.count(req.now) >= req.ratePerMinute)
      reasons.push("rate_limited");
    if (reasons.length > 0) return { ok: false, reasons };
    if (req.takeRateSlot !== false) {
      const slots = log ?? new RateLog();
      if (log === undefined) this.#rates.set(req.principalId, slots);
      // The log is trimmed by time, never to the limit of the call at hand (trimming to a
      // limit that missed the principal's override let every call through); the cap only
      // bounds memory and is never below the limit being enforced.
      slots.add(req.now, Math.max(this.#rateCap, req.ratePerMinute ?? 0));
    }
    run.held++;
    const hold: Hold = {
      id: `rsv-${++this.#seq}`,
      runId: req.runId,
      principalId: req.principalId,
      expiresAt: req.now + this.#ttl,
    };
    this.#holds.set(hold.id, hold);
    return { ok: true, reservation: Object.freeze({ ...hold }) };
  }

  commit(reservation: Reservation, now?: number): Settlement {
    return this.#settle(reservation, "committed", now);
  }

  release(reservation: Reservation, now?: number): Settlement {
    return this.#settle(reservation, "released", now);
  }

  renew(reservation: Reservation, now: number): Reservation | undefined {
    this.#expire(now);
    const hold = this.#holds.get(reservation.id);
    if (hold === undefined) return undefined;
    this.#holds.delete(hold.id);
    const renewed: Hold = { ...hold, expiresAt: now + this.#ttl };
    this.#holds.set(hold.id, renewed);
    return Object.freeze({ ...renewed });
  }

  usage(runId: string, now?: number): RunUsage {
    if (now !== undefined) this.#expire(now);
    const run = this.#runs.get(runId);
    return run === undefined ? { used: 0, held: 0 } : { ...run };
  }

  rateUsed(principalId: string, now: number): number {
    return this.#rates.get(principalId)?.count(now) ?? 0;
  }

  forgetRun(runId: string): void {
    this.#runs.delete(runId);
    for (const [id, h] of this.#holds) if (h.runId === runId) this.#holds.delete(id);
  }

  /** Structural sizes, for bounds tests and metrics. */
  stats(): { runs: number; openReservations: number; settledRemembered: number; rateSlots: number } {
    let rateSlots = 0;
    for (const log of this.#rates.values()) rateSlots += log.retained;
    return {
      runs: this.#runs.size,
      openReservations: this.#holds.size,
      settledRemembered: this.#settled.size,
      rateSlots,
    };
  }

  #run(runId: string): RunUsage {
    const known = this.#runs.get(runId);
    if (known !== undefined) return known;
    const run = { used: 0, held: 0 };
    this.#runs.set(runId, run);
    return run;
  }

  #settle(reservation: Reservation, to: "committed" | "released", now: number | undefined): Settlement {
    if (now !== undefined) this.#expire(now);
    const hold = this.#holds.get(reservation.id);
    if (hold === undefined) return this.#settled.get(reservation.id) ?? "expired";
    this.#holds.delete(hold.id);
    const run = this.#runs.get(hold.runId);
    if (run !== undefined) {
      run.held--;
      if (to === "committed") run.used++;
    }
    this.#remember(hold.id, to);
    return to;
  }

  #remember(id: string, how: Settlement): void {
    // Hold ids are unique (a counter), and a hold is settled once: every id is new here.
    this.#settled.set(id, how);
    this.#settledOrder.push(id);
    if (this.#settled.size > SETTLED_REMEMBERED) {
      const oldest = this.#settledOrder[this.#settledHead++];
      if (oldest !== undefined) this.#settled.delete(oldest);
      // Drop the consumed prefix once it is as long as the rest: O(1) amortized.
      if (this.#settledHead >= SETTLED_REMEMBERED) {
        this.#settledOrder = this.#settledOrder.slice(this.#settledHead);
        this.#settledHead = 0;
      }
    }
  }

  #expire(now: number): void {
    for (const hold of this.#holds.values()) {
      if (hold.expiresAt > now) break;
      this.#holds.delete(hold.id);
      const run = this.#runs.get(hold.runId);
      if (run !== undefined) run.held--;
      this.#remember(hold.id, "expired");
    }
  }
}

/** A ledger that answers synchronously (the in-memory one): what a Session drives directly. */
export type SyncBudgetLedger = {
  [K in keyof BudgetLedger]: (...args: Parameters<BudgetLedger[K]>) => Awaited<ReturnType<BudgetLedger[K]>>;
};
