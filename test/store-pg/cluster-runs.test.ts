// Runs across replicas, end to end: three `warden sidecar` processes from the
// docker-compose configuration (short run leases) on one real PostgreSQL. A run is served
// by its owner only (ERR_RUN_ELSEWHERE elsewhere), never by another principal anywhere,
// and a run whose owner died is adopted with the budget and taint it had.
import { hostname } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keyring, loadPublicKeyFile } from "../../src/crypto/index.js";
import { verifyChains } from "../../src/journal/index.js";
import { chainInputs } from "../../src/store-pg/index.js";
import {
  AGENT,
  AGENT_2,
  AGENT_3,
  type Answer,
  type Cluster,
  call,
  codeOf,
  deployCopy,
  echo,
  type Node,
  OPERATOR,
  startCluster,
  startNode,
  startRun,
  stopCluster,
} from "./cluster-helpers.js";
import { poolOf } from "./helpers.js";

const LEASE_MS = 2000;

// A call whose message asks for a human waits for an approver (first match wins: priority 50).
const STEP_UP_RULE = `  - id: human-approves
    name: a human approves
    priority: 50
    match: { toolClass: shell, tool: echo, parameters: { message: { pattern: "approve-me" } } }
    decision: step_up
    stepUp: { approverRole: approver, timeout: 60s }
    reason: needs a human
`;

let dbUrl: string;
let dir: string;
let db: pg.Pool;
let nodes: Node[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  dir = deployCopy({
    store: [`runs: { leaseMs: ${LEASE_MS}, marginMs: 500 }`, "approvalPollMs: 200"],
    rules: STEP_UP_RULE,
    context: ["rateLimits: { perPrincipal: { demo-agent-2: 10 } }"],
  });
  cluster = await startCluster(dir);
  ({ dbUrl, db, nodes } = cluster);
}, 120_000);

afterAll(() => stopCluster(cluster));

const node = (i: number) => nodes[i] as Node;
const nodeName = (n: Node) => `${hostname()}:${n.child.pid}`;
const ok = (a: Answer) => a.status === 200 && (a.body.result as { ok?: boolean } | undefined)?.ok === true;

