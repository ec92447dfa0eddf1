// Principal state and message nonces shared by every replica, each one atomic statement.
//   principal_state: a quarantine is written by `INSERT … ON CONFLICT DO UPDATE … WHERE`
//     the stored record holds no quarantine yet, so the first trigger wins on every node
//     (as in the in-process cache) and a concurrent second one cannot overwrite it; only
//     a lift (a record without quarantine, an operator's act) clears it.
//   message_nonces: `INSERT … ON CONFLICT DO UPDATE … WHERE until < now RETURNING`: a row
//     comes back only when the nonce is new or its previous claim expired, so two nodes
//     claiming the same nonce at once get one "claimed" and one "replayed".
import type pg from "pg";
import type { PrincipalRecord, PrincipalStateStore } from "../context/index.js";
import { canonicalJson, isPlainObject, RuntimeError } from "../contracts/index.js";
import type { ClaimResult, NonceStore } from "../messaging/index.js";
import { storeError } from "./connect.js";
import { PRINCIPAL_CHANNEL } from "./watch.js";

function parseRecord(principalId: string, text: string): PrincipalRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const q = isPlainObject(value) ? value.quarantine : undefined;
  if (
    !isPlainObject(value) ||
    value.principalId !== principalId ||
    (q !== undefined && (!isPlainObject(q) || typeof q.runId !== "string" || typeof q.reason !== "string"))
  ) {
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `principal state of ${principalId} is unreadable`);
  }
  return value as unknown as PrincipalRecord;
}

export class PgPrincipalStateStore implements PrincipalStateStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async load(principalId: string): Promise<PrincipalRecord | undefined> {
    let text: string | undefined;
    try {
      const r = await this.#pool.query<{ record: string }>(
        "SELECT record FROM principal_state WHERE principal_id = $1",
        [principalId],
      );
      text = r.rows[0]?.record;
    } catch (err) {
      throw storeError("principal state", err);
    }
    return text === undefined ? undefined : parseRecord(principalId, text);
  }

  /** Every replica's quarantined principals (at most `limit`). */
  async listQuarantined(limit: number): Promise<PrincipalRecord[]> {
    let rows: { principal_id: string; record: string }[];
    try {
      const r = await this.#pool.query<{ principal_id: string; record: string }>(
        "SELECT principal_id, record FROM principal_state WHERE record::jsonb ? 'quarantine' " +
          "ORDER BY principal_id LIMIT $1",
        [limit],
      );
      rows = r.rows;
    } catch (err) {
      throw storeError("principal state", err);
    }
    return rows.map((row) => parseRecord(row.principal_id, row.record));
  }

  /** Persists a quarantine (first one wins) or a lift (no quarantine: clears it). */
  async save(record: PrincipalRecord): Promise<void> {
    const lift = record.quarantine === undefined;
    try {
      // One statement, one implicit transaction: the NOTIFY is delivered at its COMMIT.
      await this.#pool.query(
        "WITH saved AS (INSERT INTO principal_state (principal_id, record) VALUES ($1, $2) " +
          "ON CONFLICT (principal_id) DO UPDATE SET record = excluded.record, version = principal_state.version + 1 " +
          "WHERE $3 OR NOT (principal_state.record::jsonb ? 'quarantine') RETURNING principal_id) " +
          `SELECT pg_notify('${PRINCIPAL_CHANNEL}', principal_id) FROM saved`,
        [record.principalId, canonicalJson(record), lift],
      );
    } catch (err) {
      throw storeError("principal state", err);
    }
  }
}

export interface NonceOptions {
  /** Unexpired nonces kept at most; past it a claim is refused ("full", fail closed). */
  max?: number;
}

/** Replay protection across replicas: the same (scope, sender, nonce) is claimed once. */
/** Claims between two background deletions of expired nonces (the table stays bounded). */
const PRUNE_EVERY = 1000;

export class PgNonceStore implements NonceStore {
  readonly #pool: pg.Pool;
  readonly #max: number;
  #claims = 0;

  constructor(pool: pg.Pool, options: NonceOptions = {}) {
    this.#pool = pool;
    this.#max = options.max ?? 100_000;
  }

  async claim(key: string, until: number, now: number): Promise<ClaimResult> {
    // Expired rows are never read as live (every statement compares with `now`); deleting
    // them only keeps the table small, so it runs in the background now and then.
    if (++this.#claims % PRUNE_EVERY === 0) void this.prune(now).catch(() => undefined);
    try {
      const r = await this.#pool.query(
        "INSERT INTO message_nonces (k, until) SELECT $1, $2 " +
          "WHERE (SELECT count(*) FROM (SELECT 1 FROM message_nonces WHERE until >= $3 LIMIT $4) live) < $4 " +
          "ON CONFLICT (k) DO UPDATE SET until = excluded.until WHERE message_nonces.until < $3 RETURNING k",
        [key, until, now, this.#max],
      );
      if (r.rowCount === 1) return "claimed";
      const seen = await this.#pool.query("SELECT 1 FROM message_nonces WHERE k = $1 AND until >= $2", [
        key,
        now,
      ]);
      return seen.rowCount === 1 ? "replayed" : "full";
    } catch (err) {
      throw storeError("message nonce", err);
    }
  }

  async seen(key: string, now: number): Promise<boolean> {
    try {
      const r = await this.#pool.query("SELECT 1 FROM message_nonces WHERE k = $1 AND until >= $2", [
        key,
        now,
      ]);
      return r.rowCount === 1;
    } catch (err) {
      throw storeError("message nonce", err);
    }
  }

  /** Deletes expired nonces; returns how many. */
  async prune(now: number): Promise<number> {
    try {
      return (await this.#pool.query("DELETE FROM message_nonces WHERE until < $1", [now])).rowCount ?? 0;
    } catch (err) {
      throw storeError("message nonce", err);
    }
  }
}
