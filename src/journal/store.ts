// The storage contract every journal store meets (SQLite now, PostgreSQL later).
// The store owns atomicity, durability and validating what it reads back; the
// journal owns chaining and sealing. The one hard rule: `appendBatch` reads the
// chain's last entry and inserts the new ones inside a single exclusive write
// transaction, so that two writers, in one process or in two, can never both
// extend the same head. How a store meets it (docs/journal.md, "Extension points"):
// SQLite by BEGIN IMMEDIATE; PostgreSQL by a transaction that takes a lock on the
// chain (an advisory lock, or SELECT … FOR UPDATE of a head row) before reading the
// last entry, with seq as primary key as the last line of defence.
import type { JournalEntry, JournalHead, SealedEntry } from "./entry.js";

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

/** Bytes a writer cut from a torn segment tail when it opened (segment store only). */
export interface TailCut {
  segment: string;
  offset: number;
  bytes: number;
  reason: string;
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
   * The expected head is the builder's: the journal's writer returns entries it
   * sealed ahead of time when `last` is the head it chained them on, and chains
   * and seals again on `last` otherwise. Entries handed in are trusted as built
   * (the journal typed them); only their linking is checked here.
   */
  appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]>;
  /** The last entry, or null for an empty journal. Validated like every read. */
  last(): Promise<JournalEntry | null>;
  /** The head (seq, hash, time, key_id) of the last entry, or null. */
  head(): Promise<JournalHead | null>;
  get(seq: number): Promise<JournalEntry | null>;
  count(): Promise<number>;
  /**
   * Entries `fromSeq`..`toSeq` (inclusive; default: from 1 to the end) in seq order.
   * Every row is validated against the entry schema as it is read: one that fails
   * (bad JSON, a malformed field) comes back as a MalformedRecord in its place.
   */
  entries(fromSeq?: number, toSeq?: number): AsyncIterable<JournalEntry | MalformedRecord>;
  /** Entries matching every given filter; malformed rows are left out (the verifier reports them). */
  query(q: JournalQuery): Promise<JournalEntry[]>;
  close(): Promise<void>;
  /**
   * Optional (the segment store; PostgreSQL recovers in its own WAL and has none):
   * calls `listener` with every torn tail this store cut — those found when it
   * opened at once, later ones as they are found — so the journal records each one
   * as a warden.journal.tail_cut entry.
   */
  onTailCut?(listener: (cut: TailCut) => void): void;
}
