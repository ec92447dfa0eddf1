// APAE revocation floors shared by every replica (issue 36, "protective state durable before
// the answer"): a fall below the revocation floor voids the subject's capability tokens issued
// up to then. Each replica keeps its floors in memory (src/identity RevocationFloors), and the
// replica that decided the revocation also writes it here, in the same trust update the
// sidecar waits for before the answer that caused it leaves; every replica's token check
// reads the subject's floor from here (one indexed read), so a call on another replica right
// after that answer is refused, without waiting for the trust row's notification. A floor
// only rises (GREATEST): replicas writing at once, or late, never lower it.
import type pg from "pg";
import { storeError } from "./connect.js";

export class PgRevocationFloors {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Voids what `principalId` was granted at or before `at` (ms), for every replica. */
  async save(principalId: string, at: number): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO principal_revocations (principal_id, at) VALUES ($1, $2) " +
          "ON CONFLICT (principal_id) DO UPDATE SET at = GREATEST(principal_revocations.at, excluded.at)",
        [principalId, Math.floor(at)],
      );
    } catch (err) {
      throw storeError("revocation floors", err);
    }
  }

  /** The principal's floor (ms), undefined when none was ever written. */
  async floorOf(principalId: string): Promise<number | undefined> {
    try {
      const r = await this.#pool.query<{ at: string }>(
        "SELECT at FROM principal_revocations WHERE principal_id = $1",
        [principalId],
      );
      const at = r.rows[0]?.at;
      return at === undefined ? undefined : Number(at);
    } catch (err) {
      throw storeError("revocation floors", err);
    }
  }
}
