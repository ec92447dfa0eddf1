// The budget ledger shared by every replica (src/context BudgetLedger): tool-call
// budgets, per-principal rate slots and the reservations between a call's admission and
// its settlement; capability tokens count their uses here too (key `cap:<id>`). Each
// method is one transaction. `reserve` locks the principal's rate row, then the run's
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
import { inTransaction, storeError } from "./connect.js";

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

  async #tx<T>(what: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.#pool, fn);
    } catch (err) {
      throw storeError(`ledger ${what}`, err);
    }
  }

  async reserve(req: ReserveRequest): Promise<ReserveOutcome> {
    return this.#tx("reserve", async (c) => {
      await c.query("INSERT INTO principal_rate (principal_id) VALUES ($1) ON CONFLICT DO NOTHING", [
        req.principalId,
      ]);
      await c.query("SELECT 1 FROM principal_rate WHERE principal_id = $1 FOR UPDATE", [req.principalId]);
      await lockRun(c, req.runId);
      await expireRun(c, req.runId, req.now);
      const { used, held } = await countersOf(c, req.runId);
      const reasons: ReserveRefusal[] = [];
      if (req.toolCallLimit !== undefined && used + held + 1 > req.toolCallLimit)
        reasons.push("budget_tool_calls_exhausted");
      if (
        req.ratePerMinute !== undefined &&
        (await rateCount(c, req.principalId, req.now)) >= req.ratePerMinute
      )
        reasons.push("rate_limited");
      if (reasons.length > 0) return { ok: false, reasons };
      if (req.takeRateSlot !== false) {
        await c.query("DELETE FROM rate_slots WHERE principal_id = $1 AND at <= $2", [
          req.principalId,
          req.now - WINDOW_MS,
        ]);
        await c.query("INSERT INTO rate_slots (principal_id, at) VALUES ($1, $2)", [
          req.principalId,
          req.now,
        ]);
      }
      await c.query("UPDATE run_budgets SET held = held + 1 WHERE run_id = $1", [req.runId]);
      const reservation: Reservation = Object.freeze({
        id: `rsv-${randomUUID()}`,
        runId: req.runId,
        principalId: req.principalId,
        expiresAt: req.now + this.#ttl,
      });
      await c.query(
        "INSERT INTO reservations (id, run_id, principal_id, expires_at) VALUES ($1, $2, $3, $4)",
        [reservation.id, reservation.runId, reservation.principalId, reservation.expiresAt],
      );
      return { ok: true, reservation };
    });
  }

  commit(reservation: Reservation, now?: number): Promise<Settlement> {
    return this.#settle(reservation, "committed", now);
  }

  release(reservation: Reservation, now?: number): Promise<Settlement> {
    return this.#settle(reservation, "released", now);
  }

  async #settle(r: Reservation, to: "committed" | "released", now: number | undefined): Promise<Settlement> {
    return this.#tx("settle", async (c) => {
      const gone = await c.query<{ run_id: string; expires_at: string }>(
        "DELETE FROM reservations WHERE id = $1 RETURNING run_id, expires_at",
        [r.id],
      );
      const hold = gone.rows[0];
      if (hold === undefined) {
        const s = await c.query<{ outcome: Settlement }>("SELECT outcome FROM settlements WHERE id = $1", [
          r.id,
        ]);
        return s.rows[0]?.outcome ?? "expired";
      }
      const how: Settlement = now !== undefined && Number(hold.expires_at) <= now ? "expired" : to;
      await c.query("UPDATE run_budgets SET held = held - 1, used = used + $2 WHERE run_id = $1", [
        hold.run_id,
        how === "committed" ? 1 : 0,
      ]);
      await c.query("INSERT INTO settlements (id, outcome, settled) VALUES ($1, $2, $3)", [
        r.id,
        how,
        this.#clock(),
      ]);
      return how;
    });
  }

  async renew(reservation: Reservation, now: number): Promise<Reservation | undefined> {
    return this.#tx("renew", async (c) => {
      await lockRun(c, reservation.runId);
      await expireRun(c, reservation.runId, now);
      const r = await c.query("UPDATE reservations SET expires_at = $2 WHERE id = $1 RETURNING id", [
        reservation.id,
        now + this.#ttl,
      ]);
      return r.rowCount === 1 ? Object.freeze({ ...reservation, expiresAt: now + this.#ttl }) : undefined;
    });
  }

  async usage(runId: string, now?: number): Promise<RunUsage> {
    return this.#tx("usage", async (c) => {
      if (now !== undefined) {
        await lockRun(c, runId);
        await expireRun(c, runId, now);
      }
      return countersOf(c, runId);
    });
  }

  async rateUsed(principalId: string, now: number): Promise<number> {
    return this.#tx("rate", (c) => rateCount(c, principalId, now));
  }

  async forgetRun(runId: string): Promise<void> {
    await this.#tx("forget", async (c) => {
      await c.query("DELETE FROM reservations WHERE run_id = $1", [runId]);
      await c.query("DELETE FROM run_budgets WHERE run_id = $1", [runId]);
      // Settlements are remembered for idempotent answers, for twice the TTL.
      await c.query("DELETE FROM settlements WHERE settled < $1", [this.#clock() - 2 * this.#ttl]);
    });
  }

  /** Gives back every reservation that outlived its TTL (any run); run it periodically. */
  async sweep(now: number): Promise<number> {
    const runs = await this.#tx("sweep", async (c) => {
      const r = await c.query<{ run_id: string }>(
        "SELECT DISTINCT run_id FROM reservations WHERE expires_at <= $1",
        [now],
      );
      return r.rows.map((row) => row.run_id);
    });
    let n = 0;
    for (const runId of runs)
      n += await this.#tx("sweep", async (c) => {
        await lockRun(c, runId);
        return expireRun(c, runId, now);
      });
    return n;
  }
}

