// Journal rows read from PostgreSQL, validated like anything read from outside (as the
// SQLite store does): the body must be strict JSON and the entry must have the entry
// schema's shape; hash and signature are the verifier's business.
import { isoTime, JournalError, parseStrictJson } from "../contracts/index.js";
import {
  type JournalEntry,
  JournalEntrySchema,
  MalformedRecord,
  type SealedEntry,
} from "../journal/index.js";

export interface Row {
  /** bigint: pg hands it over as text. */
  seq: string;
  time: string;
  type: string;
  run_id: string | null;
  trace_id: string | null;
  prev_hash: string;
  hash: string;
  key_id: string;
  signature: string;
  body: string;
}

export const COLUMNS = "seq, time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body";

export function rowToEntry(row: Row): JournalEntry | MalformedRecord {
  const seq = Number(row.seq);
  let body: unknown;
  try {
    body = parseStrictJson(row.body);
  } catch (err) {
    return new MalformedRecord(`seq ${seq}`, `body is not strict JSON: ${(err as Error).message}`, seq);
  }
  const parsed = JournalEntrySchema.safeParse({ ...row, seq, body });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const at = first === undefined || first.path.length === 0 ? "(root)" : first.path.map(String).join(".");
    return new MalformedRecord(`seq ${seq}`, `entry is malformed at ${at}`, seq);
  }
  return parsed.data as JournalEntry;
}

export function entryOrThrow(row: Row | undefined): JournalEntry | null {
  if (row === undefined) return null;
  const e = rowToEntry(row);
  if (e instanceof MalformedRecord) {
    throw new JournalError("ERR_JOURNAL_STORE", `unreadable entry at ${e.where}`, {
      details: { seq: e.seq },
    });
  }
  return e;
}

/** Refuses a batch that does not extend `last` seq by seq, hash by hash. */
export function assertExtends(last: JournalEntry | null, sealed: readonly SealedEntry[]): void {
  let prevSeq = last?.seq ?? 0;
  let prevHash = last?.hash ?? null;
  for (const { entry } of sealed) {
    if (entry.seq !== prevSeq + 1 || (prevHash !== null && entry.prev_hash !== prevHash)) {
      throw new JournalError(
        "ERR_JOURNAL_CHAIN_BROKEN",
        `entry ${entry.seq} does not extend seq ${prevSeq}`,
        {
          details: { seq: entry.seq },
        },
      );
    }
    prevSeq = entry.seq;
    prevHash = entry.hash;
  }
}

/** Entry times are ISO UTC with milliseconds, so a normalized bound compares as text. */
export function normalizeTime(t: string): string {
  const ms = Date.parse(t);
  if (Number.isNaN(ms))
    throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", "time bound is not an RFC 3339 instant");
  return isoTime(ms);
}
