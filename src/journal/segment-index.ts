// The segment journal's derived index (docs/journal.md §8.6): one SQLite row per entry
// holding the fields queries filter on and where the entry sits in the segments
// (segment, offset and length of its record's payload) — never the entry itself,
// whose one copy is the segment record. synchronous=OFF: the file is rebuilt from the
// segments whenever it is missing, behind, of another format or disagrees with them.
import { closeSync, fchmodSync, openSync } from "node:fs";
import Database from "better-sqlite3";
import { GATE_DECISION, JournalError } from "../contracts/index.js";
import { sqliteQuery } from "./rows.js";
import type { JournalQuery } from "./store.js";

/** The table whose presence marks a file as a segment journal's derived index. */
export const INDEX_MARK = "journal_index_of_segments";
/** The index format: 3 = fields and positions only (2 held every entry whole). */
const INDEX_VERSION = 3;

/** What the index knows of one entry. */
export interface IndexRow {
  seq: number;
  time: string;
  type: string;
  run_id: string | null;
  /** The decision the body carries (null: none, or not known yet — see `body`). */
  decision: string | null;
  hash: string;
  /** First seq of the segment file holding the entry, and its payload's offset and length there. */
  segment: number;
  offset: number;
  length: number;
  /** The body's canonical text, when the decision is to be read from it by SQLite. */
  body?: string | null;
}

/** Where each decision-carrying type keeps its decision (JSON path into the body). */
export const DECISION_PATHS: Readonly<Record<string, readonly string[]>> = {
  [GATE_DECISION]: ["decision"],
  "dare.policy.decision": ["result", "decision"],
  "gate.policy.decision": ["result", "decision"],
  "dare.tool.response": ["policy", "decision"],
  "gate.tool.response": ["policy", "decision"],
  "dare.hitl.decision": ["decision", "action"],
  "gate.hitl.decision": ["decision", "action"],
};

/** The decision a parsed body carries when it is a string (other values are left to SQLite's json_extract). */
export function decisionOf(type: string, body: unknown): string | null | undefined {
  const path = DECISION_PATHS[type];
  if (path === undefined) return null;
  let v: unknown = body;
  for (const k of path)
    v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return typeof v === "string" ? v : v === undefined ? null : undefined;
}

const TABLE = `
CREATE TABLE IF NOT EXISTS journal_index (
  seq      INTEGER PRIMARY KEY CHECK (seq >= 1),
  time     TEXT NOT NULL,
  type     TEXT NOT NULL,
  run_id   TEXT,
  decision TEXT,
  hash     TEXT NOT NULL,
  segment  INTEGER NOT NULL,
  offset   INTEGER NOT NULL,
  length   INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS ${INDEX_MARK} (version INTEGER) STRICT;`;
const INDEXES = `
CREATE INDEX IF NOT EXISTS journal_index_run ON journal_index (run_id, seq);
CREATE INDEX IF NOT EXISTS journal_index_time ON journal_index (time);
CREATE INDEX IF NOT EXISTS journal_index_type ON journal_index (type, seq);
CREATE INDEX IF NOT EXISTS journal_index_decision ON journal_index (decision, seq);`;
const COLUMNS = "seq, time, type, run_id, decision, hash, segment, offset, length";
/** Rows per INSERT statement (11 parameters each). */
const ROWS = 64;

function mark(db: Database.Database): number | null {
  const found = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(INDEX_MARK);
  if (found === undefined) return null;
  const v = db.prepare(`SELECT version FROM ${INDEX_MARK} LIMIT 1`).get() as { version: number } | undefined;
  // A marker without a version row: the format before positions (version 2).
  return v?.version ?? 2;
}

/** Whether `path` is a segment journal's index (of any format), not a journal of its own. */
export function isIndexFile(path: string): boolean {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch {
    return false;
  }
  try {
    return mark(db) !== null;
  } catch {
    return false;
  } finally {
    db.close();
  }
}

export class SegmentIndex {
  readonly #db: Database.Database;
  readonly #inserts: Database.Statement<unknown[]>[] = [];
  readonly #head: Database.Statement<[], { seq: number; hash: string }>;
  readonly #get: Database.Statement<[number], IndexRow>;
  readonly #page: Database.Statement<[number, number, number], IndexRow>;
  readonly #count: Database.Statement<[], { n: number }>;

