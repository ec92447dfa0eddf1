// The segment format (docs/journal.md §8, byte by byte): the embedded store's source
// of truth. A segment file is a 16-byte header followed by batches; a batch is its
// entry records followed by one commit record whose SHA-256 covers, in format 2, the
// batch's entry hashes and signatures (segment-commit.ts) — in format 1, still read,
// the batch's entry records whole. An entry record's payload is the entry's canonical
// JSON, the very line `journal export --format jsonl` writes. Pure bytes: no files.
import { createHash } from "node:crypto";
import { JSON_PLAIN } from "../contracts/index.js";
import type { SealedEntry } from "./entry.js";
import { commitDigestOfPayloads, commitDigestOfSealed } from "./segment-commit.js";

/** A segment's format: 1 (commit hash over the entry records' bytes, read only) or 2 (over entry hashes). */
export type SegmentVersion = 1 | 2;
/** The format new segments are written in. */
export const SEGMENT_VERSION: SegmentVersion = 2;
/** Magic of a segment file of format 2: "WJSEG02\n". */
export const SEGMENT_MAGIC = Buffer.from("WJSEG02\n", "latin1");
/** Magic of a segment file of format 1: "WJSEG01\n" (still read and verified, never appended to). */
export const SEGMENT_MAGIC_V1 = Buffer.from("WJSEG01\n", "latin1");
export const HEADER_SIZE = 16;
/** Record kinds: an entry, or the commit record that closes a batch. */
export const ENTRY_KIND = 0x45; // "E"
export const COMMIT_KIND = 0x43; // "C"
/** Kind byte + u32 length. */
export const FRAME_SIZE = 5;
/** A commit record's payload: u64 first_seq, u32 count, u32 bytes (of the batch's entry records), 32-byte SHA-256. */
export const COMMIT_PAYLOAD = 48;
export const COMMIT_SIZE = FRAME_SIZE + COMMIT_PAYLOAD;
/** Largest entry payload a reader accepts (an entry line is at most this long). */
export const MAX_PAYLOAD = 16 * 1024 * 1024;
/** A segment file's name: its first seq, 20 digits, and this suffix. */
export const SEGMENT_SUFFIX = ".wjs";

export function segmentName(firstSeq: number): string {
  return `${String(firstSeq).padStart(20, "0")}${SEGMENT_SUFFIX}`;
}

/** The first seq a segment file name holds, or null for a name that is not a segment's. */
export function segmentSeq(name: string): number | null {
  const m = /^(\d{20})\.wjs$/.exec(name);
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}

export function segmentHeader(firstSeq: number, version: SegmentVersion = SEGMENT_VERSION): Buffer {
  const b = Buffer.alloc(HEADER_SIZE);
  (version === 1 ? SEGMENT_MAGIC_V1 : SEGMENT_MAGIC).copy(b, 0);
  b.writeBigUInt64BE(BigInt(firstSeq), 8);
  return b;
}

const str = JSON.stringify;
const nullable = (s: string | null): string => (s === null ? "null" : str(s));

/** Printable ASCII without `"` and `\` (JSON_PLAIN): JSON.stringify writes it as itself in quotes. */
const plain = (s: string | null): boolean => s === null || JSON_PLAIN.test(s);

/** What follows the body in an entry's canonical JSON (every member is a restricted ASCII string or an integer). */
function entryTail(e: SealedEntry["entry"]): string {
  // The members the writer made (hashes, key id, signature, time) and the ids it checked are
  // plain: written between quotes as they are, without a quoted copy of each (JSON.stringify).
  if (
    plain(e.hash) &&
    plain(e.key_id) &&
    plain(e.prev_hash) &&
    plain(e.run_id) &&
    plain(e.signature) &&
    plain(e.time) &&
    plain(e.trace_id) &&
    plain(e.type)
  ) {
    const run = e.run_id === null ? "null" : `"${e.run_id}"`;
    const trace = e.trace_id === null ? "null" : `"${e.trace_id}"`;
    return (
      `,"hash":"${e.hash}","key_id":"${e.key_id}","prev_hash":"${e.prev_hash}","run_id":${run},` +
      `"seq":${e.seq},"signature":"${e.signature}","time":"${e.time}","trace_id":${trace},"type":"${e.type}"}`
    );
  }
  return (
    `,"hash":${str(e.hash)},"key_id":${str(e.key_id)},"prev_hash":${str(e.prev_hash)},` +
    `"run_id":${nullable(e.run_id)},"seq":${e.seq},"signature":${str(e.signature)},"time":${str(e.time)},` +
    `"trace_id":${nullable(e.trace_id)},"type":${str(e.type)}}`
  );
}

/**
 * The canonical JSON of a sealed entry, assembled from its body's canonical text
 * without walking the body again (for JSON.stringify, every other field is RFC 8785's
 * form). Equal to entryJson().
 */
export function entryLine(s: SealedEntry): string {
  return `{"body":${s.bodyJson}${entryTail(s.entry)}`;
}

const BODY_OPEN = '{"body":';

/**
 * One batch as bytes: its entry records, then its commit record (of format `version`).
 * Each payload is written in place from its pieces — the body's canonical text, built
 * once when the append was prepared, is encoded straight into the batch. `lengths`,
 * when given, receives each entry payload's byte length (the index records where each is).
 */
