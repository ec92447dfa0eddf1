// The journal on PostgreSQL: one hash chain per store handle, named by `chain`. In
// distributed mode each replica appends to its own chain (its node name; docs/distributed.md,
// "The journal"), so replicas never contend for a head; `chain: ""` is the one global chain
// every replica extended before migration 5 (still selectable: `store.journal.chains: global`).
// A chain's head is its row in `journal_chains`; its entries carry its name, and (chain, seq)
// is the primary key as the last line of defence. An append resolves only after the COMMIT
// returned, i.e. after PostgreSQL flushed the commit record (synchronous_commit=on, the
// default). Group commit is per handle: the journal's writer gathers its concurrent appends
// into one batch. A node killed mid-transaction leaves nothing (rolled back by the server); a
// COMMIT whose answer was lost may have committed an entry nobody was told about — never the
// reverse.
// Round trips: an append first tries the whole batch as ONE conditional statement chained on
// the head this handle expects (its own last entry, or the head and last entry read in one
// query when another writer moved the chain): the head moves and the entries go in only if the
// head is still that one, and the answer comes after COMMIT (journal-append.ts). So the head
// row is never held across a client round trip: one round trip per batch when this handle
// wrote the previous one (always, on a replica's own chain), two otherwise. After
// OPTIMISTIC_TRIES lost races (or for a very large batch) it takes the lock: BEGIN with
// `FOR UPDATE` of the head (one simple query), the last entry's read when needed, the INSERT
// that moves the head, COMMIT.
import { hostname } from "node:os";
import pg from "pg";
import { JournalError, WardenError } from "../contracts/index.js";
import {
  assertExtends,
  entryOrThrow,
  JOURNAL_COLUMNS,
  type JournalEntry,
  type JournalHead,
  type JournalQuery,
  type JournalRow,
  type JournalStore,
  MalformedRecord,
  normalizeTime,
  rowToEntry,
  type SealedEntry,
} from "../journal/index.js";
import { inTransactionFrom, isUnavailable } from "./connect.js";
import {
  type AppendFence,
  type AppendTarget,
  CREATE_CHAIN,
  conditionalAppend,
  fenceCheck,
  fenceLock,
  HEAD_AND_LAST,
  insertStatement,
} from "./journal-append.js";

/** A journal row as pg returns it (bigint seq as text); read by the journal's shared row reader. */
type Row = JournalRow & { seq: string };
const COLUMNS = JOURNAL_COLUMNS;

/** Rows per INSERT statement on the locked path (11 parameters each). */
const ROWS = 64;
/** Largest batch appended as one conditional statement; lost races before taking the lock (measured: the lock held across client round trips scales worse than re-chaining). */
const OPTIMISTIC_ROWS = 512;
const OPTIMISTIC_TRIES = 6;
const PAGE = 2000;

/** Where an append's time went, summed over this handle's transactions (for benchmarks). */
export interface PgAppendStats {
  /** Committed appends (batches). */
  commits: number;
  /** Round trips to the database for them (reads, statements, BEGIN/COMMIT). */
  roundTrips: number;
  /** Reads of the head and last entry: another node had moved the head (or none known). */
  foreignHeads: number;
  /** Conditional appends that lost the race (the head had moved): re-read, re-chained. */
  conflicts: number;
  /** Appends that took the head lock (after OPTIMISTIC_TRIES lost races, or a large batch). */
  locked: number;
  /** ms of the committing statements' round trips (the conditional append, or COMMIT): includes fsync. */
  commitMs: number;
}

export interface PgJournalOptions {
  /** This node's name, stored with each entry it appended (default host:pid). */
  node?: string;
  /** The chain this handle reads and extends (default "": the global chain). */
  chain?: string;
  /** Close the pool with the store (default true). */
  ownsPool?: boolean;
  /**
   * Distributed mode: the runs a batch acts for and the epochs this replica holds them at
   * (PgRunRegistry.fence). A fenced batch commits only if every such run is still this
   * replica's at that epoch; otherwise nothing is stored, `onFenced` gets the runs lost and
   * the append fails with ERR_JOURNAL_FENCED.
   */
  fence?: (runIds: Iterable<string>) => AppendFence | undefined;
  onFenced?: (runIds: string[]) => void;
}

