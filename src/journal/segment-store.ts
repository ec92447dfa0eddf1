// The embedded journal store: segment files are the source of truth, SQLite a derived
// index. An append batch, holding the writers' lock, reads what other writers
// completed, checks the batch extends the head, writes it as one batch (entry records
// + commit record) with one write and one fdatasync, and resolves only then. The index
// (`<path>`, synchronous=OFF) holds each entry's fields and position, never the entry:
// it is written after the append resolved (one transaction for what ~20 ms of appends
// wrote), cross-checked against the segments on open and rebuilt from them when
// missing, behind, of another format or different (docs/journal.md §8.6); reads get
// their entries from the segments at the positions it gives. Segments live in
// `<path>.segments/`.
import { existsSync, fdatasync } from "node:fs";
import { JournalError } from "../contracts/index.js";
import type { JournalEntry, JournalHead, SealedEntry } from "./entry.js";
import { assertExtends } from "./rows.js";
import { SegmentBodies } from "./segment-bodies.js";
import { encodeBatch } from "./segment-format.js";
import type { IndexRow } from "./segment-index.js";
import { IndexKeeper } from "./segment-index-keeper.js";
import { SegmentLock } from "./segment-lock.js";
import { SegmentLog } from "./segment-log.js";
import { type JournalQuery, type JournalStore, MalformedRecord, type TailCut } from "./store.js";

export interface SegmentStoreOptions {
  /** Open for reading only (verification, export): no lock, no tail cut. */
  readonly?: boolean;
  /** How long a writer waits for another writer's lock (default 10 s). */
  busyTimeoutMs?: number;
  /** A new segment is started once the tail holds this many bytes (default 64 MiB). */
  segmentBytes?: number;
}

/** Where a journal's segments live: next to its index file. */
export const segmentDir = (path: string): string => `${path}.segments`;

/** fdatasync on a thread of libuv's pool. */
const datasync = (fd: number): Promise<void> =>
  new Promise((resolve, reject) => fdatasync(fd, (err) => (err === null ? resolve() : reject(err))));

/** Index rows read per page (entries, replay, export). */
const PAGE = 2000;
export class SegmentJournalStore implements JournalStore {
  /** The index file. */
  readonly path: string;
  readonly dir: string;
  readonly #log: SegmentLog;
  readonly #lock: SegmentLock | null;
  readonly #busyTimeoutMs: number;
  readonly #bodies: SegmentBodies;
  #keeper!: IndexKeeper;
  #cuts: TailCut[] = [];
  #listener: ((cut: TailCut) => void) | null = null;
  /** Settles when this handle's append in progress (if any) is over. */
  #writing: Promise<void> = Promise.resolve();
  /** A failed write or fdatasync: the file's state is unknown, so nothing more is appended. */
  #failed: Error | null = null;
  #commits = 0;
  #closed = false;

