// The shared stores on one real PostgreSQL, each replica simulated by its own pool (its
// own connections, as a separate sidecar has): written as the attacks on a fleet.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Principals, type QuarantineTrigger } from "../../src/context/index.js";
import { hasErrorCode } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { CapabilityService } from "../../src/identity/capabilities/index.js";
import {
  migrate,
  PgBudgetLedger,
  PgNonceStore,
  PgPrincipalStateStore,
  PgTrustStore,
} from "../../src/store-pg/index.js";
import type { TrustRow } from "../../src/trust/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
const nodes: pg.Pool[] = [];
const T0 = 1_800_000_000_000;

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  for (let i = 0; i < 3; i++) nodes.push(poolOf(url, 4));
  await migrate(nodes[0]!);
}, 120_000);

afterAll(async () => {
  for (const p of nodes) await p.end();
  await server?.stop();
});

const each = <T>(make: (pool: pg.Pool) => T): T[] => nodes.map(make);

function trigger(reason: string): QuarantineTrigger {
  const counters = { proposed: 0, allowed: 0, denied: 3, deferred: 0, executed: 0, stepUps: 0, modified: 0 };
  return { type: "denial_threshold", reason, counters, matchedEvents: [], at: new Date(T0).toISOString() };
}

describe("budgets and reservations across replicas", () => {
  it("a budget of 10 hammered by 60 concurrent calls through three nodes admits exactly 10", async () => {
    const ledgers = each((p) => new PgBudgetLedger(p));
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        ledgers[i % 3]!.reserve({ runId: "run-budget", principalId: "agent-a", now: T0, toolCallLimit: 10 }),
      ),
    );
    const admitted = outcomes.filter((o) => o.ok);
    expect(admitted).toHaveLength(10);
    expect(
      outcomes.filter((o) => !o.ok).every((o) => !o.ok && o.reasons.includes("budget_tool_calls_exhausted")),
    ).toBe(true);
    for (const [i, o] of admitted.entries()) if (o.ok) await ledgers[i % 3]!.commit(o.reservation, T0 + 1);
    expect(await ledgers[2]!.usage("run-budget", T0 + 2)).toEqual({ used: 10, held: 0 });
  });

  it("a reservation settled on two nodes at once (commit on A, release on B) moves the counters once", async () => {
    const [a, b] = each((p) => new PgBudgetLedger(p));
    const r = await a!.reserve({ runId: "run-settle", principalId: "agent-a", now: T0, toolCallLimit: 5 });
    if (!r.ok) throw new Error("refused");
    const [x, y] = await Promise.all([a!.commit(r.reservation, T0 + 1), b!.release(r.reservation, T0 + 1)]);
    expect([x, y].sort()).toEqual(
      x === "committed" || y === "committed" ? ["committed", "committed"] : ["released", "released"],
    );
    const u = await b!.usage("run-settle");
    expect(u.held).toBe(0);
    expect(u.used).toBe(x === "committed" ? 1 : 0);
  });

  it("a rate limit of 5 per minute holds across three nodes; an expired reservation gives its unit back", async () => {
    const ledgers = each((p) => new PgBudgetLedger(p, { ttlMs: 1000 }));
    const outcomes = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        ledgers[i % 3]!.reserve({
          runId: `run-rate-${i}`,
          principalId: "agent-rate",
          now: T0,
          ratePerMinute: 5,
        }),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(5);
    expect(await ledgers[1]!.rateUsed("agent-rate", T0)).toBe(5);
    const r = await ledgers[0]!.reserve({
      runId: "run-ttl",
      principalId: "agent-b",
      now: T0,
      toolCallLimit: 1,
    });
    expect(r.ok).toBe(true);
    const again = await ledgers[1]!.reserve({
      runId: "run-ttl",
      principalId: "agent-b",
      now: T0 + 10,
      toolCallLimit: 1,
    });
    expect(again.ok).toBe(false);
    const later = await ledgers[2]!.reserve({
      runId: "run-ttl",
      principalId: "agent-b",
      now: T0 + 2000,
      toolCallLimit: 1,
    });
    expect(later.ok).toBe(true);
    if (r.ok) expect(await ledgers[0]!.commit(r.reservation, T0 + 2001)).toBe("expired");
  });
});

