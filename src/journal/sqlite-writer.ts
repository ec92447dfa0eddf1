// The SQLite store's optional writer thread. better-sqlite3 is synchronous: the
// insert, the WAL write and the commit's fsync block the thread that runs them,
// for about 20 µs of CPU per 1.5 KB entry at 32 entries per transaction. With a
// writer thread that work runs on another core. One round trip per batch: the
// appending thread builds (chains and signs) the batch on the head it expects —
// the entry it committed last — and sends the rows; the writer begins the write
// transaction, and commits them only if that is the head read inside the lock.
// Otherwise (another process appended) it keeps the lock and returns the real
// head, the batch is built again on it, and the second message commits. The
// rules do not change: what is committed extends the head read inside the lock,
// and appendBatch resolves only after the commit. The worker is plain
// CommonJS evaluated from a string (as crypto-pool.ts), given the module path of
// better-sqlite3.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.sqlite);
const COLUMNS = workerData.columns;
const db = new Database(workerData.path);
db.pragma("busy_timeout = " + workerData.busyTimeoutMs);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
const head = db.prepare("SELECT seq, hash FROM journal_entries ORDER BY seq DESC LIMIT 1");
const lastRow = db.prepare("SELECT " + COLUMNS + " FROM journal_entries ORDER BY seq DESC LIMIT 1");
const inserts = [];
const insertOf = (n) => {
  let st = inserts[n];
  if (st === undefined) {
    const values = Array.from({ length: n }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    st = inserts[n] = db.prepare("INSERT INTO journal_entries (" + COLUMNS + ") VALUES " + values);
  }
  return st;
};
let inTx = false;
const rollback = () => {
  if (!inTx) return;
  inTx = false;
  try { db.exec("ROLLBACK"); } catch {}
};
// Rows arrive as one string and its cut points (9 text fields per row, run_id and
// trace_id null when flagged), cheaper to post than hundreds of strings.
const insertRows = (b, per) => {
  const n = b.seqs.length;
  let at = 0, f = 0;
  const next = () => { const s = b.text.slice(at, b.ends[f]); at = b.ends[f++]; return s; };
  for (let i = 0; i < n; i += per) {
    const k = Math.min(per, n - i);
    const args = new Array(k * 10);
    for (let r = 0; r < k; r++) {
      const row = i + r, a = r * 10;
      args[a] = b.seqs[row];
      for (let c = 1; c < 10; c++) args[a + c] = next();
      if (b.nulls[row] & 1) args[a + 3] = null;
      if (b.nulls[row] & 2) args[a + 4] = null;
    }
    insertOf(k).run(...args);
  }
};
parentPort.on("message", (m) => {
  try {
    if (m.op === "append") {
      // Built on the head the caller expects: insert and commit if that is the head
      // inside the lock; otherwise keep the lock and hand back the real head.
      db.exec("BEGIN IMMEDIATE");
      inTx = true;
      const h = head.get();
      if ((h === undefined ? 0 : h.seq) !== m.seq || (h === undefined ? null : h.hash) !== m.hash) {
        parentPort.postMessage({ id: m.id, moved: true, head: h === undefined ? null : h, row: h === undefined ? null : lastRow.get() });
        return;
      }
      insertRows(m.rows, m.per);
      db.exec("COMMIT");
      inTx = false;
      parentPort.postMessage({ id: m.id });
    } else if (m.op === "begin") {
      db.exec("BEGIN IMMEDIATE");
      inTx = true;
      const h = head.get();
      // The row only when the head is not the entry the caller already holds.
      const row = h !== undefined && !(h.seq === m.seq && h.hash === m.hash) ? lastRow.get() : null;
      parentPort.postMessage({ id: m.id, head: h === undefined ? null : h, row });
    } else if (m.op === "commit") {
      insertRows(m.rows, m.per);
      db.exec("COMMIT");
      inTx = false;
      parentPort.postMessage({ id: m.id });
    } else if (m.op === "rollback") {
      rollback();
      parentPort.postMessage({ id: m.id });
    } else if (m.op === "close") {
      rollback();
      db.close();
      parentPort.postMessage({ id: m.id });
    }
  } catch (err) {
    if (m.op !== "rollback") rollback();
    parentPort.postMessage({ id: m.id, error: { code: typeof err.code === "string" ? err.code : "ERROR", message: String(err.message) } });
  }
});
`;

/** A batch of rows as the writer thread takes it (see insertRows in the worker source). */
export interface RowBatch {
  seqs: Float64Array;
  /** Bit 0: run_id is null; bit 1: trace_id is null. */
  nulls: Uint8Array;
  text: string;
  /** End of each text field in `text`: time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body. */
  ends: Uint32Array;
}

export interface WriterReply {
  id: number;
  head?: { seq: number; hash: string } | null;
  /** The head was not the expected one; the transaction stays open for a "commit". */
  moved?: boolean;
  row?: Record<string, unknown> | null;
  error?: { code: string; message: string };
}

/** One writer connection on its own thread; calls are answered in order. */
export class SqliteWriter {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { done: (m: WriterReply) => void; fail: (err: Error) => void }>();
  #nextId = 0;
  #lost: Error | null = null;

  constructor(path: string, columns: string, busyTimeoutMs: number) {
    const sqlite = createRequire(import.meta.url).resolve("better-sqlite3");
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, columns, busyTimeoutMs, sqlite },
    });
    this.#worker.on("message", (m: WriterReply) => {
      const w = this.#waiting.get(m.id);
      this.#waiting.delete(m.id);
      if (this.#waiting.size === 0) this.#worker.unref();
      w?.done(m);
    });
    const lost = (err: Error) => {
      this.#lost ??= err;
      for (const [id, w] of this.#waiting) {
        this.#waiting.delete(id);
        w.fail(err);
      }
      this.#worker.unref();
    };
    this.#worker.on("error", lost);
    this.#worker.on("exit", (code) => lost(new Error(`journal writer thread exited (${code})`)));
    // An idle writer must not keep the process alive; one with a call in flight must.
    this.#worker.unref();
  }

  /** Sends one request; rejects if the thread is gone. Replies with `error` are returned, not thrown. */
  call(message: Record<string, unknown>): Promise<WriterReply> {
    if (this.#lost !== null) return Promise.reject(this.#lost);
    return new Promise((done, fail) => {
      const id = this.#nextId++;
      if (this.#waiting.size === 0) this.#worker.ref();
      this.#waiting.set(id, { done, fail });
      this.#worker.postMessage({ ...message, id });
    });
  }

  async close(): Promise<void> {
    if (this.#lost === null) {
      try {
        await this.call({ op: "close" });
      } catch {
        // Already gone: nothing to close.
      }
    }
    await this.#worker.terminate();
  }
}
