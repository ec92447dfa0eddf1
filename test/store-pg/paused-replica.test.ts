// Issue 36, end to end: two `warden sidecar` processes on one real PostgreSQL; replica A
// reaches the database through a proxy (pause-proxy.ts) that freezes A's connection at an
// exact point, and A is paused there with SIGSTOP (a GC pause, a frozen VM), then resumed.
//  - a paused owner breaks the run budget: A pauses with a decision sealed but not yet
//    committed; B adopts the run after A's lease and spends the rest of the budget; A wakes
//    up. The commit is fenced by the run's ownership epoch: not journaled, not executed.
//  - a paused replica stalls the others: A pauses right after it sent its rate-slot
//    reservation; B's calls for the same principal are served meanwhile (no row lock held
//    across a client round trip), not held for the whole pause or failed with 503.
//  - quarantine race: the denial that quarantines its principal is answered only once the
//    quarantine is in the shared store (A's save is held back by the proxy meanwhile), so a
//    run started on B right after the answer executes nothing.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import {
  AGENT,
  AGENT_2,
  AGENT_3,
  type Answer,
  call,
  deployCopy,
  echo,
  type Node,
  OPERATOR,
  startNode,
  startRun,
  stopNode,
} from "./cluster-helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";
import { type PauseProxy, startPauseProxy } from "./pause-proxy.js";

const BUDGET = 5;
let server: PostgresServer;
let db: pg.Pool;
let proxy: PauseProxy;
let a: Node;
let b: Node;

beforeAll(async () => {
  const dir = deployCopy({
    store: ["runs: { leaseMs: 2000, marginMs: 500 }", "journal: { checkpointMs: 600000 }"],
    context: ["rateLimits: { perPrincipal: { demo-agent-2: 100 } }"],
  });
  const config = join(dir, "sidecar.yaml");
  writeFileSync(config, readFileSync(config, "utf8").replace("toolCalls: 50", `toolCalls: ${BUDGET}`));
  server = await startPostgres();
  const dbUrl = await freshDatabase(server.connectionString);
  db = poolOf(dbUrl, 2);
  await migrate(db);
  proxy = await startPauseProxy(dbUrl);
  a = await startNode(dir, "a", proxy.url);
  b = await startNode(dir, "b", dbUrl);
}, 120_000);

afterAll(async () => {
  for (const n of [a, b]) {
    n?.child.kill("SIGCONT");
    if (n !== undefined) await stopNode(n);
  }
  proxy?.thaw();
  await proxy?.close();
  await db?.end();
  await server?.stop();
});

