// The one mechanism behind the shared step-up and deferred queues (approvals.ts, deferred.ts;
// docs/distributed.md, "Step-up across replicas"): an item held on one replica is also a row
// (its holder node and its expiry), listed by every replica; its verdict is claimed by one
// conditional statement, `UPDATE … SET verdict WHERE verdict IS NULL AND expires_at > now`,
// which NOTIFYs the queue's channel at COMMIT (one verdict per item, ever); the holder LISTENs
// and polls every `pollMs`, reads the verdict and hands it to its queue, which checks it again
// itself. A row goes when its hold ends; expired rows (of replicas that died) go once a minute.
// What is held, what a verdict must satisfy and the local queue it settles stay in each queue.
import type pg from "pg";
import { storeError } from "./connect.js";
import type { PgListener } from "./watch.js";

/** How often a replica deletes expired rows (those of replicas that died holding them). */
const PRUNE_MS = 60_000;
/** The most rows one listing returns. */
const LIST_LIMIT = 1000;

/** A shared queue's options (PgApprovalOptions, PgDeferOptions). */
export interface SharedQueueOptions<L> {
  /** This replica's name, stored as each row's holder. */
  node: string;
  /** This replica's own queue, which the rows share. */
  local: L;
  /** Catch-up period when notifications are lost (default 1 s). */
  pollMs?: number;
  clock?: () => number;
}

/** The columns every held row has besides its item. */
export interface HeldRow {
  id: string;
  decisionId: string;
  runId: string;
  principalId?: string | undefined;
}

export interface VerdictRowsOptions<T> {
  /** The table and its item column (code constants, never input). */
  table: "approvals" | "deferred";
  column: "request" | "item";
  channel: string;
  /** The store errors' subject, e.g. "approval queue". */
  what: string;
  node: string;
  /** A stored item, read back (throws when it is not one). */
  parse: (text: string) => T;
  /** A stored verdict for an item held here: the queue checks it again and settles it. */
  apply: (id: string, verdict: string) => void;
  pollMs?: number | undefined;
  clock: () => number;
}

export class VerdictRows<T> {
  readonly #pool: pg.Pool;
  readonly #o: VerdictRowsOptions<T>;
  /** Held items whose row is being stored (resolves true once it is). */
  readonly #rows = new Map<string, Promise<boolean>>();
  /** Held items whose row is stored: the ones a notification may concern. */
  readonly #mine = new Set<string>();
  readonly #poll: NodeJS.Timeout;
  #listener: PgListener | undefined;
  #pruned = 0;

  constructor(pool: pg.Pool, options: VerdictRowsOptions<T>) {
    this.#pool = pool;
    this.#o = options;
    this.#poll = setInterval(() => void this.#catchUp(), options.pollMs ?? 1000);
    this.#poll.unref();
  }

  /** Connects the notifications (the poll covers their absence). */
  async listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void> {
    this.#listener = await open((id) => {
      if (this.#mine.has(id)) void this.#apply([id]).catch(() => undefined);
    });
  }

  /** Stores the held item's row; a rejection means no row (the caller cancels the hold). */
  stored(row: HeldRow, item: unknown, timeoutMs: number): Promise<void> {
    const insert = this.#insert(row, item, timeoutMs);
    this.#rows.set(
      row.id,
      insert.then(
        () => {
          if (this.#rows.has(row.id)) this.#mine.add(row.id);
          return true;
        },
        () => false,
      ),
    );
    return insert;
  }

  /** The hold ended here; its row goes (once stored, if it ever was). */
  ended(id: string): void {
    const stored = this.#rows.get(id);
    this.#rows.delete(id);
    this.#mine.delete(id);
    void stored
      ?.then((ok) => (ok ? this.#pool.query(`DELETE FROM ${this.#o.table} WHERE id = $1`, [id]) : undefined))
      .catch(() => undefined);
  }

  /** `own` (this replica's items, first) and every other replica's pending rows. */
  async list(own: Map<string, T>): Promise<T[]> {
    const { table, column } = this.#o;
    try {
      const r = await this.#pool.query<{ id: string; item: string }>(
        `SELECT id, ${column} AS item FROM ${table} WHERE verdict IS NULL AND expires_at > $1 ORDER BY expires_at LIMIT ${LIST_LIMIT}`,
        [this.#o.clock()],
      );
      for (const row of r.rows) if (!own.has(row.id)) own.set(row.id, this.#o.parse(row.item));
    } catch (err) {
      throw storeError(this.#o.what, err);
    }
    return [...own.values()];
  }

  /** A pending (unanswered, unexpired) row's item, whichever replica holds it. */
  async load(id: string): Promise<T | undefined> {
    const { table, column } = this.#o;
    try {
      const r = await this.#pool.query<{ item: string }>(
        `SELECT ${column} AS item FROM ${table} WHERE id = $1 AND verdict IS NULL AND expires_at > $2`,
        [id, this.#o.clock()],
      );
      const text = r.rows[0]?.item;
      return text === undefined ? undefined : this.#o.parse(text);
    } catch (err) {
      throw storeError(this.#o.what, err);
    }
  }

  /** The one verdict of an item: true when this call stored it. */
  async claim(id: string, verdict: unknown, by: string): Promise<boolean> {
    try {
      const r = await this.#pool.query(
        `WITH claimed AS (UPDATE ${this.#o.table} SET verdict = $2, decided_by = $3, decided_at = $4 ` +
          "WHERE id = $1 AND verdict IS NULL AND expires_at > $4 RETURNING id) " +
          `SELECT pg_notify('${this.#o.channel}', id) FROM claimed`,
        [id, JSON.stringify(verdict), by, this.#o.clock()],
      );
      return r.rowCount === 1;
    } catch (err) {
      throw storeError(this.#o.what, err);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    await this.#listener?.close();
  }

  async #insert(row: HeldRow, item: unknown, timeoutMs: number): Promise<void> {
    const { table, column } = this.#o;
    await this.#pool.query(
      `INSERT INTO ${table} (id, decision_id, run_id, principal_id, node, ${column}, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        row.id,
        row.decisionId,
        row.runId,
        row.principalId ?? null,
        this.#o.node,
        JSON.stringify(item),
        this.#o.clock() + timeoutMs,
      ],
    );
  }

  /** Hands the verdicts other replicas stored for items held here to the queue. */
  async #apply(ids: string[]): Promise<void> {
    const r = await this.#pool.query<{ id: string; verdict: string }>(
      `SELECT id, verdict FROM ${this.#o.table} WHERE id = ANY($1::text[]) AND verdict IS NOT NULL`,
      [ids],
    );
    for (const row of r.rows) if (this.#mine.has(row.id)) this.#o.apply(row.id, row.verdict);
  }

  async #catchUp(): Promise<void> {
    const now = this.#o.clock();
    if (now - this.#pruned >= PRUNE_MS) {
      this.#pruned = now;
      // Rows of replicas that died holding them: past their expiry nobody can answer them.
      await this.#pool
        .query(`DELETE FROM ${this.#o.table} WHERE expires_at <= $1`, [now])
        .catch(() => undefined);
    }
    if (this.#mine.size === 0) return;
    await this.#apply([...this.#mine]).catch(() => undefined);
  }
}
