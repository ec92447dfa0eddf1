// Issue 36, "no row lock held across client round trips", for the stores that still spanned
// several round trips: trust rows, AgentPin first pins and ECT jti reservations (and the shared
// approval and deferred queues, whose rows were already single statements: kept so by these tests). Two replicas on one real PostgreSQL,
// simulated by their own pools; replica A reaches the database through the pause proxy
// (pause-proxy.ts), which freezes A's connection right after a statement of the operation went
// out — A paused in the middle of it, as by SIGSTOP. Replica B's operations on the same row and
// principal must be served meanwhile: B's pool has the store's `lock_timeout` (here 2 s), so a
// lock A held would fail B's statement with a lock timeout instead.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPinJwk } from "../../src/identity/index.js";
import { migrate, PgEctIndex, PgKeyPins, PgTrustStore } from "../../src/store-pg/index.js";
import { VerdictRows } from "../../src/store-pg/verdict-rows.js";
import type { TrustRow } from "../../src/trust/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";
import { type PauseProxy, startPauseProxy } from "./pause-proxy.js";

const T0 = Date.parse("2026-06-01T00:00:00Z");
let server: PostgresServer;
let proxy: PauseProxy;
let viaProxy: pg.Pool;
let direct: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  const admin = poolOf(url, 1);
  await migrate(admin);
  await admin.end();
  proxy = await startPauseProxy(url);
  viaProxy = new pg.Pool({ connectionString: proxy.url, max: 4, application_name: "replica-a" });
  viaProxy.on("error", () => undefined);
  direct = new pg.Pool({ connectionString: url, max: 4, lock_timeout: 2000, statement_timeout: 10_000 });
  direct.on("error", () => undefined);
}, 120_000);

afterAll(async () => {
  proxy?.thaw();
  await viaProxy?.end().catch(() => undefined);
  await direct?.end().catch(() => undefined);
  await proxy?.close();
  await server?.stop();
});

const row = (subject: string, interactions: number): TrustRow => ({
  truster: "deployment",
  subject,
  score: 0.5,
  interactions,
  lastInteraction: null,
  anchor: T0,
  status: "active",
  quarantineUntil: null,
  quarantineCount: 0,
  gainWindowStart: null,
  gainInWindow: 0,
  propagatedHops: null,
});

/**
 * Until the server has run A's frozen statement (its backend no longer `active` on a statement
 * matching `pattern`): the freeze holds the answer, not the execution, which may lag behind it.
 */
async function ranOnA(pattern: RegExp): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const r = await direct.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'replica-a' AND query ~ $1 AND state <> 'active'",
      [pattern.source],
    );
    if ((r.rowCount ?? 0) > 0) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`A's statement ${pattern} never ran`);
}

const bump = (subject: string) => (r: TrustRow | undefined) => ({
  row: row(subject, (r?.interactions ?? 0) + 1),
  result: undefined,
});

describe("a replica paused mid-operation holds no lock the others wait on", () => {
  it("trust update: while A is paused inside an update of agent-p's row, B's updates of the same row are applied; A's, once resumed, is not lost", async () => {
    const a = new PgTrustStore(viaProxy);
    const b = new PgTrustStore(direct);
    await b.update("deployment", "agent-p", bump("agent-p"));
    // A's update goes out; its connection freezes right after (the row read, or the lock taken).
    const sent = /pg_advisory_xact_lock|FROM trust_rows WHERE truster/;
    const frozen = proxy.freezeOn(sent, "after");
    const onA = a.update("deployment", "agent-p", bump("agent-p"));
    await frozen;
    await ranOnA(sent);
    try {
      for (let i = 0; i < 3; i++) await b.update("deployment", "agent-p", bump("agent-p"));
      expect((await b.get("deployment", "agent-p"))?.interactions).toBe(4);
    } finally {
      proxy.thaw();
    }
    await onA;
    // Nothing lost: A re-read the row B had changed and applied its event on top.
    expect((await b.get("deployment", "agent-p"))?.interactions).toBe(5);
  }, 60_000);

  for (const table of ["approvals", "deferred"] as const) {
    it(`${table}: while A is paused answering one of agent-p's items, B stores, lists and answers agent-p's others`, async () => {
      const rows = (pool: pg.Pool, node: string) =>
        new VerdictRows<unknown>(pool, {
          table,
          column: table === "approvals" ? "request" : "item",
          channel: `test_${table}`,
          what: table,
          node,
          parse: (t) => JSON.parse(t),
          apply: () => undefined,
          pollMs: 3_600_000,
          clock: Date.now,
        });
      const a = rows(viaProxy, "a");
      const b = rows(direct, "b");
      const held = (id: string) => ({ id, decisionId: `d-${id}`, runId: "run-p", principalId: "agent-p" });
      await b.stored(held(`${table}-1`), { n: 1 }, 60_000);
      await b.stored(held(`${table}-2`), { n: 2 }, 60_000);
      const sent = new RegExp(`UPDATE ${table} SET verdict`);
      const frozen = proxy.freezeOn(sent, "after");
      const onA = a.claim(`${table}-1`, { outcome: "deny" }, "approver-a");
      await frozen;
      await ranOnA(sent);
      try {
        await b.stored(held(`${table}-3`), { n: 3 }, 60_000);
        expect(await b.claim(`${table}-2`, { outcome: "allow" }, "approver-b")).toBe(true);
        expect((await b.list(new Map())).length).toBeGreaterThanOrEqual(1);
        // The item A answered has exactly one verdict: B's late answer to it loses.
        expect(await b.claim(`${table}-1`, { outcome: "allow" }, "approver-b")).toBe(false);
      } finally {
        proxy.thaw();
      }
      expect(await onA).toBe(true);
      await a.close();
      await b.close();
    }, 60_000);
  }

  it("AgentPin first pin: while A is paused right after pinning a domain, B's use of the same domain and key is answered (pinned), not held", async () => {
    const jwk = {
      kty: "EC",
      crv: "P-256",
      x: "x-pause",
      y: "y-pause",
      kid: "k-pause",
    } as unknown as AgentPinJwk;
    const at = new Date(T0).toISOString();
    const sent = /agentpin_domains|warden_pin_use/;
    const frozen = proxy.freezeOn(sent, "after");
    const onA = new PgKeyPins(viaProxy).use("pause.example", jwk, at);
    await frozen;
    await ranOnA(sent);
    try {
      expect(await new PgKeyPins(direct).use("pause.example", jwk, at)).toEqual({ ok: true, event: null });
    } finally {
      proxy.thaw();
    }
    expect((await onA).ok).toBe(true);
  }, 60_000);

  it("ECT jti reservation: while A is paused right after reserving a jti, B's reservation of the same jti is refused as a duplicate at once, not held", async () => {
    const node = { jti: "jti-pause", iat: T0 / 1000, par: [] };
    const sent = /INSERT INTO ect_ledger/;
    const frozen = proxy.freezeOn(sent, "after");
    const onA = new PgEctIndex(viaProxy, "a").reserve([node]);
    await frozen;
    await ranOnA(sent);
    try {
      expect(await new PgEctIndex(direct, "b").reserve([node])).toMatchObject({
        ok: false,
        code: "ERR_TRUST_ECT_DUPLICATE",
        jti: "jti-pause",
      });
    } finally {
      proxy.thaw();
    }
    expect((await onA).ok).toBe(true);
  }, 60_000);
});
