// The storage contract every journal store meets (SQLite now, PostgreSQL later).
// The store owns atomicity and durability; the journal owns hashing and signing.
// The one hard rule: `appendBatch` reads the chain's last entry and inserts the new
// ones inside a single exclusive write transaction, so that two writers, in one
// process or in two, can never both extend the same head.
import type { JournalEntry, SealedEntry } from "./entry.js";

/** A stored row that cannot be read back as an entry (bad JSON, missing column). */
export class MalformedRecord {
  constructor(
    /** Where it was found: "seq 17", "line 3". */
    readonly where: string,
    readonly message: string,
    /** The sequence number, when the container knows it. */
    readonly seq?: number,
  ) {}
}

export interface JournalQuery {
  run_id?: string;
  type?: string;
  /** Entries whose time is at or after this RFC 3339 instant. */
  since?: string;
  /** Entries whose time is before this RFC 3339 instant. */
  until?: string;
  /** Policy decision carried by the body (warden.gate.decision, dare.policy.decision, dare.tool.response, HITL). */
  decision?: string;
  /** Newest first when true (default oldest first). */
  descending?: boolean;
  limit?: number;
}

export interface JournalStore {
  /**
   * In one exclusive transaction: read the last entry, call `build` with it, insert
   * what it returns, commit durably. Resolves only after the commit is on disk.
   * `build` is synchronous and may throw to abort; the store also refuses entries
   * that do not extend the last one (ERR_JOURNAL_CHAIN_BROKEN). A store may call
   * `build` more than once (first on a head it expects, then on the head read in
   * the transaction); only what the call given the real head returns is stored.
   */
  appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]>;
  /** The last entry, or null for an empty journal. */
  last(): Promise<JournalEntry | null>;
  get(seq: number): Promise<JournalEntry | null>;
  count(): Promise<number>;
  /** Every entry in seq order, as stored; unreadable rows come back as MalformedRecord. */
  entries(fromSeq?: number): AsyncIterable<JournalEntry | MalformedRecord>;
  query(q: JournalQuery): Promise<JournalEntry[]>;
  close(): Promise<void>;
}
