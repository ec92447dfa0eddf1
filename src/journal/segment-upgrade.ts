// Upgrading a segment journal's format-1 segments to format 2 (`warden journal
// migrate` on a segment journal, docs/journal.md §8.7). Format-1 segments are read and
// verified as they are, and never appended to, so the upgrade is optional. It changes
// only each segment's magic and each commit record's SHA-256 (format 2's covers the
// entries' hashes and signatures, segment-commit.ts): every record keeps its size and
// place, so the index's positions stay true and no entry byte moves. Holding the
// writers' lock, the upgraded segments are staged in `<segments>.upgrading/` (beside
// hard links to the segments already of format 2), checked there by `check` — `journal
// migrate` verifies them from their bytes — and only then renamed over the old ones,
// one by one (file fdatasynced, then the directory fsynced).
import {
  closeSync,
  fdatasyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { JournalError } from "../contracts/index.js";
import { commitDigestOfPayloads } from "./segment-commit.js";
import { fsyncDir, listSegments, readWhole } from "./segment-files.js";
import {
  COMMIT_SIZE,
  headerProblem,
  scanBatches,
  segmentHeader,
  segmentName,
  segmentVersion,
} from "./segment-format.js";
import { SegmentLock } from "./segment-lock.js";

/** A format-1 segment's bytes re-framed as format 2 (same records, new magic and commit digests). */
export function upgradeSegmentBytes(buf: Buffer, firstSeq: number): Buffer {
  const name = segmentName(firstSeq);
  const bad = headerProblem(buf, firstSeq);
  if (bad !== null) throw new JournalError("ERR_JOURNAL_STORE", `segment ${name}: ${bad}`);
  const scan = scanBatches(buf);
  if (scan.torn !== null) throw new JournalError("ERR_JOURNAL_STORE", `segment ${name}: ${scan.torn}`);
  const out = Buffer.from(buf);
  segmentHeader(firstSeq, 2).copy(out, 0);
  for (const b of scan.batches) {
    const digest = commitDigestOfPayloads(b.payloads);
    if (typeof digest === "string") throw new JournalError("ERR_JOURNAL_STORE", `segment ${name}: ${digest}`);
    digest.copy(out, b.end - COMMIT_SIZE + 21);
  }
  return out;
}

function writeDurably(path: string, bytes: Buffer): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Upgrades the format-1 segments of the journal directory `dir`; returns their names
 * (none: nothing to do, nothing written). A failed `check` leaves the journal as it was.
 */
export async function upgradeSegments(
  dir: string,
  options: { busyTimeoutMs?: number; check?: (stagedDir: string) => Promise<void> } = {},
): Promise<string[]> {
  const lock = new SegmentLock(dir, options.busyTimeoutMs ?? 10_000);
  const staged = `${dir}.upgrading`;
  try {
    lock.begin();
    try {
      const old = listSegments(dir).filter((first) => {
        const buf = readWhole(join(dir, segmentName(first)));
        return segmentVersion(buf) === 1;
      });
      if (old.length === 0) return [];
      rmSync(staged, { recursive: true, force: true });
      mkdirSync(staged, { mode: 0o700 });
      for (const first of listSegments(dir)) {
        const name = segmentName(first);
        if (old.includes(first)) {
          writeDurably(join(staged, name), upgradeSegmentBytes(readWhole(join(dir, name)), first));
        } else linkSync(join(dir, name), join(staged, name));
      }
      await options.check?.(staged);
      for (const first of old) {
        const name = segmentName(first);
        renameSync(join(staged, name), join(dir, name));
        fsyncDir(dir);
      }
      return old.map(segmentName);
    } finally {
      rmSync(staged, { recursive: true, force: true });
      lock.end();
    }
  } finally {
    lock.close();
  }
}
