// The console's browser approval keys shared by every replica (issue 37): the public half of
// each key an approver registered from a browser on any replica, and its revocation, in the
// table `console_keys` (migration 10). Never a private key: those stay in the browser. A
// registration or a revocation NOTIFYs `warden_console_keys` at COMMIT; every replica's
// console reloads the rows into its approval keyring on the notification and on a poll (the
// catch-up when notifications are lost), so a verdict or a lift signed via one replica's
// console verifies on every replica, and a revoked key stops verifying on every replica.
// The caller validates a key (an Ed25519 point, its id) before it is stored here.
import type pg from "pg";
import { storeError } from "./connect.js";

export const CONSOLE_KEY_CHANNEL = "warden_console_keys";

export interface ConsoleKeyRow {
  approverId: string;
  keyId: string;
  /** The raw Ed25519 public key, base64url. */
  x: string;
  registeredAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

export type ConsoleKeyInsert = { kind: "added" } | { kind: "known"; row: ConsoleKeyRow } | { kind: "full" };

interface Raw {
  approver_id: string;
  key_id: string;
  x: string;
  registered_at: string;
  revoked_at: string | null;
  revoked_by: string | null;
}

const COLUMNS = "approver_id, key_id, x, registered_at, revoked_at, revoked_by";
const rowOf = (r: Raw): ConsoleKeyRow => ({
  approverId: r.approver_id,
  keyId: r.key_id,
  x: r.x,
  registeredAt: r.registered_at,
  revokedAt: r.revoked_at,
  revokedBy: r.revoked_by,
});

export class PgConsoleKeys {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Every row (registered and revoked), at most `limit`. */
  async list(limit: number): Promise<ConsoleKeyRow[]> {
    try {
      const r = await this.#pool.query<Raw>(
        `SELECT ${COLUMNS} FROM console_keys ORDER BY registered_at, key_id LIMIT $1`,
        [limit],
      );
      return r.rows.map(rowOf);
    } catch (err) {
      throw storeError("console keys", err);
    }
  }

  /**
   * Registers a key unless the approver already holds `maxPerApprover` live keys or the table
   * `maxTotal` rows; a key already stored (live or revoked) is returned as it is.
   */
  async add(
    k: Pick<ConsoleKeyRow, "approverId" | "keyId" | "x" | "registeredAt">,
    maxPerApprover: number,
    maxTotal: number,
  ): Promise<ConsoleKeyInsert> {
    try {
      const ins = await this.#pool.query(
        "WITH ins AS (INSERT INTO console_keys (approver_id, key_id, x, registered_at) " +
          "SELECT $1, $2, $3, $4 WHERE " +
          "(SELECT count(*) FROM console_keys WHERE approver_id = $1 AND revoked_at IS NULL) < $5 " +
          "AND (SELECT count(*) FROM console_keys) < $6 " +
          "ON CONFLICT (approver_id, key_id) DO NOTHING RETURNING key_id) " +
          `SELECT pg_notify('${CONSOLE_KEY_CHANNEL}', key_id) FROM ins`,
        [k.approverId, k.keyId, k.x, k.registeredAt, maxPerApprover, maxTotal],
      );
      if (ins.rowCount === 1) return { kind: "added" };
      const known = await this.#pool.query<Raw>(
        `SELECT ${COLUMNS} FROM console_keys WHERE approver_id = $1 AND key_id = $2`,
        [k.approverId, k.keyId],
      );
      const row = known.rows[0];
      return row === undefined ? { kind: "full" } : { kind: "known", row: rowOf(row) };
    } catch (err) {
      throw storeError("console keys", err);
    }
  }

  /** Revokes an approver's live key; false when there is none. */
  async revoke(approverId: string, keyId: string, by: string, at: string): Promise<boolean> {
    try {
      const r = await this.#pool.query(
        "WITH rev AS (UPDATE console_keys SET revoked_at = $3, revoked_by = $4 " +
          "WHERE approver_id = $1 AND key_id = $2 AND revoked_at IS NULL RETURNING key_id) " +
          `SELECT pg_notify('${CONSOLE_KEY_CHANNEL}', key_id) FROM rev`,
        [approverId, keyId, at, by],
      );
      return r.rowCount === 1;
    } catch (err) {
      throw storeError("console keys", err);
    }
  }
}
