// Taint carried at the principal, on disk (issue 37): a SQLite-backed PrincipalTaintStore
// beside the principal state, so a run started after a restart still carries the taint
// of the principal's runs active within the window. One row per (principal, taint
// source) holding the latest label, the run that held it and when it was last active; a
// write never moves `at` backwards. A row that does not parse is a fault
// (ERR_RUNTIME_STATE_CORRUPT), never "no taint".
import type Database from "better-sqlite3";
import { type CarriedTaint, type PrincipalTaintStore, parseCarried } from "../context/index.js";
import { canonicalJson, RuntimeError } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";

interface Row {
  run_id: string;
  label: string;
  at: number;
}

export class SqlitePrincipalTaintStore implements PrincipalTaintStore {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string, number], Row>;
  readonly #put: Database.Statement<[string, string, string, string, number]>;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.#db = db;
    db.exec(
      "CREATE TABLE IF NOT EXISTS principal_taint (principal_id TEXT NOT NULL, source TEXT NOT NULL, " +
        "run_id TEXT NOT NULL, label TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (principal_id, source)) STRICT",
    );
    this.#get = db.prepare(
      "SELECT run_id, label, at FROM principal_taint WHERE principal_id = ? AND at >= ?",
    );
    this.#put = db.prepare(
      "INSERT INTO principal_taint (principal_id, source, run_id, label, at) VALUES (?, ?, ?, ?, ?) " +
        "ON CONFLICT(principal_id, source) DO UPDATE SET run_id = excluded.run_id, label = excluded.label, " +
        "at = excluded.at WHERE excluded.at >= principal_taint.at",
    );
  }

  /** Opens (creating 0600 when missing) the state file; ":memory:" for tests. */
  static open(path: string): SqlitePrincipalTaintStore {
    let db: Database.Database;
    try {
      db = openPrivateSqlite(path);
    } catch (err) {
      throw new RuntimeError("ERR_RUNTIME_STATE_OPEN", `cannot open carried taint ${path}`, { cause: err });
    }
    return new SqlitePrincipalTaintStore(path, db);
  }

  load(principalId: string, since: number): CarriedTaint[] {
    return this.#get.all(principalId, since).map((row) => parseCarried(principalId, row));
  }

  save(principalId: string, entries: readonly CarriedTaint[]): void {
    const tx = this.#db.transaction(() => {
      for (const e of entries)
        this.#put.run(principalId, e.label.source, e.runId, canonicalJson(e.label), Math.floor(e.at));
    });
    tx();
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
