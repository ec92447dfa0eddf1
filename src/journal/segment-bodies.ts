// Entries read back through the index: the index row says which segment holds the
// entry and where its payload is; the payload is read with a positioned read (the
// payloads of rows that follow each other in one segment with one read) and parsed
// and validated like any stored row (strict JSON, the entry schema). A payload whose
// seq or hash is not the row's means the index points at the wrong bytes: it comes
// back as a MalformedRecord, never as another entry.
import { closeSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { parseStrictJson } from "../contracts/index.js";
import { type JournalEntry, JournalEntrySchema } from "./entry.js";
import { FRAME_SIZE, segmentName } from "./segment-format.js";
import type { IndexRow } from "./segment-index.js";
import { MalformedRecord } from "./store.js";

/** Open segment files kept (reads mostly hit the tail and the segment before it). */
const OPEN_FILES = 4;
/** Rows read with one read when their payloads are this close together. */
const SPAN_BYTES = 1024 * 1024;

export function payloadEntry(payload: Buffer, row: IndexRow): JournalEntry | MalformedRecord {
  const where = `seq ${row.seq}`;
  let raw: unknown;
  try {
    raw = parseStrictJson(payload.toString("utf8"));
  } catch (err) {
    return new MalformedRecord(where, `entry is not strict JSON: ${(err as Error).message}`, row.seq);
  }
  const parsed = JournalEntrySchema.safeParse(raw);
  if (!parsed.success) return new MalformedRecord(where, "entry is malformed", row.seq);
  const e = parsed.data as JournalEntry;
  if (e.seq !== row.seq || e.hash !== row.hash) {
    return new MalformedRecord(where, "the index points at another entry of the segments", row.seq);
  }
  return e;
}

export class SegmentBodies {
  readonly #dir: string;
  /** segment first seq → fd, least recently used first. */
  readonly #fds = new Map<number, number>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  #fd(segment: number): number {
    const fd = this.#fds.get(segment);
    if (fd !== undefined) {
      this.#fds.delete(segment);
      this.#fds.set(segment, fd);
      return fd;
    }
    const opened = openSync(join(this.#dir, segmentName(segment)), "r");
    this.#fds.set(segment, opened);
    if (this.#fds.size > OPEN_FILES) {
      const [oldest, ofd] = this.#fds.entries().next().value as [number, number];
      this.#fds.delete(oldest);
      closeSync(ofd);
    }
    return opened;
  }

  #read(segment: number, at: number, bytes: number): Buffer {
    const buf = Buffer.allocUnsafe(bytes);
    const fd = this.#fd(segment);
    let got = 0;
    while (got < bytes) {
      const n = readSync(fd, buf, got, bytes - got, at + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  }

  /** The entries of `rows`, in their order; a row whose bytes cannot be read is a MalformedRecord. */
  read(rows: readonly IndexRow[]): (JournalEntry | MalformedRecord)[] {
    const out: (JournalEntry | MalformedRecord)[] = [];
    let i = 0;
    while (i < rows.length) {
      const first = rows[i]!;
      // A span of rows in one segment, in file order, close together.
      let end = i + 1;
      while (end < rows.length) {
        const r = rows[end]!;
        const prev = rows[end - 1]!;
        if (r.segment !== first.segment || r.offset < prev.offset + prev.length) break;
        if (r.offset + r.length - first.offset > SPAN_BYTES) break;
        end++;
      }
      const last = rows[end - 1]!;
      let buf: Buffer;
      try {
        buf = this.#read(first.segment, first.offset, last.offset + last.length - first.offset);
      } catch (err) {
        for (let k = i; k < end; k++) {
          const seq = rows[k]!.seq;
          out.push(new MalformedRecord(`seq ${seq}`, `segment unreadable: ${(err as Error).message}`, seq));
        }
        i = end;
        continue;
      }
      for (let k = i; k < end; k++) {
        const r = rows[k]!;
        const from = r.offset - first.offset;
        out.push(
          from + r.length > buf.length || r.offset < FRAME_SIZE
            ? new MalformedRecord(`seq ${r.seq}`, "entry lies beyond the end of its segment", r.seq)
            : payloadEntry(buf.subarray(from, from + r.length), r),
        );
      }
      i = end;
    }
    return out;
  }

  close(): void {
    for (const fd of this.#fds.values()) closeSync(fd);
    this.#fds.clear();
  }
}
