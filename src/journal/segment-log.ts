// The segment files of one journal directory: which segment is the tail, how far it
// holds complete batches, appending a batch (one write + one fdatasync), rolling to a
// new segment (file fsynced, then the directory), and cutting a torn tail back. It
// knows bytes and the last entry, nothing of locks or indexes (segment-store.ts).
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { JournalError } from "../contracts/index.js";
import type { JournalEntry } from "./entry.js";
import { payloadHashMatches } from "./segment-commit.js";
import { fsyncDir, listSegments, readWhole } from "./segment-files.js";
import {
  COMMIT_SIZE,
  HEADER_SIZE,
  headerProblem,
  type ScanResult,
  SEGMENT_VERSION,
  type SegmentVersion,
  scanBatches,
  segmentHeader,
  segmentName,
  segmentVersion,
} from "./segment-format.js";
import { parsePayload } from "./segment-read.js";
import { MalformedRecord, type TailCut } from "./store.js";

interface Tail {
  firstSeq: number;
  fd: number;
  /** End of the last complete batch this handle knows of. */
  size: number;
  /** The segment's format, once its header is read (null before). */
  version: SegmentVersion | null;
}

function lastEntryOf(payloads: readonly Buffer[], where: string): JournalEntry | null {
  const p = payloads.at(-1);
  if (p === undefined) return null;
  const e = parsePayload(p, where);
  if (e instanceof MalformedRecord) {
    throw new JournalError("ERR_JOURNAL_STORE", `unreadable last entry in ${where}: ${e.message}`);
  }
  return e.entry;
}

/** A batch written after the tail, not yet durable: where it went. */
export interface Written {
  /** The segment (its first seq) and the batch's offset in it. */
  segment: number;
  at: number;
  bytes: number;
  /** The segment file, for the fdatasync that makes the batch durable. */
  fd: number;
}

export class SegmentLog {
  readonly dir: string;
  readonly #writable: boolean;
  readonly #maxBytes: number;
  #tail: Tail | null = null;
  #last: JournalEntry | null = null;

  constructor(dir: string, writable: boolean, maxBytes: number) {
    this.dir = dir;
    this.#writable = writable;
    this.#maxBytes = maxBytes;
    if (writable) mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#openTail();
  }

  /** The last entry of a complete batch, as far as this handle has read. */
  get last(): JournalEntry | null {
    return this.#last;
  }

  #openTail(): void {
    const segs = listSegments(this.dir);
    const first = segs.at(-1);
    if (first === undefined) return;
    const fd = openSync(join(this.dir, segmentName(first)), this.#writable ? "r+" : "r");
    this.#tail = { firstSeq: first, fd, size: HEADER_SIZE, version: null };
    // The tail is read from its header; the entry before it (an empty tail) from the previous segment.
    const prev = segs.at(-2);
    if (prev !== undefined) this.#last = this.#lastOfSegment(prev);
  }

