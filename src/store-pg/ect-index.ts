// The L3 ECT ledger's index shared by every replica (src/trust EctLedger's EctIndex port).
// The ledger's entries are journal entries (the one PostgreSQL chain); this table holds
// one row per jti: reserved by the call that validated its batch, marked `recorded` once the
// journal entries are durable. A reservation is ONE INSERT of the batch's jtis on the jti
// primary key, without ON CONFLICT: all or nothing, and no lock held across a client round
// trip (issue 36); two replicas reserving one jti at once get one row, the second's INSERT
// fails whole (unique_violation) and its batch is a duplicate. A parent counts only when recorded, so no
// replica accepts a child of an ECT whose journal entry is not durable (or never was: a
// reservation whose journal append failed stays unrecorded, its jti burnt; one whose
// replica stopped after the journal's COMMIT is found in the journal and recorded when a
// child names it). Migration 4 fills the table from the ECTs the journal already held.
import type pg from "pg";
import { type DagCheck, type DagNode, ECT_LEDGER_EVENT, type EctIndex, validateDag } from "../trust/index.js";
import { storeError } from "./connect.js";

const UNIQUE_VIOLATION = "23505";

function duplicate(jti: string): Extract<DagCheck, { ok: false }> {
  return { ok: false, code: "ERR_TRUST_ECT_DUPLICATE", jti, message: `ECT ${jti} is already recorded` };
}

/**
 * A parent reserved but not marked recorded may still be durable: its replica stopped
 * between the journal's COMMIT and the mark. The journal is the truth: such a parent found
 * there is marked recorded now (and counts); one that is not there stays no parent.
 */
async function recoverParents(
  c: pg.Pool,
  nodes: readonly DagNode[],
  seen: Map<string, { recorded: boolean }>,
): Promise<void> {
  const pending = [...new Set(nodes.flatMap((n) => n.par))].filter((p) => seen.get(p)?.recorded === false);
  if (pending.length === 0) return;
  const found = await c.query<{ jti: string }>(
    "UPDATE ect_ledger SET recorded = true WHERE jti = ANY($1::text[]) AND jti IN (" +
      "SELECT body::jsonb ->> 'jti' FROM journal_entries WHERE type = $2 AND body::jsonb ->> 'jti' = ANY($1::text[])" +
      ") RETURNING jti",
    [pending, ECT_LEDGER_EVENT],
  );
  for (const r of found.rows) {
    const row = seen.get(r.jti);
    if (row !== undefined) row.recorded = true;
  }
}

export class PgEctIndex implements EctIndex {
  readonly #pool: pg.Pool;
  readonly #node: string;

  constructor(pool: pg.Pool, node: string) {
    this.#pool = pool;
    this.#node = node;
  }

  async has(jti: string): Promise<boolean> {
    try {
      const r = await this.#pool.query("SELECT 1 FROM ect_ledger WHERE jti = $1 AND recorded", [jti]);
      return r.rowCount === 1;
    } catch (err) {
      throw storeError("ECT ledger", err);
    }
  }

  async reserve(nodes: readonly DagNode[]): Promise<DagCheck> {
    try {
      return await this.#reserve(this.#pool, nodes);
    } catch (err) {
      // Another replica reserved one of the batch's jtis first: the whole INSERT was undone.
      if ((err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION) {
        const taken = /\(jti\)=\((.*)\) already exists/.exec(
          String((err as { detail?: unknown }).detail ?? ""),
        );
        return duplicate(taken?.[1] ?? nodes[0]?.jti ?? "");
      }
      throw storeError("ECT ledger", err);
    }
  }

  async #reserve(c: pg.Pool, nodes: readonly DagNode[]): Promise<DagCheck> {
    const names = [...new Set(nodes.flatMap((n) => [n.jti, ...n.par]))];
    const rows = await c.query<{ jti: string; iat: string; recorded: boolean }>(
      "SELECT jti, iat, recorded FROM ect_ledger WHERE jti = ANY($1::text[])",
      [names],
    );
    const seen = new Map(rows.rows.map((r) => [r.jti, r]));
    // A reserved jti is taken even before it is recorded; only recorded ones are parents.
    const taken = nodes.find((n) => seen.has(n.jti));
    if (taken !== undefined) return duplicate(taken.jti);
    await recoverParents(c, nodes, seen);
    const check = validateDag(nodes, (jti) => {
      const row = seen.get(jti);
      return row?.recorded === true ? Number(row.iat) : undefined;
    });
    if (!check.ok) return check;
    // One statement, all or nothing: a jti another replica holds fails it (unique_violation).
    await c.query(
      "INSERT INTO ect_ledger (jti, iat, node) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])",
      [check.order.map((n) => n.jti), check.order.map((n) => n.iat), check.order.map(() => this.#node)],
    );
    return check;
  }

  async recorded(jtis: readonly string[]): Promise<void> {
    try {
      await this.#pool.query("UPDATE ect_ledger SET recorded = true WHERE jti = ANY($1::text[])", [
        [...jtis],
      ]);
    } catch (err) {
      throw storeError("ECT ledger", err);
    }
  }
}