describe("runs shared by three replicas", () => {
  // First: the principal's one-minute window starts empty.
  it("a principal's rate limit holds across replicas: its runs on three nodes share its 10 calls a minute", async () => {
    const runs = await Promise.all(nodes.map((n) => startRun(n, AGENT_2)));
    const answers: Answer[] = [];
    for (let k = 0; k < 18; k++)
      answers.push(await call(node(k % 3).url, "/v1/decide", AGENT_2, echo(runs[k % 3] as string, `r${k}`)));
    const view = JSON.stringify(answers.map((a) => [a.status, a.body.decision ?? codeOf(a)]));
    expect(answers.filter((a) => a.body.decision === "allow").length, view).toBe(10);
    const refused = answers.filter((a) => a.body.decision === "deny");
    expect(refused.length).toBe(8);
    for (const a of refused) expect(a.body.reasonCodes).toContain("rate_limited");
    // Concurrent calls through all three nodes cannot take a slot either.
    const burst = await Promise.all(
      nodes.map((n, i) => call(n.url, "/v1/decide", AGENT_2, echo(runs[i] as string, "burst"))),
    );
    expect(burst.filter((a) => a.body.decision === "allow").length).toBe(0);
  });

  it("another principal's run id is unknown on every node (404, never 'elsewhere': no ownership oracle)", async () => {
    const runId = await startRun(node(0), AGENT);
    for (const n of nodes) {
      const stolen = await call(n.url, "/v1/decide", AGENT_2, echo(runId));
      expect(stolen.status, JSON.stringify(stolen.body)).toBe(404);
      expect(codeOf(stolen)).toBe("ERR_RUN_UNKNOWN");
    }
    const invented = await call(
      node(1).url,
      "/v1/decide",
      AGENT,
      echo("a3a0c1d6-8a0b-4c55-9d69-1c2b3d4e5f60"),
    );
    expect(codeOf(invented)).toBe("ERR_RUN_UNKNOWN");
    // The owner still serves its principal.
    expect((await call(node(0).url, "/v1/decide", AGENT, echo(runId))).body.decision).toBe("allow");
  });

  it("switching node does not escape the run: the others answer 421 ERR_RUN_ELSEWHERE naming the owner", async () => {
    const runId = await startRun(node(0), AGENT);
    for (const i of [1, 2]) {
      const a = await call(node(i).url, "/v1/execute", AGENT, echo(runId));
      expect(a.status, JSON.stringify(a.body)).toBe(421);
      expect(a.body.error).toMatchObject({ code: "ERR_RUN_ELSEWHERE", details: { node: nodeName(node(0)) } });
    }
    const row = await db.query("SELECT principal_id, node FROM runs WHERE run_id = $1", [runId]);
    expect(row.rows[0]).toEqual({ principal_id: "demo-agent", node: nodeName(node(0)) });
  });

  it("run-scoped routes do not serve another replica's run either: state, grants, a child run and memory answer 421 naming the owner", async () => {
    const runId = await startRun(node(0), AGENT);
    const owner = { code: "ERR_RUN_ELSEWHERE", details: { node: nodeName(node(0)) } };
    const state = await call(node(1).url, `/v1/runs/${runId}`, AGENT);
    expect([state.status, state.body.error]).toEqual([421, expect.objectContaining(owner)]);
    const asOperator = await call(node(2).url, `/v1/runs/${runId}`, OPERATOR);
    expect([asOperator.status, asOperator.body.error]).toEqual([421, expect.objectContaining(owner)]);
    const grant = await call(node(1).url, `/v1/runs/${runId}/capabilities`, OPERATOR, {
      tool: "echo",
      maxUses: 1,
    });
    expect([grant.status, grant.body.error]).toEqual([421, expect.objectContaining(owner)]);
    const child = await call(node(2).url, "/v1/runs", AGENT, { parentRun: runId });
    expect([child.status, child.body.error]).toEqual([421, expect.objectContaining(owner)]);
    // Another principal learns nothing about the run on any replica (no ownership oracle).
    for (const i of [0, 1]) expect((await call(node(i).url, `/v1/runs/${runId}`, AGENT_3)).status).toBe(404);
    // The owner serves all of them.
    expect((await call(node(0).url, `/v1/runs/${runId}`, AGENT)).status).toBe(200);
    expect((await call(node(0).url, "/v1/runs", AGENT, { parentRun: runId })).status).toBe(201);
  });

  it("a single-use capability token presented to all three nodes at once is used exactly once", async () => {
    const runId = await startRun(node(0), AGENT);
    const grant = await call(node(0).url, `/v1/runs/${runId}/capabilities`, OPERATOR, {
      tool: "echo",
      maxUses: 1,
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const capability = grant.body.token as string;
    const answers = await Promise.all(
      [0, 1, 2, 0, 1, 2].map((i) =>
        call(node(i).url, "/v1/execute", AGENT, { ...echo(runId, `use ${i}`), capability }),
      ),
    );
    expect(answers.filter(ok).length).toBe(1);
    for (const a of answers.filter((x) => !ok(x)))
      expect([200, 421], JSON.stringify(a.body)).toContain(a.status);
    const uses = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision' " +
        "AND decision = 'allow' AND body::jsonb ->> 'capability_id' = $2",
      [runId, grant.body.id],
    );
    expect(Number(uses.rows[0]?.n)).toBe(1);
  });

  it("a run whose owner died is adopted by one node with its budget spent and the taint of a result acknowledged on the owner", async () => {
    const runId = await startRun(node(0), AGENT_3);
    const before = await Promise.all(
      Array.from({ length: 10 }, (_, k) => call(node(0).url, "/v1/execute", AGENT_3, echo(runId, `a${k}`))),
    );
    expect(before.filter(ok).length).toBe(10);
    // The acknowledged result's taint (tool output) is in the run's journal.
    expect(before[0]?.body.taint).toEqual(
      expect.arrayContaining([expect.objectContaining({ source: "tool-output" })]),
    );
    node(0).child.kill("SIGKILL");
    await node(0).exited;
    // While the lease is live the others refuse; once it expired, one adopts.
    let first: Answer = await call(node(1).url, "/v1/decide", AGENT_3, echo(runId, "after"));
    expect([421, 200]).toContain(first.status);
    for (let i = 0; i < 60 && first.status === 421; i++) {
      await new Promise((r) => setTimeout(r, 100));
      first = await call(node(1).url, "/v1/decide", AGENT_3, echo(runId, "after"));
    }
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The decision on B sees the taint of the result acknowledged on A.
    expect(first.body.taint).toEqual(
      expect.arrayContaining([expect.objectContaining({ source: "tool-output", origin: "echo" })]),
    );
    // C now sees B as the owner.
    const onC = await call(node(2).url, "/v1/decide", AGENT_3, echo(runId));
    expect(onC.body.error).toMatchObject({ code: "ERR_RUN_ELSEWHERE", details: { node: nodeName(node(1)) } });
    // Budget 50: 10 ran on A and B allowed one decision, so 39 more run on B, not 49 (three
    // refused, under the denial threshold).
    const after = await Promise.all(
      Array.from({ length: 42 }, (_, k) => call(node(1).url, "/v1/execute", AGENT_3, echo(runId, `b${k}`))),
    );
    expect(after.filter(ok).length).toBe(39);
    const adopted = await db.query(
      "SELECT body FROM journal_entries WHERE run_id = $1 AND type = 'warden.run.adopted'",
      [runId],
    );
    expect(adopted.rowCount).toBe(1);
    // Every chain (the dead owner's, the adopter's with the adoption entry) verifies with
    // the fleet's one key, checkpoints and all.
    const pool = poolOf(dbUrl, 2);
    try {
      const keys = new Keyring([loadPublicKeyFile(join(dir, "keys/journal.pub.pem"))]);
      const report = await verifyChains(await chainInputs(pool), keys);
      expect(report.ok, JSON.stringify(report)).toBe(true);
    } finally {
      await pool.end();
    }
    expect(JSON.parse(adopted.rows[0].body as string)).toMatchObject({
      admitted: 10,
      from_node: nodeName(node(0)),
    });
    nodes[0] = await startNode(dir, "a", dbUrl);
  });

  /** Waits until the step-up of `runId` is listed by `n`'s approvals API (any replica's queue). */
  async function listedOn(n: Node, runId: string): Promise<{ id: string; runId: string }> {
    for (let i = 0; i < 100; i++) {
      const list = await call(n.url, "/v1/approvals", OPERATOR);
      const items = (list.body.pending as { id: string; runId: string }[] | undefined) ?? [];
      const item = items.find((p) => p.runId === runId);
      if (item !== undefined) return item;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no step-up of ${runId} listed on ${n.name}`);
  }

  async function resolutions(runId: string): Promise<Record<string, unknown>[]> {
    const r = await db.query<{ body: string }>(
      "SELECT body FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.resolution' ORDER BY seq",
      [runId],
    );
    return r.rows.map((row) => JSON.parse(row.body) as Record<string, unknown>);
  }

  it("a step-up approved on node B resumes the call waiting on node A, once: a second verdict on C is refused", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "approve-me please"));
    const item = await listedOn(node(1), runId);
    const approved = await call(node(1).url, `/v1/approvals/${item.id}`, OPERATOR, {
      outcome: "approve",
      justification: "checked by the operator on replica b",
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const late = await call(node(2).url, `/v1/approvals/${item.id}`, OPERATOR, {
      outcome: "deny",
      justification: "a second operator on replica c",
    });
    expect(late.status).toBe(404);
    expect(codeOf(late)).toBe("ERR_APPROVAL_NOT_FOUND");
    const answer = await waiting;
    expect(ok(answer), JSON.stringify(answer.body)).toBe(true);
    const journaled = await resolutions(runId);
    expect(journaled.length).toBe(1);
    expect(JSON.stringify(journaled[0])).toContain("demo-operator");
  });

  it("a step-up denied on node B denies the call waiting on node A; the agent cannot approve its own call", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "approve-me again"));
    const item = await listedOn(node(2), runId);
    const self = await call(node(1).url, `/v1/approvals/${item.id}`, AGENT, {
      outcome: "approve",
      justification: "the agent approving itself",
    });
    expect(self.status).toBe(403);
    const denied = await call(node(1).url, `/v1/approvals/${item.id}`, OPERATOR, {
      outcome: "deny",
      justification: "not today, says replica b",
    });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(ok(answer)).toBe(false);
    expect(answer.body.decision).toBe("deny");
    expect((await resolutions(runId)).length).toBe(1);
  });
});