describe("reservations that wait on a human", () => {
  it("a renewed reservation outlives its first TTL on another node; a swept one gives its unit back", async () => {
    const [a, b] = each((p) => new PgBudgetLedger(p, { ttlMs: 1000 }));
    const r = await a!.reserve({ runId: "run-renew", principalId: "agent-h", now: T0, toolCallLimit: 2 });
    if (!r.ok) throw new Error("refused");
    const renewed = await b!.renew(r.reservation, T0 + 900);
    expect(renewed?.expiresAt).toBe(T0 + 1900);
    expect(await a!.usage("run-renew", T0 + 1500)).toEqual({ used: 0, held: 1 });
    expect(await b!.commit(r.reservation, T0 + 1600)).toBe("committed");
    const lost = await a!.reserve({
      runId: "run-renew",
      principalId: "agent-h",
      now: T0 + 2000,
      toolCallLimit: 2,
    });
    expect(lost.ok).toBe(true);
    // The sweep covers every run of the database (other tests' expired holds too).
    expect(await b!.sweep(T0 + 3500)).toBeGreaterThanOrEqual(1);
    expect(await a!.usage("run-renew")).toEqual({ used: 1, held: 0 });
    if (lost.ok) {
      expect(await a!.renew(lost.reservation, T0 + 3600)).toBeUndefined();
      expect(await b!.release(lost.reservation, T0 + 3600)).toBe("expired");
    }
  });
});

describe("capability tokens across replicas", () => {
  it("a single-use token presented to three nodes at once is used exactly once", async () => {
    const signer = generateKeyPair("ed25519");
    const services = each(
      (p) =>
        new CapabilityService({
          signer,
          ledger: new PgBudgetLedger(p),
          runOpen: () => true,
          clock: () => T0,
        }),
    );
    const token = services[0]!.issue("run-cap", "agent-a", { scope: { toolClass: "http" }, maxUses: 1 });
    const checks = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        services[i % 3]!.check({
          token: token.token,
          runId: "run-cap",
          principalId: "agent-a",
          toolClass: "http",
          action: "get",
          parameters: {},
          now: T0 + 1,
        }),
      ),
    );
    expect(checks.filter((c) => c.ok)).toHaveLength(1);
    expect(checks.filter((c) => !c.ok && c.code === "ERR_CAPABILITY_EXHAUSTED")).toHaveLength(8);
  });
});

describe("principal state across replicas", () => {
  it("a quarantine entered on node A holds on node B, whatever B's cache had", async () => {
    const [a, b] = each((p) => new PgPrincipalStateStore(p));
    const onA = new Principals({ store: a! });
    const onB = new Principals({ store: b! });
    await onB.load("agent-q");
    expect(onB.quarantineOf("agent-q")).toBeUndefined();
    onA.quarantine("agent-q", "run-1", trigger("denials"));
    await onA.flush();
    await onB.load("agent-q");
    expect(onB.quarantineOf("agent-q")).toMatchObject({ runId: "run-1" });
  });

  it("a second node's later trigger does not overwrite the first quarantine; only a lift clears it", async () => {
    const [a, b] = each((p) => new PgPrincipalStateStore(p));
    await Promise.all([
      a!.save({ principalId: "agent-r", quarantine: { ...trigger("first"), runId: "run-a" } }),
      b!.save({ principalId: "agent-r", quarantine: { ...trigger("second"), runId: "run-b" } }),
    ]);
    const first = (await a!.load("agent-r"))?.quarantine?.runId;
    await a!.save({ principalId: "agent-r", quarantine: { ...trigger("third"), runId: "run-c" } });
    expect((await b!.load("agent-r"))?.quarantine?.runId).toBe(first);
    await b!.save({ principalId: "agent-r" });
    expect((await a!.load("agent-r"))?.quarantine).toBeUndefined();
  });

  it("a record changed in the database is a fault (ERR_RUNTIME_STATE_CORRUPT), never 'not quarantined'", async () => {
    await nodes[0]!.query(
      "INSERT INTO principal_state (principal_id, record) VALUES ('agent-x', '{\"principalId\":\"other\"}')",
    );
    const err = await new PgPrincipalStateStore(nodes[1]!).load("agent-x").catch((e: unknown) => e);
    expect(hasErrorCode(err, "ERR_RUNTIME_STATE_CORRUPT")).toBe(true);
  });
});

