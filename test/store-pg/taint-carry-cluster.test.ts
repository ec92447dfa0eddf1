// Taint at the principal across replicas (issue 37) on one real PostgreSQL: a run on
// replica A reads a web page; a fresh run of the same principal on replica B — no parent
// named, another process's memory — starts web-tainted, and its facts name A's run. The
// SQLite store keeps the same across a restart on one node.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessionStore, type PrincipalTaintStore, type Session } from "../../src/context/index.js";
import { GateRequest } from "../../src/contracts/index.js";
import { SqlitePrincipalTaintStore } from "../../src/runtime/taint-store.js";
import { migrate, PgInboxStore, PgPrincipalTaintStore } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;
const pools: { end(): Promise<unknown> }[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const p = poolOf(url, 2);
  await migrate(p);
  await p.end();
}, 120_000);

afterAll(async () => {
  for (const p of pools) await p.end().catch(() => undefined);
  await server?.stop();
});

const req = (s: Session, toolClass: string, action: string) =>
  GateRequest.parse({ principalId: s.principalId, runId: s.runId, toolClass, action, parameters: {} });

/** A call that reads a web page: its output carries web taint into the run. */
function readWebPage(s: Session): void {
  const p = s.prepare(req(s, "http", "get"));
  s.recordDecision(p, "allow", []);
  s.recordResult(p, { data: "page", taintLabels: [{ source: "web", origin: "evil.example" }] });
}

function store(taintStore: PrincipalTaintStore) {
  return createSessionStore({}, { taintStore });
}

describe("taint at the principal across replicas and restarts", () => {
  it("a fresh run on replica B carries the web taint of the principal's run on replica A", async () => {
    const a = poolOf(url, 2);
    const b = poolOf(url, 2);
    pools.push(a, b);
    const onA = store(new PgPrincipalTaintStore(a));
    const onB = store(new PgPrincipalTaintStore(b));
    const tainted = await onA.startRun("alice");
    readWebPage(tainted);
    await onA.carry?.flush();
    const fresh = await onB.startRun("alice");
    const p = fresh.prepare(req(fresh, "http", "post"));
    expect(p.effectiveTaint.map((l) => l.source)).toContain("web");
    expect(p.facts.inheritedFrom).toEqual([tainted.runId]);
    // Another principal on B is untouched.
    const bob = await onB.startRun("bob");
    expect(bob.prepare(req(bob, "http", "post")).effectiveTaint).toEqual([]);
  });

  it("the SQLite store keeps the carry across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-carry-"));
    try {
      const path = join(dir, "principals.db");
      const first = SqlitePrincipalTaintStore.open(path);
      const before = store(first);
      readWebPage(await before.startRun("alice"));
      await before.carry?.flush();
      first.close();
      const second = SqlitePrincipalTaintStore.open(path);
      const after = store(second);
      const fresh = await after.startRun("alice");
      expect(fresh.prepare(req(fresh, "http", "post")).effectiveTaint.map((l) => l.source)).toContain("web");
      second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a message waiting in one replica's inbox store is read by another, and deleted once", async () => {
    const aPool = poolOf(url, 1);
    const bPool = poolOf(url, 1);
    pools.push(aPool, bPool);
    const a = new PgInboxStore(aPool);
    const b = new PgInboxStore(bPool);
    const id = "0b6f8a4e-5d1c-4c2e-9a7b-3f1e2d4c5b6a";
    const item = {
      recipient: "executor",
      message: { header: { message_id: id } },
      context: {},
      seq: 7,
    } as never;
    // A row that does not parse is a coded fault, never an empty inbox.
    await a.add(item);
    await expect(b.load()).rejects.toMatchObject({ code: "ERR_RUNTIME_STATE_CORRUPT" });
    await b.remove("executor", id);
    expect(await b.load()).toEqual([]);
  });
});
