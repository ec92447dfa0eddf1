// The embedded journal store: segment files are the source of truth, SQLite a derived
// index. An append batch, holding the writers' lock, reads what other writers
// completed, checks the batch extends the head, writes it as one batch (entry records
// + commit record) with one write and one fdatasync, and resolves only then. The index
// (`<path>`, the same table readers have always read, synchronous=OFF) is written
// after the append resolved, and is never the only copy of anything: it is cross-
// checked against the segments on open and rebuilt from them when missing, behind or
// different (docs/journal.md §8). Segments live in `<path>.segments/`.
import { existsSync, rmSync } from "node:fs";
import { JournalError } from "../contracts/index.js";
import type { JournalEntry, JournalHead, SealedEntry } from "./entry.js";
import { assertExtends } from "./rows.js";
import { encodeBatch } from "./segment-format.js";
import { SegmentLock } from "./segment-lock.js";
import { SegmentLog } from "./segment-log.js";
import { segmentEntries } from "./segment-read.js";
import { SqliteJournalStore } from "./sqlite-store.js";
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

/** Entries indexed per index transaction when catching up from the segments. */
const CATCH_UP = 8192;
/** The index is written this long after an append (appends in between share its transaction). */
const INDEX_DELAY_MS = 20;

export class SegmentJournalStore implements JournalStore {
  /** The index file (what readers of the SQLite table open). */
  readonly path: string;
  readonly dir: string;
  readonly #log: SegmentLog;
  readonly #lock: SegmentLock | null;
  readonly #busyTimeoutMs: number;
  #index: SqliteJournalStore;
  /** Entries this handle wrote that the index does not hold yet, in seq order. */
  #pending: SealedEntry[] = [];
  #cuts: TailCut[] = [];
  #listener: ((cut: TailCut) => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  #indexing: Promise<void> | null = null;
  /** A failed write or fdatasync: the file's state is unknown, so nothing more is appended. */
  #failed: Error | null = null;
  #commits = 0;
  #closed = false;
  /** A pass over the segments the index is catching up from (kept between index transactions). */
  #reader: { next: number; it: Iterator<SealedEntry | MalformedRecord> } | null = null;

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
    this.#index = this.#openIndex();
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

  #openIndex(): SqliteJournalStore {
    return SqliteJournalStore.open(this.path, { index: true, busyTimeoutMs: this.#busyTimeoutMs });
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

  async appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]> {
    this.#usable();
    if (this.#lock === null)
      throw new JournalError("ERR_JOURNAL_STORE", "the journal is open for reading only");
    const sealed = this.#lock.hold(() => {
      this.#cutTorn();
      const last = this.#log.last;
      const batch = build(last);
      assertExtends(last, batch);
      const tail = batch.at(-1);
      if (tail === undefined) return batch;
      try {
        this.#log.append(encodeBatch(batch), tail.entry);
      } catch (err) {
        this.#failed = err as Error;
        throw new JournalError("ERR_JOURNAL_STORE", `append failed: ${(err as Error).message}`, {
          cause: err,
        });
      }
      return batch;
    });
    this.#commits++;
    // The index gets its own copy of the fields: callers own the entries they get back.
    for (const s of sealed) this.#pending.push({ entry: { ...s.entry }, bodyJson: s.bodyJson });
    this.#scheduleIndex();
    return sealed.map((s) => s.entry);
  }

