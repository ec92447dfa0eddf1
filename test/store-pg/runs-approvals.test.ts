// The runs registry and the shared approval queue on one real PostgreSQL, each replica
// simulated by its own pool (its own connections, as a separate sidecar has), written as
// the attacks on a fleet: stealing a run, adopting it twice, answering a step-up twice.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryBudgetLedger } from "../../src/context/index.js";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { type ApprovalRequest, InProcessApprovals } from "../../src/gate/index.js";
import { ApproverKeyring, signApproval } from "../../src/journal/index.js";
import { FleetRateLedger, migrate, PgApprovalQueue, PgRunRegistry } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
const pools: pg.Pool[] = [];
let now = 1_800_000_000_000;
const clock = () => now;

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  for (let i = 0; i < 3; i++) pools.push(poolOf(url, 4));
  await migrate(pools[0]!);
}, 120_000);

afterAll(async () => {
  for (const p of pools) await p.end();
  await server?.stop();
});

const registries = () =>
  pools.map((p, i) => new PgRunRegistry(p, { node: `n${i}`, leaseMs: 1000, marginMs: 200, clock }));

async function journalEntry(pool: pg.Pool, seq: number, runId: string, body: Record<string, unknown>) {
  await pool.query(
    "INSERT INTO journal_entries (seq, time, type, run_id, prev_hash, hash, key_id, signature, body, node) " +
      "VALUES ($1, 't', $2, $3, 'p', 'h', 'k', 's', $4, 'n0')",
    [
      seq,
      body.decision === undefined ? "warden.gate.result" : "warden.gate.decision",
      runId,
      JSON.stringify(body),
    ],
  );
}

describe("runs registry", () => {
  it("another principal's run id, an ended run and an invented one are all 'unknown' on every replica", async () => {
    const [a, b, c] = registries();
    await a!.register("run-foreign", "alice");
    for (const r of [a!, b!, c!])
      expect(await r.locate("run-foreign", "mallory")).toEqual({ kind: "unknown" });
    expect(await b!.locate("run-invented", "alice")).toEqual({ kind: "unknown" });
    await a!.end("run-foreign");
    expect(await b!.locate("run-foreign", "alice")).toEqual({ kind: "unknown" });
  });

  it("while the owner's lease is live the run is elsewhere; once it expired exactly one of two racing replicas adopts it", async () => {
    const [a, b, c] = registries();
    await a!.register("run-race", "alice");
    expect(await b!.locate("run-race", "alice")).toEqual({ kind: "elsewhere", node: "n0" });
    now += 1001;
    const [x, y] = await Promise.all([b!.locate("run-race", "alice"), c!.locate("run-race", "alice")]);
    const kinds = [x!.kind, y!.kind].sort();
    expect(kinds).toEqual(["adopted", "elsewhere"]);
    // The old owner learns it lost the run at its next renewal, and its leases are stale by then.
    expect((await a!.renew(["run-race"])).has("run-race")).toBe(false);
    const epoch = await pools[0]!.query("SELECT epoch FROM runs WHERE run_id = 'run-race'");
    expect(epoch.rows[0]).toEqual({ epoch: 2 });
  });

  it("an owner stops serving before any replica may adopt: its leases are stale margin early", async () => {
    const [a] = registries();
    await a!.renew([]);
    expect(a!.leaseFresh(now + 799)).toBe(true);
    expect(a!.leaseFresh(now + 800)).toBe(false);
  });

  it("adoption rebuilds the taint and counts every decision that may have run; an unreadable entry refuses it", async () => {
    const [a, b] = registries();
    await a!.register("run-rebuilt", "alice");
    const web = { source: "web", origin: "https://evil.example" };
    await journalEntry(pools[0]!, 1, "run-rebuilt", { decision: "allow", taint: [] });
    await journalEntry(pools[0]!, 2, "run-rebuilt", { taint: [web] });
    await journalEntry(pools[0]!, 3, "run-rebuilt", { decision: "step_up", taint: [web] });
    await journalEntry(pools[0]!, 4, "run-rebuilt", { decision: "deny", taint: [] });
    now += 1001;
    const got = await b!.locate("run-rebuilt", "alice");
    expect(got).toMatchObject({ kind: "adopted", previousNode: "n0", run: { admitted: 2, denied: 1 } });
    expect(got.kind === "adopted" && got.run.taint).toEqual([expect.objectContaining(web)]);
    await a!.register("run-corrupt", "alice");
    await journalEntry(pools[0]!, 5, "run-corrupt", { decision: "allow", taint: "not labels" });
    now += 1001;
    await expect(b!.locate("run-corrupt", "alice")).rejects.toMatchObject({
      code: "ERR_RUNTIME_STATE_CORRUPT",
    });
    // Refused, and not taken: the row is still the old owner's.
    const row = await pools[0]!.query("SELECT node FROM runs WHERE run_id = 'run-corrupt'");
    expect(row.rows[0]).toEqual({ node: "n0" });
  });
});