describe("message nonces across replicas", () => {
  it("a replayed message nonce is refused on a node that did not see the first one", async () => {
    const [a, b] = each((p) => new PgNonceStore(p));
    expect(await a!.claim("msg:agent-a:n1", T0 + 60_000, T0)).toBe("claimed");
    expect(await b!.claim("msg:agent-a:n1", T0 + 60_000, T0 + 5)).toBe("replayed");
  });

  it("a nonce claimed on one node is seen on another until it expires; seeing records nothing", async () => {
    const [a, b] = each((p) => new PgNonceStore(p));
    expect(await b!.seen("msg:agent-a:n3", T0)).toBe(false);
    expect(await a!.claim("msg:agent-a:n3", T0 + 60_000, T0)).toBe("claimed");
    expect(await b!.seen("msg:agent-a:n3", T0 + 5)).toBe(true);
    expect(await b!.seen("msg:agent-a:n3", T0 + 60_001)).toBe(false);
    expect(await b!.seen("msg:agent-a:n4", T0)).toBe(false);
    expect(await b!.claim("msg:agent-a:n4", T0 + 60_000, T0)).toBe("claimed");
  });

  it("the same nonce claimed on three nodes at once is claimed once", async () => {
    const stores = each((p) => new PgNonceStore(p));
    const r = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % 3]!.claim("msg:agent-a:n2", T0 + 60_000, T0)),
    );
    expect(r.filter((x) => x === "claimed")).toHaveLength(1);
    expect(r.filter((x) => x === "replayed")).toHaveLength(11);
  });

  it("a store full of unexpired nonces refuses (fail closed) rather than forget", async () => {
    const url = await freshDatabase(server.connectionString);
    const pool = poolOf(url, 2);
    try {
      await migrate(pool);
      const s = new PgNonceStore(pool, { max: 2 });
      expect(await s.claim("k1", T0 + 10, T0)).toBe("claimed");
      expect(await s.claim("k2", T0 + 10, T0)).toBe("claimed");
      expect(await s.claim("k3", T0 + 10, T0)).toBe("full");
      expect(await s.claim("k3", T0 + 100, T0 + 20)).toBe("claimed");
    } finally {
      await pool.end();
    }
  });
});

describe("trust tables across replicas", () => {
  const fresh = (n: number): TrustRow => ({
    truster: "deployment",
    subject: "agent-t",
    score: 0.5,
    interactions: n,
    lastInteraction: null,
    anchor: T0,
    status: "active",
    quarantineUntil: null,
    quarantineCount: 0,
    gainWindowStart: null,
    gainInWindow: 0,
    propagatedHops: null,
  });

  it("90 concurrent updates of one row from three nodes lose none", async () => {
    const stores = each((p) => new PgTrustStore(p));
    await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        stores[i % 3]!.update("deployment", "agent-t", (row) => ({
          row: fresh((row?.interactions ?? 0) + 1),
          result: 0,
        })),
      ),
    );
    expect((await stores[1]!.get("deployment", "agent-t"))?.interactions).toBe(90);
  });

  it("a quarantine written on A is due on B; recipients are shared", async () => {
    const [a, b] = each((p) => new PgTrustStore(p));
    await a!.update("deployment", "agent-u", () => ({
      row: { ...fresh(1), subject: "agent-u", status: "quarantined", quarantineUntil: T0 + 5 },
      result: undefined,
    }));
    expect((await b!.dueQuarantines(T0 + 5)).map((r) => r.subject)).toContain("agent-u");
    expect(await b!.dueQuarantines(T0 + 4)).toEqual([]);
    await a!.addRecipient("agent-u", "peer-2");
    await b!.addRecipient("agent-u", "peer-1");
    await b!.addRecipient("agent-u", "peer-1");
    expect(await a!.recipients("agent-u")).toEqual(["peer-1", "peer-2"]);
  });
});

describe("an unreachable database", () => {
  it("fails closed with ERR_RUNTIME_STORE_UNAVAILABLE, never an answer", async () => {
    const dead = poolOf("postgres://postgres@127.0.0.1:1/none", 1);
    try {
      const err = await new PgBudgetLedger(dead)
        .reserve({ runId: "r", principalId: "p", now: T0, toolCallLimit: 5 })
        .catch((e: unknown) => e);
      expect(hasErrorCode(err, "ERR_RUNTIME_STORE_UNAVAILABLE")).toBe(true);
      const n = await new PgNonceStore(dead).claim("k", T0 + 1, T0).catch((e: unknown) => e);
      expect(hasErrorCode(n, "ERR_RUNTIME_STORE_UNAVAILABLE")).toBe(true);
    } finally {
      await dead.end();
    }
  });
});
