// Reading segments back: an entry record's payload as an entry, and every entry of a
// journal directory in seq order, straight from the files (what `journal verify` and
// `journal reindex` read; never the index). A framing problem — a bad header, a torn
// or altered batch — comes back as a MalformedRecord naming the segment and offset,
// and ends the walk: nothing after it can be placed in the chain.
import { join } from "node:path";
import { canonicalJson, parseStrictJson } from "../contracts/index.js";
import { type JournalEntry, JournalEntrySchema, type SealedEntry } from "./entry.js";
import { listSegments, readWhole } from "./segment-files.js";
import { headerProblem, type ScanResult, scanBatches, segmentName } from "./segment-format.js";
import { MalformedRecord } from "./store.js";

/** An entry record's payload as a sealed entry (its body's canonical text recomputed). */
export function parsePayload(payload: Buffer, where: string): SealedEntry | MalformedRecord {
  let raw: unknown;
  try {
    raw = parseStrictJson(payload.toString("utf8"));
  } catch (err) {
    return new MalformedRecord(where, `entry is not strict JSON: ${(err as Error).message}`);
  }
  const parsed = JournalEntrySchema.safeParse(raw);
  if (!parsed.success) {
    const seq = (raw as { seq?: unknown } | null)?.seq;
    return new MalformedRecord(where, "entry is malformed", typeof seq === "number" ? seq : undefined);
  }
  const entry = parsed.data as JournalEntry;
  return { entry, bodyJson: canonicalJson(entry.body) };
}

/**
 * The segments of a journal directory that may hold entries from `fromSeq` on (a segment
 * wholly before it is skipped by the next one's first seq), each read whole and scanned
 * into batches; a segment whose header is bad is a MalformedRecord, after which the
 * caller stops.
 */
function* segmentScans(
  dir: string,
  fromSeq: number,
): Iterable<{ name: string; scan: ReturnType<typeof scanBatches> } | MalformedRecord> {
  const segs = listSegments(dir);
  for (let i = 0; i < segs.length; i++) {
    const first = segs[i]!;
    const following = segs[i + 1];
    if (following !== undefined && following <= fromSeq) continue;
    const name = segmentName(first);
    const buf = readWhole(join(dir, name));
    const bad = headerProblem(buf, first);
    yield bad !== null ? new MalformedRecord(`segment ${name}`, bad) : { name, scan: scanBatches(buf) };
  }
}

/**
 * The raw records of a journal directory from `fromSeq` on, as parsed JSON (the
 * verifier checks their shape itself), or a MalformedRecord where the framing is
 * broken. A torn tail is reported like any other break: verify is for a journal at
 * rest; a writer cuts torn tails when it opens.
 */
export function* segmentRecords(dir: string, fromSeq = 1): Iterable<unknown> {
  for (const seg of segmentScans(dir, fromSeq)) {
    if (seg instanceof MalformedRecord) {
      yield seg;
      return;
    }
    for (const raw of scanRecords(seg.name, seg.scan, fromSeq)) {
      yield raw;
      if (raw instanceof MalformedRecord) return;
    }
  }
}

/**
 * The raw records of one scanned part of a segment (every batch `scanBatches` found,
 * then its torn rest as a MalformedRecord); entries before `fromSeq` are left out.
 */
export function* scanRecords(name: string, scan: ScanResult, fromSeq = 1): Iterable<unknown> {
  for (const b of scan.batches) {
    let off = b.start;
    for (const p of b.payloads) {
      const where = `segment ${name} offset ${off}`;
      off += p.length + 5;
      let raw: unknown;
      try {
        raw = parseStrictJson(p.toString("utf8"));
      } catch (err) {
        yield new MalformedRecord(where, `entry is not strict JSON: ${(err as Error).message}`);
        return;
      }
      const seq = (raw as { seq?: unknown } | null)?.seq;
      if (typeof seq === "number" && seq < fromSeq) continue;
      yield raw;
    }
  }
  if (scan.torn !== null) yield new MalformedRecord(`segment ${name} offset ${scan.validEnd}`, scan.torn);
}

/** Sees each record a walk reads (verifyChains' ChainScan); `skip` passes over records it need not see. */
export interface RecordObserver {
  observe(raw: unknown): void;
  skip(n: number): void;
}

/**
 * A segment journal directory as a verifier's source: iterated, its records in order
 * (each shown to the observer first); `verifySegments` (segment-verify.ts) recognises it
 * and checks its segments on worker threads that read the files themselves.
 */
export class SegmentSource implements Iterable<unknown> {
  constructor(
    readonly dir: string,
    readonly observer: RecordObserver | null = null,
  ) {}

  observedBy(observer: RecordObserver): SegmentSource {
    return new SegmentSource(this.dir, observer);
  }

  *[Symbol.iterator](): Iterator<unknown> {
    for (const raw of segmentRecords(this.dir)) {
      this.observer?.observe(raw);
      yield raw;
    }
  }
}

/** The entry's members but its body (made once: building a zod schema compiles it). */
const FIELDS = JournalEntrySchema.omit({ body: true });

/**
 * An entry record's payload split for the index without parsing (or re-serialising)
 * its body: the payload is canonical JSON whose first member is `body` and whose
 * other members are flat strings and integers, so the last structural
 * `,"hash":"sha256:` (a quote inside a string is escaped) ends the body; the small
 * rest is parsed. The index is derived data: `journal verify` checks entries fully.
 */
export function splitPayload(payload: Buffer, where: string): SealedEntry | MalformedRecord {
  const text = payload.toString("utf8");
  const cut = text.lastIndexOf(',"hash":"sha256:');
  if (!text.startsWith('{"body":{') || cut < 0)
    return new MalformedRecord(where, "entry record is not canonical");
  let rest: unknown;
  try {
    rest = JSON.parse(`{${text.slice(cut + 1)}`);
  } catch {
    return new MalformedRecord(where, "entry record is not canonical");
  }
  const parsed = FIELDS.safeParse(rest);
  if (!parsed.success) return new MalformedRecord(where, "entry is malformed");
  // The body stays text: the index stores it as it is and parses it when it is read.
  return {
    entry: { ...(parsed.data as Omit<JournalEntry, "body">), body: {} },
    bodyJson: text.slice(8, cut),
  };
}

/**
 * Entries of a journal directory from `fromSeq` on, for the index, in one pass: whole
 * batches before `fromSeq` are skipped by their commit record's first_seq without
 * being read as JSON. Stops at the first bad record.
 */
export function* segmentEntries(dir: string, fromSeq = 1): Iterable<SealedEntry | MalformedRecord> {
  for (const seg of segmentScans(dir, fromSeq)) {
    if (seg instanceof MalformedRecord) {
      yield seg;
      return;
    }
    const { name, scan } = seg;
    for (const b of scan.batches) {
      if (b.firstSeq + b.payloads.length <= fromSeq) continue;
      for (let k = Math.max(0, fromSeq - b.firstSeq); k < b.payloads.length; k++) {
        const s = splitPayload(b.payloads[k]!, `segment ${name} batch at offset ${b.start}`);
        yield s;
        if (s instanceof MalformedRecord) return;
      }
    }
    if (scan.torn !== null) return;
  }
}