/** Creates the run's row if missing and locks it until the transaction ends. */
async function lockRun(c: pg.PoolClient, runId: string): Promise<void> {
  await c.query("INSERT INTO run_budgets (run_id) VALUES ($1) ON CONFLICT DO NOTHING", [runId]);
  await c.query("SELECT 1 FROM run_budgets WHERE run_id = $1 FOR UPDATE", [runId]);
}

async function countersOf(c: pg.ClientBase, runId: string): Promise<RunUsage> {
  const r = await c.query<{ used: number; held: number }>(
    "SELECT used, held FROM run_budgets WHERE run_id = $1",
    [runId],
  );
  const row = r.rows[0];
  return row === undefined ? { used: 0, held: 0 } : { used: row.used, held: row.held };
}

/** Under the run's row lock: expired holds are deleted, their units given back, remembered. */
async function expireRun(c: pg.PoolClient, runId: string, now: number): Promise<number> {
  const gone = await c.query<{ id: string }>(
    "DELETE FROM reservations WHERE run_id = $1 AND expires_at <= $2 RETURNING id",
    [runId, now],
  );
  const n = gone.rowCount ?? 0;
  if (n === 0) return 0;
  await c.query("UPDATE run_budgets SET held = held - $2 WHERE run_id = $1", [runId, n]);
  await c.query(
    "INSERT INTO settlements (id, outcome, settled) SELECT unnest($1::text[]), 'expired', $2 ON CONFLICT DO NOTHING",
    [gone.rows.map((r) => r.id), now],
  );
  return n;
}

async function rateCount(c: pg.PoolClient, principalId: string, now: number): Promise<number> {
  const r = await c.query<{ n: string }>(
    "SELECT count(*) AS n FROM rate_slots WHERE principal_id = $1 AND at > $2",
    [principalId, now - WINDOW_MS],
  );
  return Number(r.rows[0]?.n ?? 0);
}
