// The runtime's side of runs across replicas (src/runtime shared-runs.ts) on one real
// PostgreSQL, two replicas simulated by their own pools, session stores and registries
// under one manual clock: a stale owner never serves a run adopted elsewhere, and a
// replica that lost the database stops serving its runs (fail closed).
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionStore, type SessionStore } from "../../src/context/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { defaultEventTypes, type Journal, openJournal } from "../../src/journal/index.js";
import { registerRuntimeEventTypes } from "../../src/runtime/index.js";
import { type SharedRuns, sharedRuns } from "../../src/runtime/shared-runs.js";
import { migrate, PgJournalStore, PgRunRegistry } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const open: { end(): Promise<unknown> }[] = [];
let now = Date.parse("2026-06-01T00:00:00Z");
const clock = () => now;
/** Every replica signs with the same journal key (as in deploy/: one Secret). */
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
  pool: pg.Pool;
  sessions: SessionStore;
  runs: SharedRuns;
  journal: Journal;
}

async function replica(node: string): Promise<Replica> {
  const pool = poolOf(url, 4);
  open.push(pool);
  const journal = await openJournal({
    store: new PgJournalStore(pool, { node }),
    signer,
  });
  const registry = new PgRunRegistry(pool, { node, leaseMs: 1000, marginMs: 200, clock });
  const sessions = createSessionStore({}, { clock });
  const runs = sharedRuns({ registry, sessions, journal, fleet: undefined, clock });
  // The periodic renewal would follow the manual clock: these tests renew by hand.
  runs.stop();
  return { pool, sessions, runs, journal };
}

describe("runs across replicas, the runtime's side", () => {
  it("a stale owner never serves a run another replica adopted: it answers ERR_RUN_ELSEWHERE", async () => {
    const a = await replica("ra");
    const b = await replica("rb");
    const run = await a.runs.start("alice", undefined);
    await a.runs.ensure(run.runId, "alice");
    await expect(b.runs.ensure(run.runId, "alice")).rejects.toMatchObject({
      code: "ERR_RUN_ELSEWHERE",
      details: { node: "ra" },
    });
    now += 1001; // a's lease expired (it did not renew)
    await b.runs.ensure(run.runId, "alice");
    expect(b.sessions.run(run.runId, "alice").runId).toBe(run.runId);
    // a still holds the session in memory, but must not serve it any more.
    expect(a.sessions.get(run.runId)).toBeDefined();
    await expect(a.runs.ensure(run.runId, "alice")).rejects.toMatchObject({
      code: "ERR_RUN_ELSEWHERE",
      details: { node: "rb" },
    });
    expect(a.sessions.get(run.runId)).toBeUndefined();
    await a.journal.close();
    await b.journal.close();
  });

  it("a late renewal is made on demand; a replica that lost the database refuses its runs, coded 503", async () => {
    const a = await replica("rc");
    const run = await a.runs.start("alice", undefined);
    now += 900; // past leaseMs - marginMs: the periodic renewal is late
    await a.runs.ensure(run.runId, "alice");
    const row = await a.pool.query("SELECT lease_until FROM runs WHERE run_id = $1", [run.runId]);
    expect(Number(row.rows[0].lease_until)).toBe(now + 1000);
    await a.journal.close();
    await a.pool.end();
    now += 900;
    await expect(a.runs.ensure(run.runId, "alice")).rejects.toMatchObject({
      code: "ERR_RUNTIME_STORE_UNAVAILABLE",
    });
  });

  it("a run the registry did not take is ended at once, never served unregistered", async () => {
    const a = await replica("rd");
    await a.journal.close();
    await a.pool.end();
    await expect(a.runs.start("alice", undefined)).rejects.toMatchObject({
      code: "ERR_RUNTIME_STORE_UNAVAILABLE",
    });
    expect(a.sessions.openRuns).toBe(0);
  });
});