  /** The last entry of a complete segment, read back from its final commit record. */
  #lastOfSegment(firstSeq: number): JournalEntry | null {
    const buf = readWhole(join(this.dir, segmentName(firstSeq)));
    if (buf.length < HEADER_SIZE + COMMIT_SIZE) return null;
    const commitAt = buf.length - COMMIT_SIZE;
    const start = commitAt - buf.readUInt32BE(commitAt + 17);
    const scan = scanBatches(buf.subarray(0, buf.length), Math.max(HEADER_SIZE, start));
    const batch = scan.batches.at(-1);
    if (batch === undefined || scan.torn !== null) {
      throw new JournalError(
        "ERR_JOURNAL_STORE",
        `segment ${segmentName(firstSeq)} does not end with a complete batch`,
      );
    }
    return lastEntryOf(batch.payloads, segmentName(firstSeq));
  }

  /**
   * Reads batches other handles completed since this one last looked (and moves to a
   * segment another writer rolled to). Returns what follows the last complete batch
   * when it is not one (a batch being written, or one a crash tore), else null.
   * `torn`: a writer about to cut (holding the lock) also checks the bodies of a batch
   * that ends the file (checkLastBatch).
   */
  refresh(torn = false): { offset: number; bytes: number; reason: string } | null {
    for (;;) {
      if (this.#tail === null) {
        if (listSegments(this.dir).length === 0) return null;
        this.#openTail();
        continue;
      }
      const t = this.#tail;
      const size = fstatSync(t.fd).size;
      if (size > t.size || t.size === HEADER_SIZE) {
        // Only the bytes after what is known are read (all of them for a fresh tail, header included).
        const from = t.size === HEADER_SIZE ? 0 : t.size;
        const buf = readWhole(join(this.dir, segmentName(t.firstSeq)), from);
        if (from === 0) {
          const bad = headerProblem(buf, t.firstSeq);
          if (bad !== null) return { offset: 0, bytes: buf.length, reason: bad };
          t.version = segmentVersion(buf);
        }
        const scan = scanBatches(buf, from === 0 ? HEADER_SIZE : 0, t.version);
        if (torn && t.version === 2) checkLastBatch(scan, buf.length);
        const base = from === 0 ? 0 : from;
        const end = base + scan.validEnd;
        const last = lastEntryOf(scan.batches.at(-1)?.payloads ?? [], segmentName(t.firstSeq));
        t.size = end;
        if (last !== null) this.#last = last;
        if (scan.torn !== null) return { offset: end, bytes: base + buf.length - end, reason: scan.torn };
      }
      const next = (this.#last?.seq ?? 0) + 1;
      if (next === t.firstSeq || !existsSync(join(this.dir, segmentName(next)))) return null;
      closeSync(t.fd);
      this.#tail = {
        firstSeq: next,
        fd: openSync(join(this.dir, segmentName(next)), this.#writable ? "r+" : "r"),
        size: HEADER_SIZE,
        version: null,
      };
    }
  }

  /** Cuts the tail back to its last complete batch (or removes a segment whose header is torn). */
  cut(torn: { offset: number; bytes: number; reason: string }): TailCut {
    const t = this.#tail!;
    const name = segmentName(t.firstSeq);
    if (torn.offset === 0) {
      // A roll the crash interrupted: the new segment holds no batch yet.
      closeSync(t.fd);
      unlinkSync(join(this.dir, name));
      fsyncDir(this.dir);
      this.#tail = null;
      this.refresh(true);
    } else {
      ftruncateSync(t.fd, torn.offset);
      fdatasyncSync(t.fd);
    }
    return { segment: name, ...torn };
  }

  /**
   * Writes one encoded batch after the tail (rolling to a new segment first when
   * full), without making it durable: the caller fdatasyncs `fd`, then calls
   * written(). Until then the batch is not part of what this handle knows.
   */
  write(batch: Buffer): Written {
    const firstSeq = Number(batch.readBigUInt64BE(batch.length - COMMIT_SIZE + 5));
    // A segment of an earlier format is never appended to: the batch opens a new one.
    const t0 = this.#tail;
    if (t0 === null || t0.size >= this.#maxBytes || t0.version !== SEGMENT_VERSION) this.#roll(firstSeq);
    const t = this.#tail!;
    const at = t.size;
    let off = 0;
    while (off < batch.length) off += writeSync(t.fd, batch, off, batch.length - off, at + off);
    return { segment: t.firstSeq, at, bytes: batch.length, fd: t.fd };
  }

  /** The batch `w` is durable: it becomes the tail's end, `last` the last entry. */
  written(w: Written, last: JournalEntry): void {
    const t = this.#tail!;
    t.size = w.at + w.bytes;
    this.#last = last;
  }

  /** Writes one encoded batch and makes it durable (fdatasync) before returning (migration). */
  append(batch: Buffer, last: JournalEntry): Written {
    const w = this.write(batch);
    fdatasyncSync(w.fd);
    this.written(w, last);
    return w;
  }

  /**
   * A new segment named by its first seq: header written and fsynced, then the
   * directory. A tail of an earlier format that holds no batch yet already has that
   * name: its header is rewritten in place instead.
   */
  #roll(firstSeq: number): void {
    const header = segmentHeader(firstSeq);
    const t = this.#tail;
    if (t !== null && t.firstSeq === firstSeq && t.size === HEADER_SIZE) {
      writeSync(t.fd, header, 0, header.length, 0);
      fdatasyncSync(t.fd);
      t.version = SEGMENT_VERSION;
      return;
    }
    const path = join(this.dir, segmentName(firstSeq));
    const fd = openSync(path, "wx+", 0o600);
    writeSync(fd, header, 0, header.length, 0);
    fdatasyncSync(fd);
    fsyncDir(this.dir);
    if (t !== null) closeSync(t.fd);
    this.#tail = { firstSeq, fd, size: HEADER_SIZE, version: SEGMENT_VERSION };
  }

  close(): void {
    if (this.#tail !== null) closeSync(this.#tail.fd);
    this.#tail = null;
  }
}

/**
 * A batch that ends the file is the one batch a crash can leave with its commit record
 * on disk and a page of its bodies not (format 2's commit record covers the entries'
 * hashes, not their bodies): each of its bodies is hashed again, and one that does not
 * match makes the batch torn. Batches before it were fdatasynced before it was written.
 */
function checkLastBatch(scan: ScanResult, end: number): void {
  const last = scan.batches.at(-1);
  if (last === undefined || scan.torn !== null || scan.validEnd !== end) return;
  const i = last.payloads.findIndex((p) => !payloadHashMatches(p));
  if (i < 0) return;
  scan.batches.pop();
  scan.validEnd = last.start;
  scan.torn = `batch at offset ${last.start}: entry ${i + 1} does not hash to its hash member`;
}