const ok = (x: Answer) => x.status === 200 && (x.body.result as { ok?: boolean } | undefined)?.ok === true;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POST /v1/execute (or `path`) with an Idempotency-Key. */
async function callKeyed(base: string, body: unknown, key: string, path = "/v1/execute"): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${AGENT}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Calls `n` until it no longer answers 421 (the owner's lease has to expire first). */
async function adoptOn(n: Node, token: string, runId: string): Promise<Answer> {
  let x = await call(n.url, "/v1/execute", token, echo(runId, "adopt"));
  for (let i = 0; i < 100 && x.status === 421; i++) {
    await sleep(100);
    x = await call(n.url, "/v1/execute", token, echo(runId, "adopt"));
  }
  return x;
}

describe("a replica paused with SIGSTOP", () => {
  it("a paused replica stalls the others: while A is paused holding its rate-slot reservation, B serves the principal's calls", async () => {
    const runA = await startRun(a, AGENT_2);
    const runB = await startRun(b, AGENT_2);
    expect(ok(await call(a.url, "/v1/execute", AGENT_2, echo(runA, "warm")))).toBe(true);
    const frozen = proxy.freezeOn(/FOR UPDATE|warden_rate_admit/, "after");
    const onA = call(a.url, "/v1/execute", AGENT_2, echo(runA, "paused"));
    await frozen;
    a.child.kill("SIGSTOP");
    try {
      // B's call for the same principal is decided while A is still paused.
      const onB = await call(b.url, "/v1/execute", AGENT_2, echo(runB, "while A is paused"));
      expect(onB.status, JSON.stringify(onB.body)).toBe(200);
      expect(ok(onB)).toBe(true);
    } finally {
      a.child.kill("SIGCONT");
      proxy.thaw();
    }
    expect((await onA).status).toBe(200);
  }, 60_000);

  it("a paused owner breaks the run budget: a commit sealed before the pause is fenced after another replica adopted the run", async () => {
    const runId = await startRun(a, AGENT);
    for (let k = 0; k < BUDGET - 1; k++)
      expect(ok(await call(a.url, "/v1/execute", AGENT, echo(runId, `a${k}`)))).toBe(true);
    // A's next decision is sealed and on its way to PostgreSQL when A pauses.
    const frozen = proxy.freezeOn(/warden-journal-append/, "before");
    const held = call(a.url, "/v1/execute", AGENT, echo(runId, "sealed before the pause"));
    await frozen;
    a.child.kill("SIGSTOP");
    const answers: Answer[] = [];
    try {
      answers.push(await adoptOn(b, AGENT, runId)); // B adopts: admitted 4, one call left
      for (let k = 0; k < 3; k++) answers.push(await call(b.url, "/v1/execute", AGENT, echo(runId, `b${k}`)));
    } finally {
      a.child.kill("SIGCONT");
      proxy.thaw();
    }
    const late = await held;
    // The harm did not happen: at most BUDGET executions, whichever replica ran them.
    expect(ok(late), JSON.stringify(late.body)).toBe(false);
    expect([503, 421]).toContain(late.status);
    expect(answers.filter(ok)).toHaveLength(1);
    const allowed = await db.query(
      "SELECT node FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision' AND decision = 'allow'",
      [runId],
    );
    expect(allowed.rowCount).toBe(BUDGET);
    const results = await db.query(
      "SELECT count(*)::int AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.result'",
      [runId],
    );
    expect(results.rows[0].n).toBeLessThanOrEqual(BUDGET);
  }, 90_000);

  it("a store failure during a token check is not ERR_CAPABILITY_INVALID: A paused mid-check and cut off meanwhile answers 503, nothing executed, and the token still works", async () => {
    const runId = await startRun(a, AGENT);
    const grant = await call(a.url, `/v1/runs/${runId}/capabilities`, OPERATOR, { tool: "echo", maxUses: 1 });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const capability = grant.body.token as string;
    // A pauses (SIGSTOP) with the token's use on its way to PostgreSQL; while it is paused
    // its connection is partitioned away (the held message never reaches the server).
    const frozen = proxy.freezeOn(/warden_reserve|INSERT INTO principal_rate/, "before");
    const pending = call(a.url, "/v1/execute", AGENT, { ...echo(runId, "with token"), capability });
    await frozen;
    a.child.kill("SIGSTOP");
    proxy.cutFrozen();
    await sleep(200);
    a.child.kill("SIGCONT");
    const failed = await pending;
    expect(ok(failed)).toBe(false);
    expect(failed.status, JSON.stringify(failed.body)).toBe(503);
    expect(failed.body.error).toMatchObject({
      code: "ERR_RUNTIME_STORE_UNAVAILABLE",
      details: { mayHaveExecuted: false },
    });
    // Truthful: the token was not spent, its one use is still there.
    const retried = await call(a.url, "/v1/execute", AGENT, { ...echo(runId, "with token"), capability });
    expect(ok(retried), JSON.stringify(retried.body)).toBe(true);
  }, 60_000);

  it("a retry can execute twice: a retry with the same Idempotency-Key returns the first outcome, on the same replica and on the one that adopted the run after a pause", async () => {
    const runId = await startRun(a, AGENT);
    const body = echo(runId, "exactly once");
    const first = await callKeyed(a.url, body, "retry-key-1");
    expect(ok(first), JSON.stringify(first.body)).toBe(true);
    // The answer was lost (the client cannot tell): it retries on A with the same key.
    const again = await callKeyed(a.url, body, "retry-key-1");
    expect(again.status).toBe(200);
    expect(again.body.decisionId).toBe(first.body.decisionId);
    // A pauses; the client retries on B, which adopts the run once A's lease ran out.
    a.child.kill("SIGSTOP");
    let onB: Answer;
    try {
      onB = await callKeyed(b.url, body, "retry-key-1");
      for (let i = 0; i < 100 && onB.status === 421; i++) {
        await sleep(100);
        onB = await callKeyed(b.url, body, "retry-key-1");
      }
    } finally {
      a.child.kill("SIGCONT");
    }
    expect(onB.status, JSON.stringify(onB.body)).toBe(200);
    expect(onB.body.decisionId).toBe(first.body.decisionId);
    // The same key for another request is refused, not run.
    const other = await callKeyed(a.url, echo(runId, "something else"), "retry-key-1");
    expect(other.status).toBe(422);
    // The harm did not happen: one execution.
    const allowed = await db.query(
      "SELECT count(*)::int AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision' AND decision = 'allow'",
      [runId],
    );
    expect(allowed.rows[0].n).toBe(1);
    // Each replay is journaled, with the first attempt's decision.
    const replays = await db.query<{ body: string }>(
      "SELECT body FROM journal_entries WHERE type = 'warden.execute.replayed' AND body::jsonb ->> 'run_id' = $1",
      [runId],
    );
    expect(replays.rows.map((r) => JSON.parse(r.body).decision_id)).toEqual([
      first.body.decisionId,
      first.body.decisionId,
    ]);
  }, 60_000);

  it("a retried /v1/decide decides once: the same Idempotency-Key on A, then on B, answers the first decision; one journaled decision, one budget unit", async () => {
    const runId = await startRun(a, AGENT);
    const body = echo(runId, "decided once");
    const first = await callKeyed(a.url, body, "decide-key-1", "/v1/decide");
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.decision).toBe("allow");
    for (const n of [a, b]) {
      const again = await callKeyed(n.url, body, "decide-key-1", "/v1/decide");
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body.decisionId).toBe(first.body.decisionId);
    }
    // The same key names one route: on /v1/execute it is another request.
    expect((await callKeyed(a.url, body, "decide-key-1")).status).toBe(422);
    const decisions = await db.query(
      "SELECT count(*)::int AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision'",
      [runId],
    );
    expect(decisions.rows[0].n).toBe(1);
    const replays = await db.query<{ body: string }>(
      "SELECT body FROM journal_entries WHERE type = 'warden.execute.replayed' AND body::jsonb ->> 'run_id' = $1",
      [runId],
    );
    expect(replays.rows.map((r) => JSON.parse(r.body).route)).toEqual(["POST /v1/decide", "POST /v1/decide"]);
  }, 60_000);

  it("a retry while the first attempt is pending is refused 409 (may have executed), never run: A paused mid-call, the retry on B; after A resumes the retry gets the first outcome", async () => {
    const runId = await startRun(a, AGENT);
    const body = echo(runId, "pending");
    const frozen = proxy.freezeOn(/warden-journal-append/, "before");
    const first = callKeyed(a.url, body, "pending-key-1");
    await frozen;
    a.child.kill("SIGSTOP");
    let onB: Answer;
    try {
      onB = await callKeyed(b.url, body, "pending-key-1");
    } finally {
      a.child.kill("SIGCONT");
      proxy.thaw();
    }
    expect(onB.status, JSON.stringify(onB.body)).toBe(409);
    expect(onB.body.error).toMatchObject({
      code: "ERR_SERVER_IDEMPOTENCY_PENDING",
      details: { mayHaveExecuted: true },
    });
    const done = await first;
    expect(ok(done), JSON.stringify(done.body)).toBe(true);
    const retried = await callKeyed(b.url, body, "pending-key-1");
    expect(retried.status).toBe(200);
    expect(retried.body.decisionId).toBe(done.body.decisionId);
    // The harm did not happen: the refused retry executed nothing (one decision, one result).
    const allowed = await db.query(
      "SELECT count(*)::int AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision'",
      [runId],
    );
    expect(allowed.rows[0].n).toBe(1);
  }, 60_000);

  // Last: it quarantines demo-agent-3 for good.
  it("quarantine race: the denial that quarantines the principal is answered only after the quarantine is durable; a new run on B right after executes nothing", async () => {
    const runId = await startRun(a, AGENT_3);
    for (let k = 0; k < 4; k++) {
      const d = await call(a.url, "/v1/execute", AGENT_3, echo(runId, `rm -rf /${k}`));
      expect(d.body.decision, JSON.stringify(d.body)).toBe("deny");
    }
    const frozen = proxy.freezeOn(/INSERT INTO principal_state/, "before");
    let durableAtAnswer: boolean | undefined;
    const crossing = call(a.url, "/v1/execute", AGENT_3, echo(runId, "rm -rf /last")).then(async (x) => {
      const r = await db.query<{ record: string }>(
        "SELECT record FROM principal_state WHERE principal_id = 'demo-agent-3'",
      );
      durableAtAnswer = r.rows.some((row) => JSON.parse(row.record).quarantine !== undefined);
      return x;
    });
    await frozen; // A's quarantine save is on its way (held)
    await Promise.race([crossing, sleep(1500)]); // an answer sent before the save arrives here
    proxy.thaw();
    const answer = await crossing;
    expect(answer.body.decision).toBe("deny");
    expect(durableAtAnswer).toBe(true);
    // Right after the answer: a new run on B for the same principal executes nothing.
    const started = await call(b.url, "/v1/runs", AGENT_3, {});
    if (started.status === 201) {
      const onB = await call(b.url, "/v1/execute", AGENT_3, echo(started.body.runId as string, "egress"));
      expect(ok(onB), JSON.stringify(onB.body)).toBe(false);
    } else expect(started.status).toBeGreaterThanOrEqual(400);
  }, 60_000);
});