  private constructor(path: string, o: SegmentStoreOptions) {
    this.path = path;
    this.dir = segmentDir(path);
    this.#busyTimeoutMs = Math.max(0, Math.floor(o.busyTimeoutMs ?? 10_000));
    if (o.readonly && !existsSync(this.dir)) {
      throw new JournalError("ERR_JOURNAL_STORE", `${path} has no segments directory`);
    }
    this.#log = new SegmentLog(this.dir, !o.readonly, Math.max(4096, o.segmentBytes ?? 64 * 1024 * 1024));
    this.#lock = o.readonly ? null : new SegmentLock(this.dir, this.#busyTimeoutMs);
    if (this.#lock === null) this.#log.refresh();
    else this.#lock.hold(() => this.#cutTorn());
    this.#bodies = new SegmentBodies(this.dir);
  }

  /** Opens (creating unless readonly) the journal whose index is `path`; cuts a torn tail; checks the index. */
  static open(path: string, options: SegmentStoreOptions = {}): SegmentJournalStore {
    try {
      const store = new SegmentJournalStore(path, options);
      try {
        store.#keeper = new IndexKeeper(path, store.dir, store.#busyTimeoutMs, store.#log);
      } catch (err) {
        store.#log.close();
        store.#lock?.close();
        store.#bodies.close();
        throw err;
      }
      return store;
    } catch (err) {
      if (err instanceof JournalError) throw err;
      throw new JournalError("ERR_JOURNAL_STORE", `cannot open journal ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Cuts whatever follows the last complete batch (a write a crash tore), holding the lock. */
  #cutTorn(): void {
    for (let torn = this.#log.refresh(true); torn !== null; torn = this.#log.refresh(true)) {
      const cut = this.#log.cut(torn);
      this.#cuts.push(cut);
      this.#listener?.(cut);
    }
  }

  onTailCut(listener: (cut: TailCut) => void): void {
    this.#listener = listener;
    for (const c of this.#cuts) listener(c);
  }

  /** The cuts this handle made (tests, `journal reindex`). */
  get tailCuts(): readonly TailCut[] {
    return this.#cuts;
  }

  /** Batches this handle committed (one fdatasync each). */
  get commits(): number {
    return this.#commits;
  }

  /**
   * Appends one batch: holding the writers' lock, cuts a torn tail, builds the batch
   * on the head, writes it, and fdatasyncs it on a thread of the pool (the event loop
   * goes on — the next batch gathers meanwhile); resolves only once it is durable.
   * Appends of this handle run one at a time; a failed write or fdatasync refuses
   * every later one.
   */
  async appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]> {
    this.#usable();
    if (this.#lock === null)
      throw new JournalError("ERR_JOURNAL_STORE", "the journal is open for reading only");
    const turn = this.#writing;
    let release!: () => void;
    this.#writing = new Promise<void>((r) => {
      release = r;
    });
    try {
      await turn;
      this.#usable();
      return await this.#appendLocked(this.#lock, build);
    } finally {
      release();
    }
  }

  async #appendLocked(lock: SegmentLock, build: (last: JournalEntry | null) => SealedEntry[]) {
    lock.begin();
    try {
      this.#cutTorn();
      const last = this.#log.last;
      const batch = build(last);
      assertExtends(last, batch);
      const tail = batch.at(-1);
      if (tail === undefined) return [];
      const lengths: number[] = [];
      try {
        const w = this.#log.write(encodeBatch(batch, lengths));
        await datasync(w.fd);
        this.#log.written(w, tail.entry);
        this.#keeper.remember(batch, lengths, w);
      } catch (err) {
        this.#failed = err as Error;
        throw new JournalError("ERR_JOURNAL_STORE", `append failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
      this.#commits++;
      return batch.map((s) => s.entry);
    } finally {
      lock.end();
    }
  }

  /** Drops the index and builds it again from the segments (`warden journal reindex`). */
  async reindex(): Promise<number> {
    await this.#writing;
    this.#usable();
    this.#log.refresh();
    return this.#keeper.rebuild();
  }

  /**
   * Reads what other writers completed and brings the index up to date, so a read sees
   * every durable entry (after this handle's append in progress, if any).
   */
  async #sync(): Promise<void> {
    await this.#writing;
    this.#usable();
    this.#log.refresh();
    if ((this.#log.last?.seq ?? 0) !== (this.#keeper.index.head()?.seq ?? 0)) this.#keeper.catchUp();
  }

  #usable(): void {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal store is closed");
    if (this.#failed !== null) {
      throw new JournalError("ERR_JOURNAL_STORE", `an earlier write failed: ${this.#failed.message}`);
    }
  }

  async last(): Promise<JournalEntry | null> {
    await this.#writing;
    this.#usable();
    this.#log.refresh();
    const l = this.#log.last;
    return l === null ? null : structuredClone(l);
  }

  async head(): Promise<JournalHead | null> {
    const l = await this.last();
    return l === null ? null : { seq: l.seq, hash: l.hash, time: l.time, key_id: l.key_id };
  }

  /** Entries of index rows, read from the segments; a row that does not read back is an error. */
  #entries(rows: readonly IndexRow[]): (JournalEntry | MalformedRecord)[] {
    return this.#bodies.read(rows);
  }

  async get(seq: number): Promise<JournalEntry | null> {
    await this.#sync();
    const row = this.#keeper.index.get(seq);
    if (row === undefined) return null;
    const e = this.#entries([row])[0]!;
    if (e instanceof MalformedRecord) {
      throw new JournalError("ERR_JOURNAL_STORE", `unreadable entry at ${e.where}: ${e.message}`, {
        details: { seq },
      });
    }
    return e;
  }

  async count(): Promise<number> {
    await this.#sync();
    return this.#keeper.index.count();
  }

  async *entries(
    fromSeq = 1,
    toSeq = Number.MAX_SAFE_INTEGER,
  ): AsyncIterable<JournalEntry | MalformedRecord> {
    await this.#sync();
    let next = fromSeq;
    for (;;) {
      const rows = this.#keeper.index.page(next, toSeq, PAGE);
      yield* this.#entries(rows);
      const lastRow = rows.at(-1);
      if (rows.length < PAGE || lastRow === undefined) return;
      next = lastRow.seq + 1;
    }
  }

  async query(q: JournalQuery): Promise<JournalEntry[]> {
    await this.#sync();
    return this.#entries(this.#keeper.index.query(q)).filter(
      (e): e is JournalEntry => !(e instanceof MalformedRecord),
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#writing;
    if (this.#closed) return;
    this.#closed = true;
    this.#keeper.close(this.#failed === null);
    this.#log.close();
    this.#lock?.close();
    this.#bodies.close();
  }
}
