// Journal rows as the stores read them back (SQLite here, PostgreSQL in src/store-pg): a row
// is validated like anything read from outside — the body must be strict JSON and the entry
// must have the entry schema's shape (a row changed on disk is refused here, before the
// journal chains on it or a reader trusts it; its hash and signature are the verifier's
// business) — and a batch must extend the chain's last entry seq by seq, hash by hash.
import { isoTime, JournalError, parseStrictJson } from "../contracts/index.js";
import { type JournalEntry, JournalEntrySchema, type SealedEntry } from "./entry.js";
import { type JournalQuery, MalformedRecord } from "./store.js";

/** A stored row; `seq` is a number in SQLite and text in PostgreSQL (bigint). */
export interface JournalRow {
  seq: number | string;
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

/** The entry columns in the order every store selects and inserts them. */
export const JOURNAL_COLUMNS = "seq, time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body";

export function rowToEntry(row: JournalRow): JournalEntry | MalformedRecord {
  const seq = Number(row.seq);
  let body: unknown;
  try {
    body = parseStrictJson(row.body);
  } catch (err) {
    return new MalformedRecord(`seq ${seq}`, `body is not strict JSON: ${(err as Error).message}`, seq);
  }
  const parsed = JournalEntrySchema.safeParse({
    seq,
    time: row.time,
    type: row.type,
    run_id: row.run_id,
    trace_id: row.trace_id,
    body,
    prev_hash: row.prev_hash,
    hash: row.hash,
    key_id: row.key_id,
    signature: row.signature,
  });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const at = first === undefined || first.path.length === 0 ? "(root)" : first.path.map(String).join(".");
    return new MalformedRecord(`seq ${seq}`, `entry is malformed at ${at}`, seq);
  }
  return parsed.data as JournalEntry;
}

/** A row that must be readable (the chain's head, a requested seq): unreadable → ERR_JOURNAL_STORE. */
export function entryOrThrow(row: JournalRow | undefined): JournalEntry | null {
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

/**
 * The filter, order and limit of a query over SQLite's journal columns (run_id, type,
 * time, decision; both the SQLite store and the segment index have them): the text
 * after `FROM table` and its parameters.
 */
export function sqliteQuery(q: JournalQuery): { sql: string; args: (string | number)[] } {
  const where: string[] = [];
  const args: (string | number)[] = [];
  const add = (sql: string, v: string | undefined) => {
    if (v === undefined) return;
    where.push(sql);
    args.push(v);
  };
  add("run_id = ?", q.run_id);
  add("type = ?", q.type);
  add("time >= ?", q.since === undefined ? undefined : normalizeTime(q.since));
  add("time < ?", q.until === undefined ? undefined : normalizeTime(q.until));
  add("decision = ?", q.decision);
  const limit = q.limit === undefined ? -1 : Math.max(0, Math.floor(q.limit));
  const sql =
    `${where.length ? ` WHERE ${where.join(" AND ")}` : ""}` +
    ` ORDER BY seq ${q.descending ? "DESC" : "ASC"} LIMIT ${limit}`;
  return { sql, args };
}
