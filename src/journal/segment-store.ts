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
import { existsSync, fdatasync, rmSync } from "node:fs";
import { JournalError } from "../contracts/index.js";
import type { JournalEntry, JournalHead, SealedEntry } from "./entry.js";
import { assertExtends } from "./rows.js";
import { SegmentBodies } from "./segment-bodies.js";
import { encodeBatch, FRAME_SIZE } from "./segment-format.js";
import { decisionOf, type IndexRow, SegmentIndex } from "./segment-index.js";
import { indexFeed } from "./segment-index-feed.js";
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
/** The index is written this long after an append (appends in between share its transaction). */
const INDEX_DELAY_MS = 20;
/**
 * Rows waiting for the index beyond which it is written as soon as an append is
 * durable: a writer whose appends follow each other without a turn of the event
 * loop (appends awaited in a loop) never lets the timer run, and its rows must not
 * pile up in memory.
 */
const INDEX_MAX_PENDING = 2048;

export class SegmentJournalStore implements JournalStore {
  /** The index file. */
  readonly path: string;
  readonly dir: string;
  readonly #log: SegmentLog;
  readonly #lock: SegmentLock | null;
  readonly #busyTimeoutMs: number;
  readonly #bodies: SegmentBodies;
  #index!: SegmentIndex;
  /** Index rows of entries this handle wrote that the index does not hold yet, in seq order. */
  #pending: IndexRow[] = [];
  #cuts: TailCut[] = [];
  #listener: ((cut: TailCut) => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
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
      store.#crossCheck();
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
    for (let torn = this.#log.refresh(); torn !== null; torn = this.#log.refresh()) {
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
      const entries = await this.#appendLocked(this.#lock, build);
      if (this.#pending.length >= INDEX_MAX_PENDING) this.#indexSoon();
      else this.#scheduleIndex();
      return entries;
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
        this.#remember(batch, lengths, w);
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

  /** The index rows of a batch just written (its fields and where each record's payload is). */
  #remember(batch: readonly SealedEntry[], lengths: readonly number[], pos: { segment: number; at: number }) {
    let at = pos.at;
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i]!.entry;
      const length = lengths[i]!;
      at += FRAME_SIZE;
      const decision = decisionOf(e.type, e.body);
      this.#pending.push({
        seq: e.seq,
        time: e.time,
        type: e.type,
        run_id: e.run_id,
        decision: decision ?? null,
        hash: e.hash,
        segment: pos.segment,
        offset: at,
        length,
        body: decision === undefined ? batch[i]!.bodyJson : null,
      });
      at += length;
    }
  }

  #scheduleIndex(): void {
    if (this.#timer !== null) return;
    this.#timer = setTimeout(() => this.#indexSoon(), INDEX_DELAY_MS);
    this.#timer.unref();
  }

  /** Writes the index now (after the appends it holds resolved); a failure is left to the next read. */
  #indexSoon(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    try {
      this.#indexNow();
    } catch {
      // The next read catches the index up from the segments.
    }
  }

  /**
   * Brings the index up to the segments: this handle's rows when they follow the
   * index's head, else (another writer appended in between) rows read from the
   * segments. Each step is one index transaction that reads the head inside it.
   */
  #indexNow(): void {
    const head = this.#log.last?.seq ?? 0;
    for (;;) {
      let done = 0;
      const wrote = this.#index.extend((h) => {
        done = h;
        if (h >= head) return [];
        const pending = this.#pending;
        const i = h + 1 - (pending[0]?.seq ?? 0);
        if (i >= 0 && i < pending.length && pending[i]!.seq === h + 1) {
          let end = i + 1;
          while (end < pending.length && pending[end]!.seq === pending[end - 1]!.seq + 1) end++;
          return pending.slice(i, end);
        }
        const rows: IndexRow[] = [];
        for (const b of indexFeed(this.dir, h + 1, head)) for (const r of b) rows.push(r);
        return rows;
      });
      done += wrote;
      const keep = this.#pending.findIndex((r) => r.seq > done);
      this.#pending = keep === -1 ? [] : keep === 0 ? this.#pending : this.#pending.slice(keep);
      if (wrote === 0 || done >= head) return;
    }
  }

  /**
   * On open: an index of another format, or whose head is not an entry of the segments
   * (same seq, same hash), is rebuilt; an empty one is built in bulk; one behind catches up.
   */
  #crossCheck(): void {
    const index = SegmentIndex.open(this.path, this.#busyTimeoutMs);
    if (index !== null) this.#index = index;
    const head = index?.head() ?? null;
    if (index === null || (head === null ? this.#log.last !== null : !this.#agrees(head))) {
      this.#rebuildFile();
    } else {
      this.#indexNow();
    }
  }

  #agrees(head: { seq: number; hash: string }): boolean {
    const last = this.#log.last;
    if (last === null || head.seq > last.seq) return false;
    if (head.seq === last.seq) return head.hash === last.hash;
    for (const rows of indexFeed(this.dir, head.seq, head.seq)) {
      return rows[0]?.seq === head.seq && rows[0].hash === head.hash;
    }
    return false;
  }

  /** Deletes the index file and builds it again from the segments in one transaction. */
  #rebuildFile(): number {
    if (this.#index !== undefined) this.#index.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${this.path}${suffix}`, { force: true });
    const index = SegmentIndex.open(this.path, this.#busyTimeoutMs, true);
    if (index === null) throw new JournalError("ERR_JOURNAL_STORE", `cannot create the index ${this.path}`);
    this.#index = index;
    const head = this.#log.last?.seq ?? 0;
    const n = index.bulk(indexFeed(this.dir, 1, head));
    this.#pending = this.#pending.filter((r) => r.seq > n);
    return n;
  }

  /** Drops the index and builds it again from the segments (`warden journal reindex`). */
  async reindex(): Promise<number> {
    await this.#writing;
    this.#usable();
    this.#log.refresh();
    return this.#rebuildFile();
  }

  /**
   * Reads what other writers completed and brings the index up to date, so a read sees
   * every durable entry (after this handle's append in progress, if any).
   */
  async #sync(): Promise<void> {
    await this.#writing;
    this.#usable();
    this.#log.refresh();
    if ((this.#log.last?.seq ?? 0) !== (this.#index.head()?.seq ?? 0)) this.#indexNow();
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
    const row = this.#index.get(seq);
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
    return this.#index.count();
  }

  async *entries(
    fromSeq = 1,
    toSeq = Number.MAX_SAFE_INTEGER,
  ): AsyncIterable<JournalEntry | MalformedRecord> {
    await this.#sync();
    let next = fromSeq;
    for (;;) {
      const rows = this.#index.page(next, toSeq, PAGE);
      yield* this.#entries(rows);
      const lastRow = rows.at(-1);
      if (rows.length < PAGE || lastRow === undefined) return;
      next = lastRow.seq + 1;
    }
  }

  async query(q: JournalQuery): Promise<JournalEntry[]> {
    await this.#sync();
    return this.#entries(this.#index.query(q)).filter(
      (e): e is JournalEntry => !(e instanceof MalformedRecord),
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#writing;
    if (this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    try {
      if (this.#failed === null) this.#indexNow();
    } catch {
      // The next open catches the index up from the segments.
    }
    this.#closed = true;
    this.#log.close();
    this.#lock?.close();
    this.#bodies.close();
    this.#index.close();
  }
}
