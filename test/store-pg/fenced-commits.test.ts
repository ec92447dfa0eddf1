// Issue 36, "a paused owner breaks the run budget", on one real PostgreSQL: two replicas
// simulated by their own pools, registries and journals under one manual clock. A replica
// that lost a run's lease while it was paused (its decision sealed, not yet committed) wakes
// up after another replica adopted the run: its commit is fenced by the run's ownership
// epoch, so nothing is journaled for the run on its chain (and so nothing executes), the
// adopter's admitted count stands, and its other runs keep journaling.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionStore, type SessionStore } from "../../src/context/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { defaultEventTypes, type Journal, openJournal, verifyJournal } from "../../src/journal/index.js";
import { RUN_ADOPTED_EVENT, registerRuntimeEventTypes } from "../../src/runtime/index.js";
import { type SharedRuns, sharedRuns } from "../../src/runtime/shared-runs.js";
import { migrate, PgJournalStore, PgRunRegistry } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { keyringOf } from "../journal/helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const open: { end(): Promise<unknown> }[] = [];
let now = Date.parse("2026-06-01T00:00:00Z");
const clock = () => now;
const signer = generateKeyPair("ed25519");

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const p = poolOf(url, 2);
  await migrate(p);
  await p.end();
  registerRuntimeEventTypes(defaultEventTypes);
}, 120_000);

afterAll(async () => {
  for (const o of open) await o.end().catch(() => undefined);
  await server?.stop();
});

interface Replica {
  node: string;
  pool: pg.Pool;
  sessions: SessionStore;
  registry: PgRunRegistry;
  runs: SharedRuns;
  journal: Journal;
}

async function replica(node: string, global = false): Promise<Replica> {
  const pool = poolOf(url, 4);
  open.push(pool);
  const registry = new PgRunRegistry(pool, { node, leaseMs: 1000, marginMs: 200, clock });
  const store = new PgJournalStore(pool, {
    node,
    chain: global ? "" : node,
    fence: (ids) => registry.fence(ids),
    onFenced: (ids) => registry.lost(ids),
  });
  const journal = await openJournal({ store, signer });
  const sessions = createSessionStore({}, { clock });
  const runs = sharedRuns({ registry, sessions, journal, fleet: undefined, clock });
  runs.stop(); // renewals follow the manual clock: by hand
  return { node, pool, sessions, registry, runs, journal };
}

/** A decision-like entry of the run (any run-scoped entry is fenced alike). */
function entryOf(r: Replica, runId: string) {
  return {
    type: RUN_ADOPTED_EVENT,
    run_id: runId,
    body: {
      run_id: runId,
      principal_id: "alice",
      from_node: "x",
      node: r.node,
      admitted: 0,
      denied: 0,
      taint_labels: 0,
    },
  };
}

async function entriesOn(pool: pg.Pool, chain: string, runId: string): Promise<number> {
  const r = await pool.query(
    "SELECT count(*)::int AS n FROM journal_entries WHERE chain = $1 AND run_id = $2",
    [chain, runId],
  );
  return r.rows[0].n as number;
}

describe("fenced commits: a paused owner cannot journal (or execute) for a run it lost", () => {
  for (const global of [false, true]) {
    it(`a paused owner's commit after another replica adopted the run is refused ERR_JOURNAL_FENCED (${global ? "global chain" : "a chain per replica"})`, async () => {
      const a = await replica(global ? "ga" : "fa", global);
      const b = await replica(global ? "gb" : "fb", global);
      const run = await a.runs.start("alice", undefined);
      const other = await a.runs.start("alice", undefined);
      await a.runs.ensure(run.runId, "alice");
      await a.journal.append(entryOf(a, run.runId)); // served normally while owned
      // a pauses (SIGSTOP, GC, frozen VM): its lease runs out, b adopts the run.
      now += 1001;
      await b.runs.ensure(run.runId, "alice");
      const before = await entriesOn(a.pool, global ? "" : a.node, run.runId);
      // a wakes up with the decision it had sealed before the pause: the commit is fenced.
      await expect(a.journal.append(entryOf(a, run.runId))).rejects.toMatchObject({
        code: "ERR_JOURNAL_FENCED",
      });
      expect(await entriesOn(a.pool, global ? "" : a.node, run.runId)).toBe(before);
      // ...and stays fenced: the run is lost for good on a.
      await expect(a.journal.append(entryOf(a, run.runId))).rejects.toMatchObject({
        code: "ERR_JOURNAL_FENCED",
      });
      // b, the new owner, journals for it; a still journals for the run it kept.
      await b.journal.append(entryOf(b, run.runId));
      await a.registry.renew([other.runId]);
      await a.journal.append(entryOf(a, other.runId));
      const rows = await a.pool.query("SELECT node, epoch FROM runs WHERE run_id = $1", [run.runId]);
      expect(rows.rows[0]).toMatchObject({ node: b.node, epoch: 2 });
      await a.journal.close();
      await b.journal.close();
    });
  }

  it("a fenced batch fails only the runs this replica lost: entries of a run it still owns, committed in the same batch, are journaled", async () => {
    const a = await replica("sa");
    const b = await replica("sb");
    const lost = await a.runs.start("alice", undefined);
    const kept = await a.runs.start("alice", undefined);
    now += 1001;
    await b.runs.ensure(lost.runId, "alice"); // b adopts one run while a was paused
    await a.registry.renew([kept.runId]); // a still holds the other
    // One group commit: the appends of both runs, issued in the same turn, share a batch.
    const [onLost, onKept, global] = await Promise.allSettled([
      a.journal.append(entryOf(a, lost.runId)),
      a.journal.append(entryOf(a, kept.runId)),
      a.journal.append({ type: RUN_ADOPTED_EVENT, run_id: null, body: entryOf(a, kept.runId).body }),
    ]);
    expect(onLost.status).toBe("rejected");
    expect((onLost as PromiseRejectedResult).reason).toMatchObject({ code: "ERR_JOURNAL_FENCED" });
    expect(onKept.status, String((onKept as PromiseRejectedResult).reason)).toBe("fulfilled");
    expect(global.status).toBe("fulfilled");
    expect(await entriesOn(a.pool, "sa", lost.runId)).toBe(0);
    expect(await entriesOn(a.pool, "sa", kept.runId)).toBe(1);
    // The chain a wrote is whole (the retried entries were chained again).
    expect((await verifyJournal(a.journal.store, keyringOf(signer))).ok).toBe(true);
    await a.journal.close();
    await b.journal.close();
  });

  it("an adoption waits for a fenced commit in flight and counts it (no lock held across round trips)", async () => {
    const a = await replica("wa");
    const b = await replica("wb");
    const run = await a.runs.start("alice", undefined);
    now += 1001;
    // The commit and the adoption race: whichever order PostgreSQL gives them, either the
    // entry is journaled and the adopter counts it, or it is refused and never journaled.
    const [appended] = await Promise.allSettled([
      a.journal.append(entryOf(a, run.runId)),
      b.runs.ensure(run.runId, "alice"),
    ]);
    const onA = await entriesOn(a.pool, "wa", run.runId);
    const adopted = await b.pool.query(
      "SELECT body FROM journal_entries WHERE chain = 'wb' AND run_id = $1 AND type = $2",
      [run.runId, RUN_ADOPTED_EVENT],
    );
    expect(adopted.rows).toHaveLength(1);
    if (appended.status === "fulfilled") expect(onA).toBe(1);
    else {
      expect(appended.reason).toMatchObject({ code: "ERR_JOURNAL_FENCED" });
      expect(onA).toBe(0);
    }
    await a.journal.close();
    await b.journal.close();
  });
});
