// APAE trust tables shared by every replica (src/trust TrustStore). `update` is optimistic:
// it reads the row, runs the engine's synchronous (pure) callback, and writes the new row with
// ONE conditional statement — `UPDATE … WHERE row = <the row read>`, or `INSERT … ON CONFLICT
// DO NOTHING` for a row that did not exist — retried from the read when another node wrote
// first. No lock is ever held across a client round trip (issue 36): a replica paused in the
// middle of an update holds nothing, and two nodes applying events to the same (truster,
// subject) never lose one (the loser re-reads and re-applies). Rows read back are validated
// (ERR_TRUST_STORE_CORRUPT), never read as a fresh score. Ordering is by code point
// (COLLATE "C"), as the in-memory store sorts. Every write NOTIFYs `warden_trust` with
// `[truster, subject]` in its statement, so other replicas' cached tables follow.
import type pg from "pg";
import { canonicalJson, TrustError } from "../contracts/index.js";
import { parseTrustRow, type RowUpdate, type TrustRow, type TrustStore } from "../trust/index.js";
import { storeError } from "./connect.js";

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

/** Attempts of one update when other writers keep changing the row first. */
const CAS_TRIES = 64;
const NOTIFY = `SELECT pg_notify('${TRUST_CHANNEL}', json_build_array(truster, subject)::text) FROM saved`;
const INSERT_IF_ABSENT =
  "WITH saved AS (INSERT INTO trust_rows (truster, subject, row, quarantine_until) VALUES ($1, $2, $3, $4) " +
  `ON CONFLICT (truster, subject) DO NOTHING RETURNING truster, subject) ${NOTIFY}`;
const UPDATE_IF_UNCHANGED =
  "WITH saved AS (UPDATE trust_rows SET row = $3, quarantine_until = $4 " +
  `WHERE truster = $1 AND subject = $2 AND row = $5 RETURNING truster, subject) ${NOTIFY}`;

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
      for (let i = 0; i < CAS_TRIES; i++) {
        const r = await this.#pool.query<Stored>(
          "SELECT truster, subject, row FROM trust_rows WHERE truster = $1 AND subject = $2",
          [truster, subject],
        );
        const read = r.rows[0];
        const out = fn(read === undefined ? undefined : rowOf(read));
        if (out.row === undefined) return out.result;
        // Written only if the row is still the one read (or still absent): one statement, no
        // lock held past it. The NOTIFY is delivered at its COMMIT (TrustWatcher).
        const until = out.row.status === "quarantined" ? out.row.quarantineUntil : null;
        const saved = await this.#pool.query(read === undefined ? INSERT_IF_ABSENT : UPDATE_IF_UNCHANGED, [
          truster,
          subject,
          canonicalJson(out.row),
          until,
          ...(read === undefined ? [] : [read.row]),
        ]);
        if (saved.rowCount === 1) return out.result;
        // Another node wrote first: a short random pause spreads the contenders out.
        await new Promise((r) => setTimeout(r, Math.random() * 2 ** Math.min(i, 6)));
      }
    } catch (err) {
      if (err instanceof TrustError) throw err;
      const code = (err as { code?: unknown } | null)?.code;
      if (typeof code !== "string") throw err; // the engine's own refusal, as it is
      throw storeError("trust update", err);
    }
    throw storeError("trust update", new Error(`row changed under ${CAS_TRIES} attempts in a row`));
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
