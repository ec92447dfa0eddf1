// Opening the embedded journal at a path: a segment journal (`<path>.segments/` beside
// its index `<path>`) for anything new; a SQLite journal of the earlier format is read
// as it is, but never written — `warden journal migrate` turns it into a segment
// journal (verified before and after), so its entries get a source of truth first.
import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { canonicalJson, JournalError } from "../contracts/index.js";
import type { SealedEntry } from "./entry.js";
import { fsyncDir } from "./segment-files.js";
import { encodeBatch } from "./segment-format.js";
import { isIndexFile } from "./segment-index.js";
import { SegmentLog } from "./segment-log.js";
import { SegmentJournalStore, type SegmentStoreOptions, segmentDir } from "./segment-store.js";
import { SqliteJournalStore } from "./sqlite-store.js";
import { type JournalStore, MalformedRecord } from "./store.js";

export type EmbeddedStore = SegmentJournalStore | SqliteJournalStore;

/** Whether `path` names a SQLite journal of the earlier format (no segments beside it). */
export function isLegacyJournal(path: string): boolean {
  if (existsSync(segmentDir(path)) || !existsSync(path) || statSync(path).size === 0) return false;
  return !isIndexFile(path);
}

/**
 * The embedded store at `path` (":memory:" and "file:" URIs: an in-memory SQLite journal,
 * as before). Writable: a segment journal (created when new); a
 * SQLite journal of the earlier format is refused until migrated (ERR_JOURNAL_STORE).
 * Read-only: a segment journal (read through its index, caught up first) or an
 * earlier SQLite journal as it is.
 */
export function openEmbeddedStore(path: string, options: SegmentStoreOptions = {}): EmbeddedStore {
  // An in-memory journal (tests, a hooks engine without a journal path) has no files to segment.
  if (path === "" || path === ":memory:" || path.startsWith("file:")) {
    return SqliteJournalStore.open(path, {
      ...(options.readonly ? { readonly: true } : {}),
      ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    });
  }
  if (existsSync(segmentDir(path))) return SegmentJournalStore.open(path, options);
  if (options.readonly) {
    if (existsSync(path) && isIndexFile(path)) {
      throw new JournalError("ERR_JOURNAL_STORE", `${path} is an index whose segments are missing`);
    }
    return SqliteJournalStore.open(path, { readonly: true });
  }
  if (isLegacyJournal(path)) {
    throw new JournalError(
      "ERR_JOURNAL_STORE",
      `${path} is a SQLite journal of the earlier format: run \`warden journal migrate --db ${path}\` first`,
    );
  }
  return SegmentJournalStore.open(path, options);
}

/** Reads a store's entries in seq order as sealed entries (bodies in canonical text). */
async function* sealedOf(store: JournalStore): AsyncIterable<SealedEntry> {
  for await (const e of store.entries()) {
    if (e instanceof MalformedRecord) throw new JournalError("ERR_JOURNAL_STORE", `${e.where}: ${e.message}`);
    yield { entry: e, bodyJson: canonicalJson(e.body) };
  }
}

/**
 * Writes every entry of the SQLite journal at `path` into `<path>.segments/` (one
 * batch per 1024 entries, each fdatasynced), runs `check` on the new segments, and
 * only then puts them in place and marks the file as their index.
 */
export async function migrateToSegments(
  path: string,
  options: { segmentBytes?: number; check?: (segmentsDir: string) => Promise<void> } = {},
): Promise<number> {
  const segmentBytes = options.segmentBytes;
  if (!isLegacyJournal(path))
    throw new JournalError("ERR_JOURNAL_STORE", `${path} is not a SQLite journal to migrate`);
  const dir = segmentDir(path);
  const tmp = `${dir}.migrating`;
  rmSync(tmp, { recursive: true, force: true });
  const src = SqliteJournalStore.open(path, { readonly: true });
  const log = new SegmentLog(tmp, true, Math.max(4096, segmentBytes ?? 64 * 1024 * 1024));
  let n = 0;
  try {
    let batch: SealedEntry[] = [];
    const flush = () => {
      if (batch.length > 0) log.append(encodeBatch(batch), batch.at(-1)!.entry);
      n += batch.length;
      batch = [];
    };
    for await (const s of sealedOf(src)) {
      batch.push(s);
      if (batch.length === 1024) flush();
    }
    flush();
  } finally {
    log.close();
    await src.close();
  }
  try {
    // Checked before it is put in place (`journal migrate` verifies it): a failed check leaves no segments.
    await options.check?.(tmp);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  // The directory appears whole or not at all.
  renameSync(tmp, dir);
  fsyncDir(dirname(dir));
  // Opening it marks the file as the segments' index and checks it against them.
  await SegmentJournalStore.open(path).close();
  return n;
}