function stepUp(id: string): ApprovalRequest {
  return {
    id,
    decisionId: `dec-${id}`,
    runId: "run-1",
    principalId: "alice",
    approverRole: "approver",
    request: {
      runId: "run-1",
      principalId: "alice",
      toolClass: "shell",
      action: "exec",
      parameters: {},
      capability: "bearer-capability-token-never-stored",
      rationale: "the model's free text",
      originalRequest: "the user's free text",
    },
    reasonCodes: [],
    matchedRules: [],
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
  } as unknown as ApprovalRequest;
}

const queues = () =>
  pools.map(
    (p, i) =>
      new PgApprovalQueue(p, { node: `n${i}`, local: new InProcessApprovals({ clock }), pollMs: 50, clock }),
  );
const operator = { id: "op", roles: ["approver"] };

describe("shared approval queue (no notifications: the poll alone resumes)", () => {
  it("a step-up approved on replica B resumes the call waiting on A; a second verdict on C is refused", async () => {
    const [a, b, c] = queues();
    const waiting = a!.request(stepUp("s1"), 60_000);
    await new Promise((r) => setTimeout(r, 100));
    expect((await b!.list()).map((r) => r.id)).toContain("s1");
    // The bearer token and the free text never leave the replica that holds the call.
    const stored = await pools[2]!.query<{ request: string }>(
      "SELECT request FROM approvals WHERE id = 's1'",
    );
    expect(stored.rows[0]?.request).not.toMatch(/bearer-capability|free text/);
    expect(JSON.parse(stored.rows[0]!.request)).toMatchObject({
      decisionId: "dec-s1",
      request: { toolClass: "shell" },
    });
    const verdict = { outcome: "approve" as const, approver: operator, justification: "looked at it on B" };
    const answers = await Promise.all([
      b!.queue().decide("s1", verdict),
      c!.queue().decide("s1", { ...verdict, outcome: "deny" as const }),
    ]);
    expect(answers.filter((x) => x.ok).length).toBe(1);
    const got = await waiting;
    expect(got.outcome).toBe(answers[0]!.ok ? "approve" : "deny");
    expect(await b!.list()).toEqual([]);
    for (const q of [a!, b!, c!]) await q.close();
  });

  it("a verdict forged into the table without the approver role never resumes the call (the holder checks it again)", async () => {
    const [a, b] = queues();
    const ctl = new AbortController();
    const waiting = a!.request(stepUp("s2"), 60_000, ctl.signal);
    await new Promise((r) => setTimeout(r, 100));
    const forged = {
      outcome: "approve",
      approver: { id: "mallory", roles: ["agent"] },
      justification: "trust me, really",
    };
    // Through the API the verdict is refused on B, coded, and nothing is claimed.
    expect(await b!.queue().decide("s2", forged as never)).toMatchObject({
      ok: false,
      code: "ERR_APPROVAL_FORBIDDEN",
    });
    // Written into the table directly, it still never resumes the call on A.
    await pools[1]!.query("UPDATE approvals SET verdict = $2 WHERE id = $1", ["s2", JSON.stringify(forged)]);
    await new Promise((r) => setTimeout(r, 300));
    expect(a!.pending().map((p) => p.id)).toContain("s2");
    ctl.abort();
    expect((await waiting).outcome).toBe("cancelled");
    for (const q of [a!, b!]) await q.close();
  });

  it("a step-up whose row cannot be stored is cancelled (the Gate denies it), never left waiting unlisted", async () => {
    const [a] = queues();
    await pools[0]!.query(
      "INSERT INTO approvals (id, decision_id, run_id, principal_id, node, request, expires_at) VALUES ('s4', 'd', 'r', 'p', 'n9', '{}', 0)",
    );
    expect((await a!.request(stepUp("s4"), 60_000)).outcome).toBe("cancelled");
    expect(a!.pending()).toEqual([]);
    await a!.close();
  });
});