const escapeLiteral = (s: string): string => pg.escapeLiteral(s);

/** A database failure as ERR_JOURNAL_STORE; anything else (a builder's own error) as it is. */
function asJournalError(what: string, err: unknown): unknown {
  if (err instanceof WardenError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" && !isUnavailable(err)) return err;
  return new JournalError(
    "ERR_JOURNAL_STORE",
    `${what} failed${typeof code === "string" ? `: ${code}` : ""}`,
    { cause: err },
  );
}

export class PgJournalStore implements JournalStore {
  readonly node: string;
  readonly chain: string;
  readonly #to: AppendTarget;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #fence: PgJournalOptions["fence"];
  readonly #onFenced: PgJournalOptions["onFenced"];
  /** A copy of the last entry this store committed, to skip reading it back. */
  #lastWritten: JournalEntry | null = null;
  readonly #stats: PgAppendStats = {
    commits: 0,
    roundTrips: 0,
    foreignHeads: 0,
    conflicts: 0,
    locked: 0,
    commitMs: 0,
  };
  #closed = false;

  constructor(pool: pg.Pool, options: PgJournalOptions = {}) {
    this.#pool = pool;
    this.#ownsPool = options.ownsPool ?? true;
    this.node = options.node ?? `${hostname()}:${process.pid}`;
    this.chain = options.chain ?? "";
    this.#to = { chain: this.chain, node: this.node };
    this.#fence = options.fence;
    this.#onFenced = options.onFenced;
  }

  /** The fence of a sealed batch: the runs its entries name (undefined: nothing to fence). */
  #fenceOf(sealed: readonly SealedEntry[]): AppendFence | undefined {
    if (this.#fence === undefined) return undefined;
    const ids: string[] = [];
    for (const s of sealed) if (s.entry.run_id !== null) ids.push(s.entry.run_id);
    return ids.length === 0 ? undefined : this.#fence(ids);
  }

  /** Throws ERR_JOURNAL_FENCED when a run of the fence is no longer this replica's. */
  async #checkFence(fence: AppendFence | undefined, c: pg.Pool | pg.ClientBase = this.#pool): Promise<void> {
    if (fence === undefined) return;
    this.#stats.roundTrips++;
    const r = await c.query<{ run_id: string }>(fenceCheck(fence));
    if (r.rows.length === 0) return;
    const lost = r.rows.map((row) => row.run_id);
    this.#onFenced?.(lost);
    throw new JournalError(
      "ERR_JOURNAL_FENCED",
      `another replica took run ${lost.join(", ")} over: nothing of this batch was journaled`,
      { details: { runs: lost } },
    );
  }

  /** Transactions this handle committed (one lock of the head row each); for benchmarks. */
  get commits(): number {
    return this.#stats.commits;
  }

  /** Where appends spent their time so far (a copy). */
  appendStats(): PgAppendStats {
    return { ...this.#stats };
  }

  #open(): void {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal store is closed");
  }

  async #read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.#open();
    try {
      return await fn();
    } catch (err) {
      throw asJournalError(what, err);
    }
  }

  async appendBatch(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]> {
    this.#open();
    try {
      const entries = (await this.#appendOptimistic(build)) ?? (await this.#appendLocked(build));
      this.#stats.commits++;
      const tail = entries.at(-1);
      if (tail !== undefined) this.#lastWritten = structuredClone(tail);
      return entries;
    } catch (err) {
      this.#lastWritten = null;
      throw asJournalError("append", err);
    }
  }

  /** The head and the entry it names, read together (checked against each other). */
  async #readLast(): Promise<JournalEntry | null> {
    this.#stats.roundTrips++;
    this.#stats.foreignHeads++;
    const r = await this.#pool.query<Row & { head_seq: string; head_hash: string | null }>(HEAD_AND_LAST, [
      this.chain,
    ]);
    const row = r.rows[0];
    if (row === undefined) {
      // A chain's first append: its head row, empty (a concurrent creator's row is as good).
      this.#stats.roundTrips++;
      await this.#pool.query(CREATE_CHAIN, [this.chain, this.node]);
      return null;
    }
    if (Number(row.head_seq) === 0) return null;
    const last = entryOrThrow(row);
    if (last === null || last.seq !== Number(row.head_seq) || last.hash !== row.head_hash)
      throw new JournalError("ERR_JOURNAL_CHAIN_BROKEN", `the head row does not match entry ${row.head_seq}`);
    return last;
  }

  /** The batch as one conditional statement; undefined when it keeps losing the race (take the lock). */
  async #appendOptimistic(
    build: (last: JournalEntry | null) => SealedEntry[],
  ): Promise<JournalEntry[] | undefined> {
    const st = this.#stats;
    let last = this.#lastWritten;
    let known = last !== null;
    for (let i = 0; i < OPTIMISTIC_TRIES; i++) {
      if (!known) last = await this.#readLast();
      known = false;
      const sealed = build(last);
      assertExtends(last, sealed);
      if (sealed.length === 0) return [];
      if (sealed.length > OPTIMISTIC_ROWS) return undefined;
      const fence = this.#fenceOf(sealed);
      const t0 = performance.now();
      st.roundTrips++;
      const r = await this.#pool.query(conditionalAppend(last, sealed, this.#to, fence));
      st.commitMs += performance.now() - t0;
      if (r.rowCount === sealed.length) return sealed.map((x) => x.entry);
      if (r.rowCount !== 0)
        throw new JournalError("ERR_JOURNAL_STORE", `a conditional append stored ${r.rowCount} entries`);
      await this.#checkFence(fence); // nothing stored: a run taken over, or the head moved
      st.conflicts++;
    }
    return undefined;
  }

  async #appendLocked(build: (last: JournalEntry | null) => SealedEntry[]): Promise<JournalEntry[]> {
    const st = this.#stats;
    st.locked++;
    st.roundTrips += 2; // BEGIN with the lock, COMMIT
    let built = 0;
    await this.#pool.query(CREATE_CHAIN, [this.chain, this.node]);
    const entries = await inTransactionFrom<JournalEntry[], { seq: string; hash: string | null }>(
      this.#pool,
      // One simple query (no parameters): the name as a literal, escaped by pg.
      `SELECT seq, hash FROM journal_chains WHERE chain = ${escapeLiteral(this.chain)} FOR UPDATE`,
      async (c, rows) => {
        const out = await this.#appendIn(c, rows[0], build);
        built = performance.now();
        return out;
      },
    );
    st.commitMs += performance.now() - built;
    return entries;
  }

  async #appendIn(
    c: pg.PoolClient,
    head: { seq: string; hash: string | null } | undefined,
    build: (last: JournalEntry | null) => SealedEntry[],
  ): Promise<JournalEntry[]> {
    if (head === undefined) throw new JournalError("ERR_JOURNAL_STORE", "the journal has no head row");
    const seq = Number(head.seq);
    const cached = this.#lastWritten;
    let last: JournalEntry | null = null;
    if (seq > 0) {
      const ours = cached !== null && cached.seq === seq && cached.hash === head.hash;
      if (!ours) {
        this.#stats.foreignHeads++;
        this.#stats.roundTrips++;
      }
      last = ours
        ? cached
        : entryOrThrow(
            (
              await c.query<Row>(`SELECT ${COLUMNS} FROM journal_entries WHERE chain = $1 AND seq = $2`, [
                this.chain,
                seq,
              ])
            ).rows[0],
          );
      if (last === null || last.hash !== head.hash)
        throw new JournalError("ERR_JOURNAL_CHAIN_BROKEN", `the head row does not match entry ${seq}`);
    }
    const sealed = build(last);
    assertExtends(last, sealed);
    const fence = this.#fenceOf(sealed);
    if (fence !== undefined) {
      // Held FOR SHARE until COMMIT: an adoption waits for this batch or this batch sees it.
      this.#stats.roundTrips++;
      const held = await c.query(fenceLock(fence));
      if (held.rowCount !== fence.runs.length) await this.#checkFence(fence, c);
    }
    for (let i = 0; i < sealed.length; i += ROWS) {
      this.#stats.roundTrips++;
      await c.query(insertStatement(sealed.slice(i, i + ROWS), this.#to, i + ROWS >= sealed.length));
    }
    return sealed.map((s) => s.entry);
  }

  async last(): Promise<JournalEntry | null> {
    return this.#read("read", async () => {
      const r = await this.#pool.query<Row>(
        `SELECT ${COLUMNS} FROM journal_entries WHERE chain = $1 ORDER BY seq DESC LIMIT 1`,
        [this.chain],
      );
      return entryOrThrow(r.rows[0]);
    });
  }

  async head(): Promise<JournalHead | null> {
    const last = await this.last();
    return last === null ? null : { seq: last.seq, hash: last.hash, time: last.time, key_id: last.key_id };
  }

  async get(seq: number): Promise<JournalEntry | null> {
    return this.#read("read", async () => {
      const r = await this.#pool.query<Row>(
        `SELECT ${COLUMNS} FROM journal_entries WHERE chain = $1 AND seq = $2`,
        [this.chain, seq],
      );
      return entryOrThrow(r.rows[0]);
    });
  }

  async count(): Promise<number> {
    return this.#read("count", async () => {
      // Seqs run 1..head without a gap (every append extends the head), so the head row
      // is the count: O(1) for readiness probes, where count(*) scans the table.
      const r = await this.#pool.query<{ n: string }>(
        "SELECT seq AS n FROM journal_chains WHERE chain = $1",
        [this.chain],
      );
      return Number(r.rows[0]?.n ?? 0);
    });
  }

  async *entries(
    fromSeq = 1,
    toSeq = Number.MAX_SAFE_INTEGER,
  ): AsyncIterable<JournalEntry | MalformedRecord> {
    let next = fromSeq;
    for (;;) {
      const rows = await this.#read("read", async () => {
        const r = await this.#pool.query<Row>(
          `SELECT ${COLUMNS} FROM journal_entries WHERE chain = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT ${PAGE}`,
          [this.chain, next, toSeq],
        );
        return r.rows;
      });
      for (const row of rows) yield rowToEntry(row);
      const lastRow = rows.at(-1);
      if (rows.length < PAGE || lastRow === undefined) return;
      next = Number(lastRow.seq) + 1;
    }
  }

  async query(q: JournalQuery): Promise<JournalEntry[]> {
    this.#open();
    const where: string[] = ["chain = $1"];
    const args: string[] = [this.chain];
    const add = (column: string, op: string, v: string | undefined) => {
      if (v === undefined) return;
      args.push(v);
      where.push(`${column} ${op} $${args.length}`);
    };
    add("run_id", "=", q.run_id);
    add("type", "=", q.type);
    add("time", ">=", q.since === undefined ? undefined : normalizeTime(q.since));
    add("time", "<", q.until === undefined ? undefined : normalizeTime(q.until));
    add("decision", "=", q.decision);
    const limit = q.limit === undefined ? "ALL" : String(Math.max(0, Math.floor(q.limit)));
    const sql =
      `SELECT ${COLUMNS} FROM journal_entries WHERE ${where.join(" AND ")}` +
      ` ORDER BY seq ${q.descending ? "DESC" : "ASC"} LIMIT ${limit}`;
    return this.#read("query", async () => {
      const out: JournalEntry[] = [];
      for (const row of (await this.#pool.query<Row>(sql, args)).rows) {
        const e = rowToEntry(row);
        if (!(e instanceof MalformedRecord)) out.push(e);
      }
      return out;
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) await this.#pool.end().catch(() => undefined);
  }
}