export function encodeBatch(
  sealed: readonly SealedEntry[],
  lengths: number[] = [],
  version: SegmentVersion = SEGMENT_VERSION,
): Buffer {
  const n = sealed.length;
  const tails = new Array<string>(n);
  let size = COMMIT_SIZE;
  for (let i = 0; i < n; i++) {
    const s = sealed[i]!;
    const tail = entryTail(s.entry);
    tails[i] = tail;
    const len = BODY_OPEN.length + Buffer.byteLength(s.bodyJson, "utf8") + Buffer.byteLength(tail, "utf8");
    size += FRAME_SIZE + len;
    lengths.push(len);
  }
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < n; i++) {
    buf[at] = ENTRY_KIND;
    buf.writeUInt32BE(lengths[lengths.length - n + i]!, at + 1);
    at += FRAME_SIZE;
    at += buf.write(BODY_OPEN, at, "latin1");
    at += buf.write(sealed[i]!.bodyJson, at, "utf8");
    at += buf.write(tails[i]!, at, "utf8");
  }
  const digest =
    version === 1 ? createHash("sha256").update(buf.subarray(0, at)).digest() : commitDigestOfSealed(sealed);
  buf[at] = COMMIT_KIND;
  buf.writeUInt32BE(COMMIT_PAYLOAD, at + 1);
  buf.writeBigUInt64BE(BigInt(sealed[0]?.entry.seq ?? 0), at + 5);
  buf.writeUInt32BE(n, at + 13);
  buf.writeUInt32BE(at, at + 17);
  digest.copy(buf, at + 21);
  return buf;
}

/** A complete batch found in a segment: where its bytes are and its entry payloads. */
export interface ScannedBatch {
  /** Offset of its first record in the segment. */
  start: number;
  /** Offset just past its commit record. */
  end: number;
  firstSeq: number;
  /** The entry payloads (canonical JSON lines), as views into the segment's bytes. */
  payloads: Buffer[];
}

export type ScanResult = {
  batches: ScannedBatch[];
  /** Offset just past the last complete batch (HEADER_SIZE when there is none). */
  validEnd: number;
  /** Why the bytes after validEnd are not a complete batch (null: there are none). */
  torn: string | null;
};

/** The format a segment's first bytes name, or null for neither magic. */
export function segmentVersion(buf: Buffer): SegmentVersion | null {
  if (buf.length < 8) return null;
  const magic = buf.subarray(0, 8);
  if (magic.equals(SEGMENT_MAGIC)) return 2;
  return magic.equals(SEGMENT_MAGIC_V1) ? 1 : null;
}

/** Checks a segment's header: null when good, else why not. */
export function headerProblem(buf: Buffer, firstSeq: number): string | null {
  if (buf.length < HEADER_SIZE) return "header is incomplete";
  if (segmentVersion(buf) === null) return "not a segment (bad magic)";
  if (buf.readBigUInt64BE(8) !== BigInt(firstSeq)) return "header first_seq differs from the file name";
  return null;
}

/**
 * Walks the batches of a segment's bytes from `from` (just past the header, or the end
 * of a batch already read). A batch counts only when every record is whole and its
 * commit record's count and SHA-256 match; anything after the last such batch is torn.
 * `version`: the segment's format, read from `buf`'s header when not given (a `buf`
 * that starts elsewhere in the segment must say).
 */
export function scanBatches(buf: Buffer, from = HEADER_SIZE, version = segmentVersion(buf)): ScanResult {
  const batches: ScannedBatch[] = [];
  let at = from;
  if (version === null) return { batches, validEnd: at, torn: "not a segment (bad magic)" };
  for (;;) {
    if (at === buf.length) return { batches, validEnd: at, torn: null };
    const r = scanOne(buf, at, version);
    if (typeof r === "string") return { batches, validEnd: at, torn: r };
    batches.push(r);
    at = r.end;
  }
}

function scanOne(buf: Buffer, start: number, version: SegmentVersion): ScannedBatch | string {
  const payloads: Buffer[] = [];
  let at = start;
  for (;;) {
    if (at + FRAME_SIZE > buf.length) return `record frame at offset ${at} is incomplete`;
    const kind = buf[at]!;
    const len = buf.readUInt32BE(at + 1);
    if (kind === COMMIT_KIND) break;
    if (kind !== ENTRY_KIND) return `unknown record kind 0x${kind.toString(16)} at offset ${at}`;
    if (len === 0 || len > MAX_PAYLOAD) return `entry record at offset ${at} has length ${len}`;
    if (at + FRAME_SIZE + len > buf.length) return `entry record at offset ${at} is incomplete`;
    payloads.push(buf.subarray(at + FRAME_SIZE, at + FRAME_SIZE + len));
    at += FRAME_SIZE + len;
  }
  if (buf.readUInt32BE(at + 1) !== COMMIT_PAYLOAD) return `commit record at offset ${at} has a bad length`;
  if (at + COMMIT_SIZE > buf.length) return `commit record at offset ${at} is incomplete`;
  const firstSeq = Number(buf.readBigUInt64BE(at + 5));
  const count = buf.readUInt32BE(at + 13);
  if (count !== payloads.length || count === 0) {
    return `commit record at offset ${at} counts ${count} entries, the batch has ${payloads.length}`;
  }
  if (buf.readUInt32BE(at + 17) !== at - start) return `commit record at offset ${at} has a bad byte count`;
  const digest =
    version === 1
      ? createHash("sha256").update(buf.subarray(start, at)).digest()
      : commitDigestOfPayloads(payloads);
  if (typeof digest === "string") return `batch at offset ${start}: ${digest}`;
  if (!digest.equals(buf.subarray(at + 21, at + 53))) {
    return `batch at offset ${start}: SHA-256 does not match its commit record`;
  }
  return { start, end: at + COMMIT_SIZE, firstSeq, payloads };
}