describe("a principal's rate limit across replicas", () => {
  const fleet = () =>
    pools.map(
      (p, i) =>
        new FleetRateLedger(new MemoryBudgetLedger(), p, {
          node: `n${i}`,
          limitOf: (id) => (id === "bob" ? 5 : undefined),
        }),
    );
  const attempt = async (l: FleetRateLedger, runId: string, principalId: string) => {
    await l.admit(principalId, now);
    return l.reserve({ runId, principalId, now, ratePerMinute: principalId === "bob" ? 5 : undefined }).ok;
  };

  it("a principal spreading its calls over three replicas gets its 5 calls a minute, not 15", async () => {
    const ls = fleet();
    const got: boolean[] = [];
    for (let k = 0; k < 9; k++) got.push(await attempt(ls[k % 3]!, `run-${k % 3}`, "bob"));
    expect(got.filter(Boolean).length).toBe(5);
    expect(got.slice(0, 5).every(Boolean)).toBe(true);
    // Concurrent calls at the limit on all three get nothing more.
    const burst = await Promise.all(ls.map((l, i) => attempt(l, `run-${i}`, "bob")));
    expect(burst.filter(Boolean).length).toBe(0);
    // A minute later the window has moved on.
    now += 60_001;
    expect(await attempt(ls[1]!, "run-1", "bob")).toBe(true);
    // A principal without a rate limit takes no slot in the database.
    expect(await attempt(ls[0]!, "run-0", "carol")).toBe(true);
    const carol = await pools[0]!.query("SELECT 1 FROM rate_slots WHERE principal_id = 'carol'");
    expect(carol.rowCount).toBe(0);
  });

  it("concurrent calls through three replicas never exceed the limit", async () => {
    now += 60_001;
    const ls = fleet();
    const got = await Promise.all(
      Array.from({ length: 15 }, (_, k) => attempt(ls[k % 3]!, `run-${k % 3}`, "bob")),
    );
    expect(got.filter(Boolean).length).toBeLessThanOrEqual(5);
    expect(got.filter(Boolean).length).toBeGreaterThan(0);
  });
});

describe("approver-signed step-ups across replicas", () => {
  it("the approver's signature is checked where the verdict is given and again where the call waits; it answers one decision only", async () => {
    const key = generateKeyPair("ed25519");
    const pem = key.publicKey.export({ format: "pem", type: "spki" }).toString();
    const [a, b, c] = pools.map(
      (p, i) =>
        new PgApprovalQueue(p, {
          node: `n${i}`,
          local: new InProcessApprovals({ approverKeys: ApproverKeyring.fromPem({ op: [pem] }), clock }),
          pollMs: 50,
          clock,
        }),
    );
    const first = a!.request(stepUp("sig-1"), 60_000);
    const ctl = new AbortController();
    const second = a!.request(stepUp("sig-2"), 60_000, ctl.signal);
    await new Promise((r) => setTimeout(r, 100));
    const justification = "signed off by the operator";
    const unsigned = { outcome: "approve" as const, approver: operator, justification };
    expect(await b!.queue().decide("sig-1", unsigned)).toMatchObject({ code: "ERR_APPROVAL_UNSIGNED" });
    const statement = {
      decision_id: "dec-sig-1",
      action: "approve" as const,
      approver_id: "op",
      justification,
      time: isoTime(now),
    };
    const signed = { ...unsigned, signed: signApproval(statement, key.privateKey) };
    expect(await b!.queue().decide("sig-1", signed)).toEqual({ ok: true });
    const got = await first;
    expect(got).toMatchObject({ outcome: "approve", signed: { decisionId: "dec-sig-1" } });
    // The same signature offered on C for the other waiting call is for another decision.
    expect(await c!.queue().decide("sig-2", signed)).toMatchObject({ code: "ERR_APPROVAL_WRONG_DECISION" });
    ctl.abort();
    expect((await second).outcome).toBe("cancelled");
    for (const q of [a!, b!, c!]) await q.close();
  });
});
