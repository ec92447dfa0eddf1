// Principal state on disk: a SQLite-backed PrincipalStateStore, so a quarantine entered
// in one process is still in force after a restart on the same files. One row per
// principal holding its record as canonical JSON; the file is created 0600 (SQLite gives
// its -wal and -shm files the same mode). Reads validate the row's shape: a record that
// does not parse is a fault (ERR_RUNTIME_STATE_CORRUPT), never "not quarantined".

import type Database from "better-sqlite3";
import type { PrincipalRecord, PrincipalStateStore } from "../context/index.js";
import { canonicalJson, isPlainObject, RuntimeError } from "../contracts/index.js";
import { openPrivateSqlite } from "../journal/index.js";

function parseRecord(principalId: string, text: string): PrincipalRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isPlainObject(value) || value.principalId !== principalId) {
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `principal state of ${principalId} is unreadable`);
  }
  const q = value.quarantine;
  if (q !== undefined && (!isPlainObject(q) || typeof q.runId !== "string" || typeof q.reason !== "string")) {
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `principal state of ${principalId} is unreadable`);
  }
  return value as unknown as PrincipalRecord;
}

export class SqlitePrincipalStateStore implements PrincipalStateStore {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #get: Database.Statement<[string], { record: string }>;
  readonly #put: Database.Statement<[string, string]>;
  readonly #quarantined: Database.Statement<[number], { principal_id: string; record: string }>;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.#db = db;
    db.exec(
      "CREATE TABLE IF NOT EXISTS principal_state (principal_id TEXT PRIMARY KEY, record TEXT NOT NULL) STRICT",
    );
    this.#get = db.prepare("SELECT record FROM principal_state WHERE principal_id = ?");
    this.#put = db.prepare(
      "INSERT INTO principal_state (principal_id, record) VALUES (?, ?) " +
        "ON CONFLICT(principal_id) DO UPDATE SET record = excluded.record",
    );
    this.#quarantined = db.prepare(
      "SELECT principal_id, record FROM principal_state " +
        "WHERE json_extract(record, '$.quarantine') IS NOT NULL ORDER BY principal_id LIMIT ?",
    );
  }

  /** Opens (creating 0600 when missing) the state file; ":memory:" for tests. */
  static open(path: string): SqlitePrincipalStateStore {
    let db: Database.Database;
    try {
      db = openPrivateSqlite(path);
    } catch (err) {
      throw new RuntimeError("ERR_RUNTIME_STATE_OPEN", `cannot open principal state ${path}`, { cause: err });
    }
    return new SqlitePrincipalStateStore(path, db);
  }

  load(principalId: string): PrincipalRecord | undefined {
    const row = this.#get.get(principalId);
    return row === undefined ? undefined : parseRecord(principalId, row.record);
  }

  save(record: PrincipalRecord): void {
    this.#put.run(record.principalId, canonicalJson(record));
  }

  listQuarantined(limit: number): PrincipalRecord[] {
    return this.#quarantined.all(limit).map((r) => parseRecord(r.principal_id, r.record));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
