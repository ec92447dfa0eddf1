// The embedded journal store: one SQLite file, WAL, synchronous=FULL by default (a
// commit is fsynced before the append resolves; durability "os" is the documented
// opt-in synchronous=NORMAL). The file and its -wal/-shm are created 0600. Appends run in BEGIN IMMEDIATE transactions
// that read the head inside the lock, so writers in other processes serialize on
// the file lock rather than forking the chain; seq is the primary key. better-sqlite3 is synchronous: a
// commit blocks the event loop for its fsync, which is what makes group commit
// (many appends, one transaction) pay off. There is no index on hash or prev_hash:
// random 32-byte keys scatter B-tree writes and cost more than the signature; the
// in-transaction check that each entry extends the head already rules out forks.
import { closeSync, fchmodSync, openSync } from "node:fs";
import Database from "better-sqlite3";
import { JournalError } from "../contracts/index.js";
import type { JournalEntry, JournalHead, SealedEntry } from "./entry.js";
import {
  assertExtends,
  entryOrThrow,
  JOURNAL_COLUMNS,
  type JournalRow,
  rowToEntry,
  sqliteQuery,
} from "./rows.js";
import { type JournalQuery, type JournalStore, MalformedRecord } from "./store.js";

const SCHEMA_VERSION = 2;

