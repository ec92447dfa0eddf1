// Taint carried at the principal, shared by every replica (issue 37): a run started on any
// replica carries the taint of the principal's runs active within the window, wherever
// they ran. One row per (principal, taint source); an upsert never moves `at` backwards,
// so two replicas refreshing the same source keep the later activity.
import type pg from "pg";
import { type CarriedTaint, type PrincipalTaintStore, parseCarried } from "../context/index.js";
import { canonicalJson, RuntimeError } from "../contracts/index.js";
import { storeError } from "./connect.js";

export class PgPrincipalTaintStore implements PrincipalTaintStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async load(principalId: string, since: number): Promise<CarriedTaint[]> {
    try {
      const r = await this.#pool.query<{ run_id: string; label: string; at: string }>(
        "SELECT run_id, label, at FROM principal_taint WHERE principal_id = $1 AND at >= $2",
        [principalId, Math.floor(since)],
      );
      return r.rows.map((row) => parseCarried(principalId, row));
    } catch (err) {
      if (err instanceof RuntimeError) throw err;
      throw storeError("carried taint", err);
    }
  }

  async save(principalId: string, entries: readonly CarriedTaint[]): Promise<void> {
    if (entries.length === 0) return;
    const values: unknown[] = [];
    const rows = entries.map((e, i) => {
      values.push(principalId, e.label.source, e.runId, canonicalJson(e.label), Math.floor(e.at));
      const b = i * 5;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
    });
    try {
      await this.#pool.query(
        `INSERT INTO principal_taint (principal_id, source, run_id, label, at) VALUES ${rows.join(", ")} ` +
          "ON CONFLICT (principal_id, source) DO UPDATE SET run_id = excluded.run_id, label = excluded.label, " +
          "at = excluded.at WHERE excluded.at >= principal_taint.at",
        values,
      );
    } catch (err) {
      throw storeError("carried taint", err);
    }
  }
}
