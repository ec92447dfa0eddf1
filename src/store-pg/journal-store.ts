// The journal on PostgreSQL: one global hash chain for every node. An append is one
// transaction that locks the single head row (`SELECT … FROM journal_head FOR UPDATE`),
// reads the last entry, lets the journal build (chain and seal) its batch on it, inserts
// the batch and moves the head, then COMMITs; it resolves only after the COMMIT returned,
// i.e. after PostgreSQL flushed the commit record (synchronous_commit=on, the default).
// Appends from every node serialise on the head row, so two nodes can never extend the
// same head; seq is the primary key as the last line of defence. Group commit is per
// node: the journal's writer gathers the node's concurrent appends into one batch, so a
// node holds the lock once per batch, not once per entry. A node killed mid-transaction
// leaves nothing (the transaction is rolled back by the server); a COMMIT whose answer was
// lost may have committed an entry nobody was told about — never the reverse.
// Round trips per batch: BEGIN with the head lock (one simple query), the last entry's
// read only when another node wrote it, the INSERT that also moves the head (one
// statement per 64 entries; the head moves with the last), and COMMIT — three when this
// node wrote the previous batch.
import { hostname } from "node:os";
import type pg from "pg";
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

/** A journal row as pg returns it (bigint seq as text); read by the journal's shared row reader. */
type Row = JournalRow & { seq: string };
const COLUMNS = JOURNAL_COLUMNS;

/** Rows per INSERT statement (11 parameters each). */
const ROWS = 64;
const PAGE = 2000;

export interface PgJournalOptions {
  /** This node's name, stored with each entry it appended (default host:pid). */
  node?: string;
  /** Close the pool with the store (default true). */
  ownsPool?: boolean;
}

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
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  /** A copy of the last entry this store committed, to skip reading it back. */
  #lastWritten: JournalEntry | null = null;
  #commits = 0;
  #closed = false;

  constructor(pool: pg.Pool, options: PgJournalOptions = {}) {
    this.#pool = pool;
    this.#ownsPool = options.ownsPool ?? true;
    this.node = options.node ?? `${hostname()}:${process.pid}`;
  }

  /** Transactions this handle committed (one lock of the head row each); for benchmarks. */
  get commits(): number {
    return this.#commits;
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
      const entries = await inTransactionFrom<JournalEntry[], { seq: string; hash: string | null }>(
        this.#pool,
        "SELECT seq, hash FROM journal_head WHERE id = 1 FOR UPDATE",
        (c, rows) => this.#appendIn(c, rows[0], build),
      );
      this.#commits++;
      const tail = entries.at(-1);
      if (tail !== undefined) this.#lastWritten = structuredClone(tail);
      return entries;
    } catch (err) {
      this.#lastWritten = null;
      throw asJournalError("append", err);
    }
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
      last =
        cached !== null && cached.seq === seq && cached.hash === head.hash
          ? cached
          : entryOrThrow(
              (await c.query<Row>(`SELECT ${COLUMNS} FROM journal_entries WHERE seq = $1`, [seq])).rows[0],
            );
      if (last === null || last.hash !== head.hash)
        throw new JournalError("ERR_JOURNAL_CHAIN_BROKEN", `the head row does not match entry ${seq}`);
    }
    const sealed = build(last);
    assertExtends(last, sealed);
    for (let i = 0; i < sealed.length; i += ROWS)
      await this.#insert(c, sealed.slice(i, i + ROWS), i + ROWS >= sealed.length);
    return sealed.map((s) => s.entry);
  }

  /** Inserts up to ROWS entries; with `moveHead`, the same statement moves the head to the last. */
  async #insert(c: pg.PoolClient, rows: readonly SealedEntry[], moveHead: boolean): Promise<void> {
    const args: unknown[] = [];
    const values = rows.map(({ entry, bodyJson }, k) => {
      args.push(entry.seq, entry.time, entry.type, entry.run_id, entry.trace_id, entry.prev_hash);
      args.push(entry.hash, entry.key_id, entry.signature, bodyJson, this.node);
      return `(${Array.from({ length: 11 }, (_, j) => `$${k * 11 + j + 1}`).join(", ")})`;
    });
    const tail = rows.at(-1)?.entry;
    let head = "";
    if (moveHead && tail !== undefined) {
      args.push(tail.seq, tail.hash);
      head = `WITH moved AS (UPDATE journal_head SET seq = $${args.length - 1}, hash = $${args.length} WHERE id = 1) `;
    }
    // Named per shape: parsed and planned once per connection, not once per batch.
    await c.query({
      name: `warden-journal-insert-${rows.length}${head === "" ? "" : "-head"}`,
      text: `${head}INSERT INTO journal_entries (${COLUMNS}, node) VALUES ${values.join(", ")}`,
      values: args,
    });
  }

  async last(): Promise<JournalEntry | null> {
    return this.#read("read", async () => {
      const r = await this.#pool.query<Row>(
        `SELECT ${COLUMNS} FROM journal_entries ORDER BY seq DESC LIMIT 1`,
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
      const r = await this.#pool.query<Row>(`SELECT ${COLUMNS} FROM journal_entries WHERE seq = $1`, [seq]);
      return entryOrThrow(r.rows[0]);
    });
  }

  async count(): Promise<number> {
    return this.#read("count", async () => {
      // Seqs run 1..head without a gap (every append extends the head), so the head row
      // is the count: O(1) for readiness probes, where count(*) scans the table.
      const r = await this.#pool.query<{ n: string }>("SELECT seq AS n FROM journal_head WHERE id = 1");
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
          `SELECT ${COLUMNS} FROM journal_entries WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT ${PAGE}`,
          [next, toSeq],
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
    const where: string[] = [];
    const args: string[] = [];
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
      `SELECT ${COLUMNS} FROM journal_entries${where.length ? ` WHERE ${where.join(" AND ")}` : ""}` +
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
