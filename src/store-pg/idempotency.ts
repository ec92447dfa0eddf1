// /v1/execute's Idempotency-Key, shared by every replica (issue 36; docs/distributed.md,
// "Retries"). A key is claimed by the first attempt (`pending`, with this node), and its
// outcome (status and body) stored when the answer is known (`done`): a retry on any replica
// returns that outcome instead of executing again; a retry while the first attempt is still
// pending (in flight, or its replica paused or died mid-call) is refused, never executed. A
// key given back (`release`) is one whose attempt provably executed nothing. Each method is
// one or two single statements: no lock across a round trip. Rows older than `ttlMs` go.
import type pg from "pg";
import { storeError } from "./connect.js";

export type IdempotencyClaim =
  | { kind: "new" }
  | { kind: "done"; status: number; body: string }
  | { kind: "pending"; node: string }
  | { kind: "mismatch" };

export interface IdempotencyOptions {
  node: string;
  /** How long a key's outcome is kept (default 24 h). */
  ttlMs?: number;
  clock?: () => number;
}

export class PgIdempotencyKeys {
  readonly #pool: pg.Pool;
  readonly #node: string;
  readonly #ttl: number;
  readonly #clock: () => number;
  #claims = 0;

  constructor(pool: pg.Pool, o: IdempotencyOptions) {
    this.#pool = pool;
    this.#node = o.node;
    this.#ttl = o.ttlMs ?? 24 * 3_600_000;
    this.#clock = o.clock ?? Date.now;
  }

  async claim(principalId: string, key: string, requestHash: string): Promise<IdempotencyClaim> {
    try {
      if (++this.#claims % 1000 === 0)
        await this.#pool.query("DELETE FROM idempotency_keys WHERE created_at < $1", [
          this.#clock() - this.#ttl,
        ]);
      const ins = await this.#pool.query(
        "INSERT INTO idempotency_keys (principal_id, key, request_hash, node, state, created_at) " +
          "VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (principal_id, key) DO NOTHING",
        [principalId, key, requestHash, this.#node, this.#clock()],
      );
      if (ins.rowCount === 1) return { kind: "new" };
      const r = await this.#pool.query<{
        request_hash: string;
        node: string;
        state: string;
        status: number | null;
        response: string | null;
      }>(
        "SELECT request_hash, node, state, status, response FROM idempotency_keys WHERE principal_id = $1 AND key = $2",
        [principalId, key],
      );
      const row = r.rows[0];
      if (row === undefined) return this.claim(principalId, key, requestHash); // released meanwhile
      if (row.request_hash !== requestHash) return { kind: "mismatch" };
      if (row.state === "done" && row.status !== null && row.response !== null)
        return { kind: "done", status: row.status, body: row.response };
      return { kind: "pending", node: row.node };
    } catch (err) {
      throw storeError("idempotency keys", err);
    }
  }

  /** Stores the attempt's outcome: every later retry answers it. */
  async finish(principalId: string, key: string, status: number, body: string): Promise<void> {
    try {
      await this.#pool.query(
        "UPDATE idempotency_keys SET state = 'done', status = $3, response = $4 WHERE principal_id = $1 AND key = $2 AND node = $5",
        [principalId, key, status, body, this.#node],
      );
    } catch (err) {
      throw storeError("idempotency keys", err);
    }
  }

  /** Gives the key back: its attempt executed nothing (a retry may run it). */
  async release(principalId: string, key: string): Promise<void> {
    try {
      await this.#pool.query(
        "DELETE FROM idempotency_keys WHERE principal_id = $1 AND key = $2 AND state = 'pending' AND node = $3",
        [principalId, key, this.#node],
      );
    } catch (err) {
      throw storeError("idempotency keys", err);
    }
  }
}
