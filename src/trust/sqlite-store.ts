// Trust tables on disk, beside the journal (`<journal>.trust.db`, like the principal state
// store): one row per (truster, subject) holding the row as canonical JSON, plus the two
// columns the due-quarantine query needs. The file is created 0600; `update` runs inside
// one IMMEDIATE transaction, so the read-change-write of a row is atomic across
// processes sharing the file.

import type Database from "better-sqlite3";
import { canonicalJson, TrustError } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";
import { parseTrustRow, type RowUpdate, type TrustStore } from "./store.js";
import type { TrustRow } from "./table.js";

interface Stored {
  truster: string;
  subject: string;
  record: string;
}

function parseStored(s: Stored): TrustRow {
  let value: unknown;
  try {
    value = JSON.parse(s.record);
  } catch {
    value = undefined;
  }
  const row = parseTrustRow(value, `${s.truster} -> ${s.subject}`);
  if (row.truster !== s.truster || row.subject !== s.subject) {
    throw new TrustError("ERR_TRUST_STORE_CORRUPT", `trust row ${s.truster} -> ${s.subject} is unreadable`);
  }
  return row;
}

export class SqliteTrustStore implements TrustStore {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string, string], Stored>;
  readonly #put: Database.Statement<[string, string, string, string, number | null]>;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.#db = db;
    db.exec(
      "CREATE TABLE IF NOT EXISTS trust_rows (truster TEXT NOT NULL, subject TEXT NOT NULL, " +
        "status TEXT NOT NULL, quarantine_until INTEGER, record TEXT NOT NULL, " +
        "PRIMARY KEY (truster, subject)) STRICT",
    );
    db.exec("CREATE INDEX IF NOT EXISTS trust_rows_due ON trust_rows (status, quarantine_until)");
    db.exec(
      "CREATE TABLE IF NOT EXISTS assertion_recipients (subject TEXT NOT NULL, peer TEXT NOT NULL, " +
        "PRIMARY KEY (subject, peer)) STRICT",
    );
    this.#get = db.prepare(
      "SELECT truster, subject, record FROM trust_rows WHERE truster = ? AND subject = ?",
    );
    this.#put = db.prepare(
      "INSERT INTO trust_rows (truster, subject, record, status, quarantine_until) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT(truster, subject) DO UPDATE SET record = excluded.record, status = excluded.status, " +
        "quarantine_until = excluded.quarantine_until",
    );
  }

  /** Opens (creating 0600 when missing) the trust table file; ":memory:" for tests. */
  static open(path: string): SqliteTrustStore {
    let db: Database.Database;
    try {
      db = openPrivateSqlite(path);
    } catch (err) {
      throw new TrustError("ERR_TRUST_STORE_OPEN", `cannot open trust store ${path}`, { cause: err });
    }
    return new SqliteTrustStore(path, db);
  }

  async get(truster: string, subject: string): Promise<TrustRow | undefined> {
    const s = this.#get.get(truster, subject);
    return s === undefined ? undefined : parseStored(s);
  }

  async update<T>(
    truster: string,
    subject: string,
    fn: (row: TrustRow | undefined) => RowUpdate<T>,
  ): Promise<T> {
    const run = this.#db.transaction((): T => {
      const s = this.#get.get(truster, subject);
      const out = fn(s === undefined ? undefined : parseStored(s));
      const row = out.row;
      if (row !== undefined) {
        if (row.truster !== truster || row.subject !== subject) {
          throw new TrustError("ERR_TRUST_STORE_CORRUPT", "an update may not move a row to another key");
        }
        this.#put.run(truster, subject, canonicalJson(row), row.status, row.quarantineUntil);
      }
      return out.result;
    });
    return run.immediate();
  }

  async list(truster?: string): Promise<TrustRow[]> {
    const rows =
      truster === undefined
        ? this.#db
            .prepare<[], Stored>("SELECT truster, subject, record FROM trust_rows ORDER BY truster, subject")
            .all()
        : this.#db
            .prepare<[string], Stored>(
              "SELECT truster, subject, record FROM trust_rows WHERE truster = ? ORDER BY subject",
            )
            .all(truster);
    return rows.map(parseStored);
  }

  async dueQuarantines(now: number): Promise<TrustRow[]> {
    return this.#db
      .prepare<[number], Stored>(
        "SELECT truster, subject, record FROM trust_rows WHERE status = 'quarantined' AND quarantine_until <= ? " +
          "ORDER BY quarantine_until, truster, subject",
      )
      .all(now)
      .map(parseStored);
  }

  async addRecipient(subject: string, peer: string): Promise<void> {
    this.#db
      .prepare("INSERT OR IGNORE INTO assertion_recipients (subject, peer) VALUES (?, ?)")
      .run(subject, peer);
  }

  async recipients(subject: string): Promise<string[]> {
    return this.#db
      .prepare<[string], { peer: string }>(
        "SELECT peer FROM assertion_recipients WHERE subject = ? ORDER BY peer",
      )
      .all(subject)
      .map((r) => r.peer);
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}
