// The budget ledger shared by every replica (src/context BudgetLedger): tool-call
// budgets, per-principal rate slots and the reservations between a call's admission and
// its settlement; capability tokens count their uses here too (key `cap:<id>`). Each
// method is ONE statement (a PL/pgSQL function of migration 8, fence-sql.ts), so no row lock
// is ever held across a client round trip: a paused replica cannot stall the others.
// `reserve` locks the principal's rate row, then the run's
// budget row (always in that order, so two transactions never wait on each other in a
// cycle), decides on the locked values and writes: two nodes reserving the last unit of a
// budget at once serialise on the row, and the second sees the first's hold. A settlement
// deletes the reservation row first (`DELETE … RETURNING`), so committing or releasing
// twice, from two nodes, moves the counters once. `now` is the calling node's clock:
// rate windows and expiries are as exact as the nodes' clocks agree (docs/distributed.md).
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type {
  BudgetLedger,
  Reservation,
  ReserveOutcome,
  ReserveRefusal,
  ReserveRequest,
  RunUsage,
  Settlement,
} from "../context/index.js";
import { storeError } from "./connect.js";

export interface PgLedgerOptions {
  /** A reservation never settled is given back after this long. Default 15 minutes. */
  ttlMs?: number;
  /** Clock for pruning remembered settlements (default Date.now). */
  clock?: () => number;
}

const WINDOW_MS = 60_000;

export class PgBudgetLedger implements BudgetLedger {
  readonly #pool: pg.Pool;
  readonly #ttl: number;
  readonly #clock: () => number;

  constructor(pool: pg.Pool, options: PgLedgerOptions = {}) {
    this.#pool = pool;
    this.#ttl = options.ttlMs ?? 15 * 60_000;
    this.#clock = options.clock ?? Date.now;
  }

  async #q<R extends pg.QueryResultRow>(what: string, text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await this.#pool.query<R>(text, values)).rows;
    } catch (err) {
      throw storeError(`ledger ${what}`, err);
    }
  }

  async reserve(req: ReserveRequest): Promise<ReserveOutcome> {
    const reservation: Reservation = Object.freeze({
      id: `rsv-${randomUUID()}`,
      runId: req.runId,
      principalId: req.principalId,
      expiresAt: req.now + this.#ttl,
    });
    const rows = await this.#q<{ reasons: ReserveRefusal[] }>(
      "reserve",
      "SELECT warden_reserve($1, $2, $3, $4, $5, $6, $7, $8, $9) AS reasons",
      [
        req.principalId,
        req.runId,
        req.now,
        WINDOW_MS,
        req.toolCallLimit ?? null,
        req.ratePerMinute ?? null,
        req.takeRateSlot !== false,
        reservation.id,
        reservation.expiresAt,
      ],
    );
    const reasons = rows[0]?.reasons ?? [];
    return reasons.length > 0 ? { ok: false, reasons } : { ok: true, reservation };
  }

  commit(reservation: Reservation, now?: number): Promise<Settlement> {
    return this.#settle(reservation, "committed", now);
  }

  release(reservation: Reservation, now?: number): Promise<Settlement> {
    return this.#settle(reservation, "released", now);
  }

  async #settle(r: Reservation, to: "committed" | "released", now: number | undefined): Promise<Settlement> {
    const rows = await this.#q<{ how: Settlement }>("settle", "SELECT warden_settle($1, $2, $3, $4) AS how", [
      r.id,
      to,
      now ?? null,
      this.#clock(),
    ]);
    return rows[0]?.how ?? "expired";
  }

  async renew(reservation: Reservation, now: number): Promise<Reservation | undefined> {
    const rows = await this.#q<{ ok: boolean }>("renew", "SELECT warden_renew($1, $2, $3, $4) AS ok", [
      reservation.id,
      reservation.runId,
      now,
      now + this.#ttl,
    ]);
    return rows[0]?.ok === true ? Object.freeze({ ...reservation, expiresAt: now + this.#ttl }) : undefined;
  }

  async usage(runId: string, now?: number): Promise<RunUsage> {
    if (now !== undefined) await this.#q("usage", "SELECT warden_expire_run($1, $2)", [runId, now]);
    const rows = await this.#q<{ used: number; held: number }>(
      "usage",
      "SELECT used, held FROM run_budgets WHERE run_id = $1",
      [runId],
    );
    const row = rows[0];
    return row === undefined ? { used: 0, held: 0 } : { used: row.used, held: row.held };
  }

  async rateUsed(principalId: string, now: number): Promise<number> {
    const rows = await this.#q<{ n: string }>(
      "rate",
      "SELECT count(*) AS n FROM rate_slots WHERE principal_id = $1 AND at > $2",
      [principalId, now - WINDOW_MS],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async forgetRun(runId: string): Promise<void> {
    // Settlements are remembered for idempotent answers, for twice the TTL.
    await this.#q(
      "forget",
      "WITH r AS (DELETE FROM reservations WHERE run_id = $1), b AS (DELETE FROM run_budgets WHERE run_id = $1) " +
        "DELETE FROM settlements WHERE settled < $2",
      [runId, this.#clock() - 2 * this.#ttl],
    );
  }

  /** Gives back every reservation that outlived its TTL (any run); run it periodically. */
  async sweep(now: number): Promise<number> {
    const runs = await this.#q<{ run_id: string }>(
      "sweep",
      "SELECT DISTINCT run_id FROM reservations WHERE expires_at <= $1",
      [now],
    );
    let n = 0;
    for (const { run_id } of runs)
      n +=
        (await this.#q<{ n: number }>("sweep", "SELECT warden_expire_run($1, $2) AS n", [run_id, now]))[0]
          ?.n ?? 0;
    return n;
  }
}