  #scheduleIndex(): void {
    if (this.#timer !== null) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#indexNow().catch(() => undefined);
    }, INDEX_DELAY_MS);
    this.#timer.unref();
  }

  /** Brings the index up to the segments (this handle's pending entries, then other writers'). */
  #indexNow(): Promise<void> {
    const run = async () => {
      for (;;) {
        let wrote = 0;
        await this.#index.appendBatch((last) => {
          const batch = this.#after(last);
          wrote = batch.length;
          return batch;
        });
        const done = this.#index.lastSync()?.seq ?? 0;
        const keep = this.#pending.findIndex((s) => s.entry.seq > done);
        this.#pending = keep === -1 ? [] : this.#pending.slice(keep);
        if (wrote === 0) return;
      }
    };
    const p = (this.#indexing ?? Promise.resolve()).then(run, run);
    this.#indexing = p;
    return p;
  }

  /** The entries after the index's head: from this handle's pending ones, else read from the segments. */
  #after(last: JournalEntry | null): SealedEntry[] {
    const from = (last?.seq ?? 0) + 1;
    const head = this.#log.last?.seq ?? 0;
    if (from > head) return [];
    // Pending entries are consecutive unless another writer appended in between.
    const pending = this.#pending;
    let i = from - (pending[0]?.entry.seq ?? from);
    if (pending[i]?.entry.seq !== from) i = pending.findIndex((s) => s.entry.seq === from);
    if (i >= 0) {
      let end = i + 1;
      while (end < pending.length && pending[end]!.entry.seq === pending[end - 1]!.entry.seq + 1) end++;
      return pending.slice(i, end);
    }
    return this.#fromSegments(from, head);
  }

  /** Up to CATCH_UP entries from `from` read from the segments, continuing one pass when asked in order. */
  #fromSegments(from: number, head: number): SealedEntry[] {
    if (this.#reader === null || this.#reader.next !== from) {
      this.#reader = { next: from, it: segmentEntries(this.dir, from)[Symbol.iterator]() };
    }
    const r = this.#reader;
    const out: SealedEntry[] = [];
    while (out.length < CATCH_UP && r.next <= head) {
      const n = r.it.next();
      if (n.done === true) {
        this.#reader = null;
        break;
      }
      const s = n.value;
      if (s instanceof MalformedRecord) {
        this.#reader = null;
        throw new JournalError("ERR_JOURNAL_STORE", `segments unreadable at ${s.where}: ${s.message}`);
      }
      out.push(s);
      r.next = s.entry.seq + 1;
    }
    // Caught up: the pass (and the segment it holds in memory) is dropped.
    if (out.length < CATCH_UP) this.#reader = null;
    return out;
  }

  /**
   * On open: the index's head must be an entry of the segments (same seq, same hash);
   * an index that is ahead or differs is rebuilt, one that is behind catches up.
   */
  #crossCheck(): void {
    let head: JournalEntry | null;
    try {
      head = this.#index.lastSync();
    } catch {
      head = null;
      this.#rebuildFile();
    }
    if (head !== null && !this.#agrees(head)) this.#rebuildFile();
    this.#catchUpSync();
  }

  #agrees(head: JournalEntry): boolean {
    const last = this.#log.last;
    if (last === null || head.seq > last.seq) return false;
    if (head.seq === last.seq) return head.hash === last.hash;
    for (const s of segmentEntries(this.dir, head.seq)) {
      return !(s instanceof MalformedRecord) && s.entry.seq === head.seq && s.entry.hash === head.hash;
    }
    return false;
  }

  #rebuildFile(): void {
    this.#index.closeSync();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${this.path}${suffix}`, { force: true });
    this.#index = this.#openIndex();
  }

  #catchUpSync(): void {
    for (;;) {
      const batch = this.#index.appendSync((last) => this.#after(last));
      if (batch.length === 0) return;
    }
  }

  /** Drops the index and builds it again from the segments (`warden journal reindex`). */
  async reindex(): Promise<number> {
    this.#usable();
    await this.#indexing;
    this.#rebuildFile();
    this.#catchUpSync();
    return this.#index.lastSync()?.seq ?? 0;
  }

  /** Reads what other writers completed and brings the index up to date, so a read sees every durable entry. */
  async #sync(): Promise<void> {
    this.#usable();
    this.#log.refresh();
    if ((this.#log.last?.seq ?? 0) !== (this.#index.lastSync()?.seq ?? 0)) await this.#indexNow();
  }

  #usable(): void {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal store is closed");
    if (this.#failed !== null) {
      throw new JournalError("ERR_JOURNAL_STORE", `an earlier write failed: ${this.#failed.message}`);
    }
  }

  async last(): Promise<JournalEntry | null> {
    this.#usable();
    this.#log.refresh();
    const l = this.#log.last;
    return l === null ? null : structuredClone(l);
  }

  async head(): Promise<JournalHead | null> {
    const l = await this.last();
    return l === null ? null : { seq: l.seq, hash: l.hash, time: l.time, key_id: l.key_id };
  }

  async get(seq: number): Promise<JournalEntry | null> {
    await this.#sync();
    return this.#index.get(seq);
  }

  async count(): Promise<number> {
    await this.#sync();
    return this.#index.count();
  }

  async *entries(fromSeq?: number, toSeq?: number): AsyncIterable<JournalEntry | MalformedRecord> {
    await this.#sync();
    yield* this.#index.entries(fromSeq, toSeq);
  }

  async query(q: JournalQuery): Promise<JournalEntry[]> {
    await this.#sync();
    return this.#index.query(q);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#failed === null) await this.#indexNow().catch(() => undefined);
    this.#closed = true;
    this.#log.close();
    this.#lock?.close();
    await this.#index.close();
  }
}
