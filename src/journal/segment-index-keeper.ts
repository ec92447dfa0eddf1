// Keeping a segment journal's index (segment-index.ts) in step with its segments:
// the rows of batches this handle wrote, kept until they are indexed (one
// transaction for ~20 ms of appends, or at once when 2048 wait), rows read from the
// segments for batches other writers wrote, the cross-check on open, and rebuilds.
// The index is never on an append's path and never the only copy of anything.
import { rmSync } from "node:fs";
import { JournalError } from "../contracts/index.js";
import type { SealedEntry } from "./entry.js";
import { FRAME_SIZE } from "./segment-format.js";
import { decisionOf, type IndexRow, SegmentIndex } from "./segment-index.js";
import { indexFeed } from "./segment-index-feed.js";
import type { SegmentLog, Written } from "./segment-log.js";

/** The index is written this long after an append (appends in between share its transaction). */
const INDEX_DELAY_MS = 20;
/**
 * Rows waiting for the index beyond which it is written as soon as an append is
 * durable: a writer whose appends follow each other without a turn of the event
 * loop (appends awaited in a loop) never lets the timer run, and its rows must not
 * pile up in memory.
 */
const INDEX_MAX_PENDING = 2048;
/** Rows read from the segments per index transaction when catching up. */
const CATCH_UP = 65_536;

export class IndexKeeper {
  readonly #path: string;
  readonly #dir: string;
  readonly #busyTimeoutMs: number;
  readonly #log: SegmentLog;
  #index!: SegmentIndex;
  /** Rows of entries this handle wrote that the index does not hold yet, in seq order. */
  #pending: IndexRow[] = [];
  #timer: NodeJS.Timeout | null = null;

  /**
   * Opens the index at `path` and checks it against the segments: one of another
   * format, or whose head is not an entry of the segments (same seq, same hash), is
   * rebuilt; an empty one is built in bulk; one behind catches up.
   */
  constructor(path: string, dir: string, busyTimeoutMs: number, log: SegmentLog) {
    this.#path = path;
    this.#dir = dir;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#log = log;
    const index = SegmentIndex.open(path, busyTimeoutMs);
    if (index !== null) this.#index = index;
    const head = index?.head() ?? null;
    if (index === null || (head === null ? log.last !== null : !this.#agrees(head))) this.rebuild();
    else this.catchUp();
  }

  get index(): SegmentIndex {
    return this.#index;
  }

  #agrees(head: { seq: number; hash: string }): boolean {
    const last = this.#log.last;
    if (last === null || head.seq > last.seq) return false;
    if (head.seq === last.seq) return head.hash === last.hash;
    for (const rows of indexFeed(this.#dir, head.seq, head.seq)) {
      return rows[0]?.seq === head.seq && rows[0].hash === head.hash;
    }
    return false;
  }

  /** Keeps the rows of a batch just made durable (its fields, where each record's payload is). */
  remember(batch: readonly SealedEntry[], lengths: readonly number[], w: Written): void {
    let at = w.at;
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
        segment: w.segment,
        offset: at,
        length,
        body: decision === undefined ? batch[i]!.bodyJson : null,
      });
      at += length;
    }
    if (this.#pending.length >= INDEX_MAX_PENDING) this.#soon();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#soon(), INDEX_DELAY_MS);
      this.#timer.unref();
    }
  }

  /** Writes the index now; a failure is left to the next read, which catches up from the segments. */
  #soon(): void {
    this.#stopTimer();
    try {
      this.catchUp();
    } catch {
      // As said.
    }
  }

  #stopTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * Brings the index up to the segments as far as this handle has read them: this
   * handle's rows when they follow the index's head, else (another writer appended
   * in between) rows read from the segments. Each step is one index transaction
   * that reads the head inside it.
   */
  catchUp(): void {
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
        const at = h === 0 ? undefined : this.#index.get(h);
        const start = at === undefined ? undefined : { segment: at.segment, end: at.offset + at.length };
        for (const b of indexFeed(this.#dir, h + 1, head, start)) {
          for (const r of b) rows.push(r);
          if (rows.length >= CATCH_UP) break;
        }
        return rows;
      });
      done += wrote;
      const keep = this.#pending.findIndex((r) => r.seq > done);
      this.#pending = keep === -1 ? [] : keep === 0 ? this.#pending : this.#pending.slice(keep);
      if (wrote === 0 || done >= head) return;
    }
  }

  /** Deletes the index file and builds it again from the segments in one transaction. */
  rebuild(): number {
    this.#index?.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${this.#path}${suffix}`, { force: true });
    const index = SegmentIndex.open(this.#path, this.#busyTimeoutMs, true);
    if (index === null) throw new JournalError("ERR_JOURNAL_STORE", `cannot create the index ${this.#path}`);
    this.#index = index;
    const n = index.bulk(indexFeed(this.#dir, 1, this.#log.last?.seq ?? 0));
    this.#pending = this.#pending.filter((r) => r.seq > n);
    return n;
  }

  /** Indexes what is left (unless `flush` is false: after a failed write) and closes the index. */
  close(flush: boolean): void {
    this.#stopTimer();
    try {
      if (flush) this.catchUp();
    } catch {
      // The next open catches the index up from the segments.
    } finally {
      this.#index.close();
    }
  }
}