  private constructor(db: Database.Database) {
    this.#db = db;
    this.#head = db.prepare("SELECT seq, hash FROM journal_index ORDER BY seq DESC LIMIT 1");
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM journal_index WHERE seq = ?`);
    this.#page = db.prepare(
      `SELECT ${COLUMNS} FROM journal_index WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
    );
    this.#count = db.prepare("SELECT count(*) AS n FROM journal_index");
  }

  /**
   * Opens (creating) the index at `path`. Null when the file is not an index of this
   * format (an earlier index, an unreadable file): the caller deletes and rebuilds it.
   * `bare`: a new file gets its table without the secondary indexes (a bulk build adds them).
   */
  static open(path: string, busyTimeoutMs: number, bare = false): SegmentIndex | null {
    createPrivate(path);
    const db = new Database(path);
    try {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = OFF");
      db.pragma("temp_store = MEMORY");
      const ok = db
        .transaction(() => {
          const version = mark(db);
          if (version !== null && version !== INDEX_VERSION) return false;
          const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number };
          if (version === null && tables.n > 0) return false;
          db.exec(TABLE);
          if (version === null)
            db.prepare(`INSERT INTO ${INDEX_MARK} (version) VALUES (?)`).run(INDEX_VERSION);
          // (Also completes an index whose bulk build was interrupted before its secondary indexes.)
          if (!bare) db.exec(INDEXES);
          return true;
        })
        .immediate();
      if (ok) return new SegmentIndex(db);
    } catch {
      // An unreadable file: rebuilt like one of another format.
    }
    db.close();
    return null;
  }

  head(): { seq: number; hash: string } | null {
    return this.#head.get() ?? null;
  }

  #insertOf(n: number): Database.Statement<unknown[]> {
    let st = this.#inserts[n];
    if (st === undefined) {
      const one = "(?, ?, ?, ?, coalesce(?, json_extract(?, ?)), ?, ?, ?, ?)";
      const values = Array.from({ length: n }, () => one).join(", ");
      st = this.#db.prepare<unknown[]>(`INSERT INTO journal_index (${COLUMNS}) VALUES ${values}`);
      this.#inserts[n] = st;
    }
    return st;
  }

  /** Inserts rows (consecutive seqs after the head), up to 64 per statement; the caller holds a transaction. */
  #insert(rows: readonly IndexRow[]): void {
    for (let i = 0; i < rows.length; i += ROWS) {
      const n = Math.min(ROWS, rows.length - i);
      const args = new Array<unknown>(n * 11);
      for (let k = 0; k < n; k++) {
        const r = rows[i + k]!;
        const a = k * 11;
        const path = r.body == null ? undefined : DECISION_PATHS[r.type];
        args[a] = r.seq;
        args[a + 1] = r.time;
        args[a + 2] = r.type;
        args[a + 3] = r.run_id;
        args[a + 4] = r.decision;
        args[a + 5] = path === undefined ? null : r.body;
        args[a + 6] = path === undefined ? null : `$.${path.join(".")}`;
        args[a + 7] = r.hash;
        args[a + 8] = r.segment;
        args[a + 9] = r.offset;
        args[a + 10] = r.length;
      }
      this.#insertOf(n).run(...args);
    }
  }

  /**
   * In one write transaction: reads the head seq, asks `next` for the rows that follow
   * it (consecutive, from head + 1) and inserts them. Returns how many it inserted.
   */
  extend(next: (headSeq: number) => readonly IndexRow[]): number {
    return this.#db
      .transaction(() => {
        const head = this.#head.get()?.seq ?? 0;
        const rows = next(head);
        if (rows.length > 0 && rows[0]!.seq !== head + 1) {
          throw new JournalError(
            "ERR_JOURNAL_STORE",
            `index rows from ${rows[0]!.seq} do not follow ${head}`,
          );
        }
        this.#insert(rows);
        return rows.length;
      })
      .immediate();
  }

  /**
   * Fills a new index from `batches` in one transaction, then adds the secondary
   * indexes (building a B-tree from sorted rows costs less than keeping it sorted
   * row by row). Returns the rows inserted.
   */
  bulk(batches: Iterable<readonly IndexRow[]>): number {
    let n = 0;
    this.#db
      .transaction(() => {
        for (const rows of batches) {
          this.#insert(rows);
          n += rows.length;
        }
        this.#db.exec(INDEXES);
      })
      .immediate();
    return n;
  }

  get(seq: number): IndexRow | undefined {
    return this.#get.get(seq);
  }

  page(from: number, to: number, limit: number): IndexRow[] {
    return this.#page.all(from, to, limit);
  }

  count(): number {
    return this.#count.get()!.n;
  }

  query(q: JournalQuery): IndexRow[] {
    const { sql: filter, args } = sqliteQuery(q);
    const sql = `SELECT ${COLUMNS} FROM journal_index${filter}`;
    return this.#db.prepare(sql).all(...args) as IndexRow[];
  }

  close(): void {
    this.#db.close();
  }
}

/** A new index file is created 0600 (SQLite gives its -wal and -shm the same mode). */
function createPrivate(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch {
    return;
  }
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}
