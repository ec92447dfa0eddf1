// The journal files `warden journal verify` reads: a SQLite database (recognized by its
// header) or anything else as a JSONL export.
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { CliError } from "../../contracts/index.js";
import {
  type JournalSource,
  type JournalStore,
  openEmbeddedStore,
  readJsonl,
  SegmentLog,
  SegmentSource,
  segmentDir,
  segmentRecords,
} from "../../journal/index.js";

const SQLITE_MAGIC = "SQLite format 3\0";

export function isSqliteFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new CliError(
      "ERR_CLI_INPUT",
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  try {
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, 16, 0);
    return n === 16 && buf.toString("latin1") === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

export function countLines(path: string): number {
  // Only for the progress bar's total; a rough count is fine.
  let n = 0;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(1 << 20);
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) return n;
      for (let i = 0; i < got; i++) if (buf[i] === 0x0a) n++;
    }
  } finally {
    closeSync(fd);
  }
}

/** One journal file opened for reading: its entries as often as asked, its size, and close. */
export interface JournalFile {
  /** How the output names it: the file's path, or a database chain's label. */
  path: string;
  /** The chain's name as its container knows it (a database's chains); files have none. */
  name?: string;
  /** The store of a SQLite file or a database chain; null for a JSONL export. */
  store: JournalStore | null;
  /** The file for a verifier: the store, or a fresh pass over the export's records. */
  source(): JournalSource;
  /** A fresh pass over the records. */
  entries(): AsyncIterable<unknown>;
  /** Entries (a SQLite file) or lines (an export). */
  size(): Promise<number>;
}

/**
 * The segments directory of a journal path: `<path>.segments` beside a segment
 * journal's index, or the path itself when it is that directory; null otherwise.
 */
export function segmentsOf(path: string): string | null {
  if (existsSync(segmentDir(path))) return segmentDir(path);
  return existsSync(path) && statSync(path).isDirectory() && path.replace(/\/+$/, "").endsWith(".segments")
    ? path
    : null;
}

async function* toAsync(it: Iterable<unknown>): AsyncIterable<unknown> {
  yield* it;
}

/** A segment journal's last seq, read from its tail segment (for progress and sizing only). */
function segmentCount(dir: string): number {
  const log = new SegmentLog(dir, false, Number.MAX_SAFE_INTEGER);
  try {
    return log.last?.seq ?? 0;
  } finally {
    log.close();
  }
}

/** A journal file: a segment journal (read from its segments, never its index), a SQLite file or an export. */
export function openJournalFile(path: string): JournalFile {
  const dir = segmentsOf(path);
  if (dir !== null) {
    return {
      path,
      store: null,
      source: () => new SegmentSource(dir),
      entries: () => toAsync(segmentRecords(dir)),
      size: async () => segmentCount(dir),
    };
  }
  const store = isSqliteFile(path) ? openEmbeddedStore(path, { readonly: true }) : null;
  return {
    path,
    store,
    source: () => store ?? readJsonl(path),
    entries: () => (store ? store.entries() : readJsonl(path)),
    size: async () => (store ? store.count() : countLines(path)),
  };
}