// The decision column is generated from the body, so it can never disagree with
// the signed content it is derived from; it exists only to be indexed. Version 2
// added the Gate's merged decision entry (warden.gate.decision, `$.decision`).
const DECISION_COLUMN = `decision  TEXT GENERATED ALWAYS AS (
    CASE
      WHEN type = 'warden.gate.decision' THEN json_extract(body, '$.decision')
      WHEN type IN ('dare.policy.decision', 'gate.policy.decision') THEN json_extract(body, '$.result.decision')
      WHEN type IN ('dare.tool.response', 'gate.tool.response') THEN json_extract(body, '$.policy.decision')
      WHEN type IN ('dare.hitl.decision', 'gate.hitl.decision') THEN json_extract(body, '$.decision.action')
    END
  ) VIRTUAL`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS journal_entries (
  seq       INTEGER PRIMARY KEY CHECK (seq >= 1),
  time      TEXT NOT NULL,
  type      TEXT NOT NULL,
  run_id    TEXT,
  trace_id  TEXT,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL,
  key_id    TEXT NOT NULL,
  signature TEXT NOT NULL,
  body      TEXT NOT NULL,
  ${DECISION_COLUMN}
) STRICT;
CREATE INDEX IF NOT EXISTS journal_entries_run ON journal_entries (run_id, seq);
CREATE INDEX IF NOT EXISTS journal_entries_time ON journal_entries (time);
CREATE INDEX IF NOT EXISTS journal_entries_type ON journal_entries (type, seq);
CREATE INDEX IF NOT EXISTS journal_entries_decision ON journal_entries (decision, seq);
`;

/**
 * Rows per INSERT statement (10 parameters each, far below SQLite's limit): a batch of
 * up to 64 appends (64 in flight) is one statement, so the transaction has a single
 * write statement and SQLite's statement journal has no page to save.
 */
const ROWS = 64;
const PAGE = 2000;

export interface SqliteStoreOptions {
  /** Open an existing journal for reading only (verification, export). */
  readonly?: boolean;
  /** How long a writer waits for another process's write lock (default 10 s). */
  busyTimeoutMs?: number;
  /**
   * When an append counts as durable. "fsync" (default): WAL with synchronous=FULL,
   * every commit is fsynced before its append resolves, so it survives a power loss.
   * "os" (opt-in, never the default): synchronous=NORMAL, the commit is in the OS
   * page cache when the append resolves; it survives a crash of the process but not
   * of the machine (like PostgreSQL's synchronous_commit=off). docs/journal.md §7.
   */
  durability?: Durability;
}

export type Durability = "fsync" | "os";

export class SqliteJournalStore implements JournalStore {
  readonly path: string;
  readonly #db: Database.Database;
  readonly #append: (build: (last: JournalEntry | null) => SealedEntry[]) => JournalEntry[];
  readonly #last: Database.Statement<[], JournalRow>;
  readonly #get: Database.Statement<[number], JournalRow>;
  readonly #page: Database.Statement<[number, number, number], JournalRow>;
  /** Transactions this handle committed (each one fsync in durability "fsync"); for benchmarks. */
  #commits = 0;
  /** A copy of the last entry this store committed, to skip reading it back. */
  #lastWritten: JournalEntry | null = null;
  #closed = false;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.#db = db;
    this.#last = db.prepare(`SELECT ${JOURNAL_COLUMNS} FROM journal_entries ORDER BY seq DESC LIMIT 1`);
    this.#get = db.prepare(`SELECT ${JOURNAL_COLUMNS} FROM journal_entries WHERE seq = ?`);
    this.#page = db.prepare(
      `SELECT ${JOURNAL_COLUMNS} FROM journal_entries WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
    );
    const head = db.prepare<[], { seq: number; hash: string }>(
      "SELECT seq, hash FROM journal_entries ORDER BY seq DESC LIMIT 1",
    );
    // Rows are inserted up to ROWS per statement: one statement step per row cost
    // more than SQLite's own work for a small entry. Statements by row count, made once.
    const inserts: Database.Statement<unknown[]>[] = [];
    const insertOf = (rows: number) => {
      let st = inserts[rows];
      if (st === undefined) {
        const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
        st = db.prepare<unknown[]>(`INSERT INTO journal_entries (${JOURNAL_COLUMNS}) VALUES ${values}`);
        inserts[rows] = st;
      }
      return st;
    };
    const tx = db.transaction((build: (last: JournalEntry | null) => SealedEntry[]) => {
      // The entry this store wrote last is still the head if the head row has its seq
      // and hash (the hash covers every field): reading it back would parse its body.
      const h = head.get();
      const cached = this.#lastWritten;
      const last =
        h === undefined
          ? null
          : cached !== null && cached.seq === h.seq && cached.hash === h.hash
            ? cached
            : entryOrThrow(this.#last.get());
      const sealed = build(last);
      assertExtends(last, sealed);
      for (let i = 0; i < sealed.length; i += ROWS) {
        const n = Math.min(ROWS, sealed.length - i);
        const args = new Array<unknown>(n * 10);
        for (let k = 0; k < n; k++) {
          const { entry, bodyJson } = sealed[i + k]!;
          const a = k * 10;
          args[a] = entry.seq;
          args[a + 1] = entry.time;
          args[a + 2] = entry.type;
          args[a + 3] = entry.run_id;
          args[a + 4] = entry.trace_id;
          args[a + 5] = entry.prev_hash;
          args[a + 6] = entry.hash;
          args[a + 7] = entry.key_id;
          args[a + 8] = entry.signature;
          args[a + 9] = bodyJson;
        }
        insertOf(n).run(...args);
      }
      return sealed.map((s) => s.entry);
    });
    this.#append = (build) => {
      try {
        const entries = tx.immediate(build);
        this.#commits++;
        const tail = entries.at(-1);
        // A private copy: callers own the entries they get back and may change them.
        if (tail !== undefined) this.#lastWritten = structuredClone(tail);
        return entries;
      } catch (err) {
        this.#lastWritten = null;
        throw err;
      }
    };
  }

  /** Opens (creating unless readonly) the journal file at `path`. */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteJournalStore {
    const busyTimeout = Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000));
    const durability = options.durability ?? "fsync";
    if (durability !== "fsync" && durability !== "os") {
      throw new JournalError("ERR_JOURNAL_STORE", 'durability must be "fsync" or "os"');
    }
    let db: Database.Database;
    try {
      if (!options.readonly) createPrivate(path);
      db = new Database(path, options.readonly ? { readonly: true, fileMustExist: true } : {});
    } catch (err) {
      throw new JournalError("ERR_JOURNAL_STORE", `cannot open journal ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      db.pragma(`busy_timeout = ${busyTimeout}`);
      if (!options.readonly) {
        enableWal(db, busyTimeout);
        db.pragma(`synchronous = ${durability === "os" ? "NORMAL" : "FULL"}`);
        // The statement journal (a multi-statement transaction's undo of one statement)
        // in memory rather than in a temporary file: it is never read after a crash
        // (the WAL is). With 64 rows per INSERT, a fifth fewer file writes per commit
        // (strace, 64 in flight). A large query's sort is in memory too; query()
        // holds its whole result in memory anyway.
        db.pragma("temp_store = MEMORY");
        db.transaction(() => {
          const version = db.pragma("user_version", { simple: true }) as number;
          if (version > SCHEMA_VERSION) {
            throw new JournalError(
              "ERR_JOURNAL_STORE",
              `journal schema version ${version} is newer than this Warden`,
            );
          }
          if (version === 1) migrateFrom1(db);
          db.exec(SCHEMA);
          db.pragma(`user_version = ${SCHEMA_VERSION}`);
        }).immediate();
      } else {
        const found = db
          .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'journal_entries'")
          .get();
        if (found === undefined) throw new JournalError("ERR_JOURNAL_STORE", `${path} holds no journal`);
      }
      return new SqliteJournalStore(path, db);
    } catch (err) {
      db.close();
      if (err instanceof JournalError) throw err;
      throw new JournalError("ERR_JOURNAL_STORE", `cannot open journal ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  #open(): void {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal store is closed");
  }

  async appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]> {
    this.#open();
    try {
      return this.#append(build);
    } catch (err) {
      if (err instanceof JournalError) throw err;
      if (
        err instanceof Error &&
        "code" in err &&
        typeof err.code === "string" &&
        err.code.startsWith("SQLITE_")
      ) {
        throw new JournalError("ERR_JOURNAL_STORE", `append failed: ${err.code}`, { cause: err });
      }
      throw err;
    }
  }

  /** Write transactions this handle committed since it was opened. */
  get commits(): number {
    return this.#commits;
  }

  /** The connection's synchronous level as SQLite reports it: 2 = FULL, 1 = NORMAL. */
  get synchronous(): number {
    this.#open();
    return this.#db.pragma("synchronous", { simple: true }) as number;
  }

  async last(): Promise<JournalEntry | null> {
    this.#open();
    return entryOrThrow(this.#last.get());
  }

  async head(): Promise<JournalHead | null> {
    const last = await this.last();
    return last === null ? null : { seq: last.seq, hash: last.hash, time: last.time, key_id: last.key_id };
  }

  async get(seq: number): Promise<JournalEntry | null> {
    this.#open();
    return entryOrThrow(this.#get.get(seq));
  }

  async count(): Promise<number> {
    this.#open();
    return (this.#db.prepare("SELECT count(*) AS n FROM journal_entries").get() as { n: number }).n;
  }

  async *entries(
    fromSeq = 1,
    toSeq = Number.MAX_SAFE_INTEGER,
  ): AsyncIterable<JournalEntry | MalformedRecord> {
    this.#open();
    let next = fromSeq;
    for (;;) {
      // Pages, not one long iterate(): a live cursor would block appends on this connection.
      const rows = this.#page.all(next, toSeq, PAGE);
      for (const row of rows) yield rowToEntry(row);
      const lastRow = rows.at(-1);
      if (rows.length < PAGE || lastRow === undefined) return;
      next = Number(lastRow.seq) + 1;
    }
  }

  async query(q: JournalQuery): Promise<JournalEntry[]> {
    this.#open();
    const { sql: filter, args } = sqliteQuery(q);
    const sql = `SELECT ${JOURNAL_COLUMNS} FROM journal_entries${filter}`;
    const out: JournalEntry[] = [];
    for (const row of this.#db.prepare(sql).all(...args) as JournalRow[]) {
      const e = rowToEntry(row);
      if (!(e instanceof MalformedRecord)) out.push(e);
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}

/**
 * Switches the file to WAL. Two processes creating the same new journal at once can get
 * SQLITE_BUSY from this pragma at once, without SQLite calling the busy handler (both hold
 * a shared lock and want an exclusive one); retry until the busy timeout has passed.
 */
function enableWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, 2 + Math.floor(Math.random() * 8));
    }
  }
}

/**
 * Creates a new journal file 0600 before SQLite opens it: SQLite gives the -wal and
 * -shm files it creates the mode of the database file, so they are 0600 too. A file
 * that already exists (another process created it first) is left as it is.
 */
function createPrivate(path: string): void {
  if (path === "" || path === ":memory:" || path.startsWith("file:")) return;
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return;
    throw err;
  }
  try {
    // The process umask may only have removed bits; make the mode exact.
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

/**
 * Version 1 → 2: the decision column gets its new expression. A VIRTUAL column holds
 * no data, so dropping and re-adding it rewrites no row; its index is rebuilt by
 * SCHEMA. Runs inside open()'s write transaction, so it happens whole or not at all.
 */
function migrateFrom1(db: Database.Database): void {
  db.exec("DROP INDEX IF EXISTS journal_entries_decision");
  db.exec("ALTER TABLE journal_entries DROP COLUMN decision");
  db.exec(`ALTER TABLE journal_entries ADD COLUMN ${DECISION_COLUMN}`);
}
