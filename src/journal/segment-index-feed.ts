// The index rows of a journal directory's entries, read from the segments (a rebuild,
// or a catch-up on entries other writers appended): batches are checked by their
// commit record (count, SHA-256) as they are scanned, and each entry record gives its
// fields without its body being parsed — the payload is canonical JSON whose first
// member is `body` and whose other members are flat strings and integers, so the last
// structural `,"hash":"sha256:` ends the body (a quote inside a string is escaped).
// The index is derived data: `journal verify` checks every entry in full.
import { join } from "node:path";
import { JournalError } from "../contracts/index.js";
import { HASH_MARK } from "./segment-commit.js";
import { listSegments, readPrefix, readWhole } from "./segment-files.js";
import {
  COMMIT_KIND,
  COMMIT_SIZE,
  FRAME_SIZE,
  HEADER_SIZE,
  headerProblem,
  scanBatches,
  segmentName,
  segmentVersion,
} from "./segment-format.js";
import { DECISION_PATHS, type IndexRow } from "./segment-index.js";

const BODY_START = Buffer.from('{"body":{', "latin1");
const SEQ_MAX = Number.MAX_SAFE_INTEGER;

const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;

function rowOf(payload: Buffer, segment: number, offset: number, where: () => string): IndexRow {
  const cut = payload.lastIndexOf(HASH_MARK);
  let rest: Record<string, unknown> | null = null;
  if (cut > 0 && payload.subarray(0, BODY_START.length).equals(BODY_START)) {
    try {
      rest = JSON.parse(`{${payload.toString("utf8", cut + 1)}`) as Record<string, unknown>;
    } catch {
      rest = null;
    }
  }
  const seq = rest?.seq;
  if (
    rest === null ||
    typeof seq !== "number" ||
    !Number.isSafeInteger(seq) ||
    seq < 1 ||
    !isText(rest.hash) ||
    !isText(rest.time) ||
    !isText(rest.type) ||
    !(rest.run_id === null || isText(rest.run_id))
  ) {
    throw new JournalError(
      "ERR_JOURNAL_STORE",
      `segments unreadable at ${where()}: entry record is not canonical`,
    );
  }
  const type = rest.type as string;
  return {
    seq,
    time: rest.time as string,
    type,
    run_id: rest.run_id as string | null,
    decision: null,
    hash: rest.hash as string,
    segment,
    offset,
    length: payload.length,
    // The decision is read by SQLite from the body text, only for the types that carry one.
    body: DECISION_PATHS[type] === undefined ? null : payload.toString("utf8", 8, cut),
  };
}

/** Where the index's last entry ends: its segment and the end of its payload. */
export interface FeedStart {
  segment: number;
  end: number;
}

/**
 * The batches of one segment to read: all of it, or — when `start` says where the
 * entry before `fromSeq` ends and a commit record follows it there (the index is
 * extended by whole batches) — only the batches after that commit record.
 */
function scanOf(dir: string, first: number, start: FeedStart | undefined) {
  const name = segmentName(first);
  if (start !== undefined && start.segment === first) {
    const tail = readWhole(join(dir, name), start.end);
    if (tail[0] === COMMIT_KIND && tail.length >= COMMIT_SIZE) {
      const base = start.end + COMMIT_SIZE;
      const version = segmentVersion(readPrefix(join(dir, name), HEADER_SIZE));
      return { base, scan: scanBatches(tail.subarray(COMMIT_SIZE), 0, version) };
    }
  }
  const buf = readWhole(join(dir, name));
  const bad = headerProblem(buf, first);
  if (bad !== null) throw new JournalError("ERR_JOURNAL_STORE", `segment ${name}: ${bad}`);
  return { base: 0, scan: scanBatches(buf) };
}

/**
 * Index rows of the entries `fromSeq`..`toSeq` in seq order, a batch at a time (whole
 * segments before `fromSeq` skipped by the next one's first seq, whole batches by their
 * commit record, and with `start` the bytes before it not read at all). Stops at the
 * end of the complete batches; a bad header or an unreadable entry record throws
 * ERR_JOURNAL_STORE.
 */
export function* indexFeed(
  dir: string,
  fromSeq = 1,
  toSeq = SEQ_MAX,
  start?: FeedStart,
): Iterable<IndexRow[]> {
  const segs = listSegments(dir);
  for (let i = 0; i < segs.length; i++) {
    const first = segs[i]!;
    const following = segs[i + 1];
    if (following !== undefined && following <= fromSeq) continue;
    if (first > toSeq) return;
    const name = segmentName(first);
    const { base, scan } = scanOf(dir, first, start);
    for (const b of scan.batches) {
      if (b.firstSeq + b.payloads.length <= fromSeq) continue;
      if (b.firstSeq > toSeq) return;
      const rows: IndexRow[] = [];
      let at = base + b.start;
      for (let k = 0; k < b.payloads.length; k++) {
        const p = b.payloads[k]!;
        at += FRAME_SIZE;
        const seq = b.firstSeq + k;
        if (seq >= fromSeq && seq <= toSeq) {
          const row = rowOf(p, first, at, () => `segment ${name} offset ${at}`);
          if (row.seq !== seq) {
            throw new JournalError(
              "ERR_JOURNAL_STORE",
              `segment ${name} offset ${at}: seq ${row.seq}, expected ${seq}`,
            );
          }
          rows.push(row);
        }
        at += p.length;
      }
      yield rows;
    }
    if (scan.torn !== null) return;
  }
}
