// APAE trust tables shared by every replica (src/trust TrustStore). `update` runs the
// engine's synchronous callback inside one transaction that holds the (truster, subject)
// pair's advisory lock (which covers a row that does not exist yet, where FOR UPDATE has
// nothing to lock) and the row's `FOR UPDATE` lock, and writes before COMMIT: two nodes
// applying events to the same pair never lose one. Rows read back are validated
// (ERR_TRUST_STORE_CORRUPT), never read as a fresh score. Ordering is by code point
// (COLLATE "C"), as the in-memory store sorts. Every write NOTIFYs `warden_trust` with
// `[truster, subject]` in its transaction, so other replicas' cached tables follow.
import type pg from "pg";
import { canonicalJson, TrustError } from "../contracts/index.js";
import { parseTrustRow, type RowUpdate, type TrustRow, type TrustStore } from "../trust/index.js";
import { inTransaction, storeError } from "./connect.js";

/** The channel a changed trust row is announced on (payload: JSON `[truster, subject]`). */
export const TRUST_CHANNEL = "warden_trust";

interface Stored {
  truster: string;
  subject: string;
  row: string;
}

function rowOf(s: Stored): TrustRow {
  let value: unknown;
  try {
    value = JSON.parse(s.row);
  } catch {
    throw new TrustError("ERR_TRUST_STORE_CORRUPT", `trust row ${s.truster} -> ${s.subject} is unreadable`);
  }
  const row = parseTrustRow(value, `${s.truster} -> ${s.subject}`);
  if (row.truster !== s.truster || row.subject !== s.subject)
    throw new TrustError("ERR_TRUST_STORE_CORRUPT", `trust row ${s.truster} -> ${s.subject} is misfiled`);
  return row;
}

export class PgTrustStore implements TrustStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async #query(sql: string, args: unknown[]): Promise<TrustRow[]> {
    let rows: Stored[];
    try {
      rows = (await this.#pool.query<Stored>(sql, args)).rows;
    } catch (err) {
      throw storeError("trust table", err);
    }
    return rows.map(rowOf);
  }

  async get(truster: string, subject: string): Promise<TrustRow | undefined> {
    const rows = await this.#query(
      "SELECT truster, subject, row FROM trust_rows WHERE truster = $1 AND subject = $2",
      [truster, subject],
    );
    return rows[0];
  }

  async update<T>(
    truster: string,
    subject: string,
    fn: (row: TrustRow | undefined) => RowUpdate<T>,
  ): Promise<T> {
    try {
      return await inTransaction(this.#pool, async (c) => {
        // A row that does not exist yet cannot be locked: the pair's advisory lock covers
        // its creation (and every update of it), for this transaction.
        await c.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
          JSON.stringify([truster, subject]),
        ]);
        const r = await c.query<Stored>(
          "SELECT truster, subject, row FROM trust_rows WHERE truster = $1 AND subject = $2 FOR UPDATE",
          [truster, subject],
        );
        const current = r.rows[0] === undefined ? undefined : rowOf(r.rows[0]);
        const out = fn(current);
        if (out.row !== undefined) {
          // The NOTIFY is delivered at COMMIT: every replica reloads the row (TrustWatcher).
          await c.query(
            "WITH saved AS (INSERT INTO trust_rows (truster, subject, row, quarantine_until) VALUES ($1, $2, $3, $4) " +
              "ON CONFLICT (truster, subject) DO UPDATE SET row = excluded.row, quarantine_until = excluded.quarantine_until " +
              `RETURNING truster, subject) SELECT pg_notify('${TRUST_CHANNEL}', json_build_array(truster, subject)::text) FROM saved`,
            [
              truster,
              subject,
              canonicalJson(out.row),
              out.row.status === "quarantined" ? out.row.quarantineUntil : null,
            ],
          );
        }
        return out.result;
      });
    } catch (err) {
      if (err instanceof TrustError) throw err;
      const code = (err as { code?: unknown } | null)?.code;
      if (typeof code !== "string") throw err; // the engine's own refusal, as it is
      throw storeError("trust update", err);
    }
  }

  list(truster?: string): Promise<TrustRow[]> {
    return truster === undefined
      ? this.#query(
          'SELECT truster, subject, row FROM trust_rows ORDER BY truster COLLATE "C", subject COLLATE "C"',
          [],
        )
      : this.#query(
          'SELECT truster, subject, row FROM trust_rows WHERE truster = $1 ORDER BY subject COLLATE "C"',
          [truster],
        );
  }

  dueQuarantines(now: number): Promise<TrustRow[]> {
    return this.#query(
      "SELECT truster, subject, row FROM trust_rows WHERE quarantine_until IS NOT NULL AND quarantine_until <= $1 " +
        'ORDER BY quarantine_until, truster COLLATE "C", subject COLLATE "C"',
      [now],
    );
  }

  async addRecipient(subject: string, peer: string): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO trust_recipients (subject, peer) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        [subject, peer],
      );
    } catch (err) {
      throw storeError("trust recipients", err);
    }
  }

  async recipients(subject: string): Promise<string[]> {
    try {
      const r = await this.#pool.query<{ peer: string }>(
        'SELECT peer FROM trust_recipients WHERE subject = $1 ORDER BY peer COLLATE "C"',
        [subject],
      );
      return r.rows.map((row) => row.peer);
    } catch (err) {
      throw storeError("trust recipients", err);
    }
  }

  /** The pool belongs to the caller (shared by the node's stores). */
  async close(): Promise<void> {}
}
