// Deferred actions across replicas, end to end: three `warden sidecar` processes from the
// docker-compose configuration on one real PostgreSQL. A call deferred on A is listed by
// every replica's approvals API and released or denied from any of them; A applies the one
// verdict (its Gate journals one resolution) and executes the call once.
import { hostname } from "node:os";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AGENT,
  type Answer,
  type Cluster,
  call,
  codeOf,
  deployCopy,
  echo,
  type Node,
  OPERATOR,
  startCluster,
  startRun,
  stopCluster,
} from "./cluster-helpers.js";

// A call whose message asks to wait is deferred (first match wins: priorities 50 to 70).
const DEFER_RULES = `  - id: batch-window
    name: held for the batch window
    priority: 50
    match: { toolClass: shell, tool: echo, parameters: { message: { pattern: "defer-me" } } }
    decision: defer
    defer: { timeout: 60s }
    reason: batched
  - id: short-window
    name: held briefly
    priority: 60
    match: { toolClass: shell, tool: echo, parameters: { message: { pattern: "defer-short" } } }
    decision: defer
    defer: { timeout: 1s }
    reason: batched
  - id: three-seconds
    name: held three seconds
    priority: 70
    match: { toolClass: shell, tool: echo, parameters: { message: { pattern: "defer-3s" } } }
    decision: defer
    defer: { timeout: 3s }
    reason: batched
`;

let db: pg.Pool;
let nodes: Node[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  cluster = await startCluster(deployCopy({ store: ["approvalPollMs: 200"], rules: DEFER_RULES }));
  ({ db, nodes } = cluster);
}, 120_000);

afterAll(() => stopCluster(cluster));

const node = (i: number) => nodes[i] as Node;
const nodeName = (n: Node) => `${hostname()}:${n.child.pid}`;
const ok = (a: Answer) => a.status === 200 && (a.body.result as { ok?: boolean } | undefined)?.ok === true;

interface Listed {
  id: string;
  kind: string;
  runId: string;
  decisionId: string;
}

/** Waits until the deferred action of `runId` is listed by `n`'s approvals API. */
async function listedOn(n: Node, runId: string): Promise<Listed> {
  for (let i = 0; i < 100; i++) {
    const list = await call(n.url, "/v1/approvals", OPERATOR);
    const item = ((list.body.pending as Listed[] | undefined) ?? []).find((p) => p.runId === runId);
    if (item !== undefined) return item;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no deferred action of ${runId} listed on ${n.name}`);
}

async function entries(
  runId: string,
  type: string,
): Promise<{ body: Record<string, unknown>; node: string }[]> {
  const r = await db.query<{ body: string; node: string }>(
    "SELECT body, node FROM journal_entries WHERE run_id = $1 AND type = $2 ORDER BY seq",
    [runId, type],
  );
  return r.rows.map((row) => ({ body: JSON.parse(row.body) as Record<string, unknown>, node: row.node }));
}

const word = (justification: string, outcome = "approve") => ({ outcome, justification });

describe("deferred actions shared by three replicas", () => {
  it("deferred on A, listed on B and C, released on B: executed once on A with one resolution; a second verdict on C is refused", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "defer-me please"));
    const onB = await listedOn(node(1), runId);
    const onC = await listedOn(node(2), runId);
    expect(onB).toMatchObject({ kind: "defer", id: onC.id, decisionId: onC.decisionId });
    const released = await call(node(1).url, `/v1/approvals/${onB.id}`, OPERATOR, word("batch window on b"));
    expect(released.status, JSON.stringify(released.body)).toBe(200);
    const late = await call(
      node(2).url,
      `/v1/approvals/${onB.id}`,
      OPERATOR,
      word("a second one on c", "deny"),
    );
    expect(late.status).toBe(404);
    expect(codeOf(late)).toBe("ERR_APPROVAL_NOT_FOUND");
    const answer = await waiting;
    expect(ok(answer), JSON.stringify(answer.body)).toBe(true);
    const resolved = await entries(runId, "warden.gate.resolution");
    expect(resolved.length).toBe(1);
    expect(resolved[0]).toMatchObject({
      node: nodeName(node(0)),
      body: { via: "defer", resolved: "allow", by: "demo-operator", justification: "batch window on b" },
    });
    expect((await entries(runId, "warden.gate.result")).length).toBe(1);
    // Its hold ended: the row is gone.
    const rows = await db.query("SELECT 1 FROM deferred WHERE id = $1", [onB.id]);
    expect(rows.rowCount).toBe(0);
  });

  it("denied on C: the call held on A is denied; the agent cannot release its own action (403, coded)", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "defer-me again"));
    const item = await listedOn(node(2), runId);
    const self = await call(
      node(1).url,
      `/v1/approvals/${item.id}`,
      AGENT,
      word("the agent releasing itself"),
    );
    expect(self.status).toBe(403);
    expect(codeOf(self)).toBe("ERR_AUTH_FORBIDDEN");
    const denied = await call(
      node(2).url,
      `/v1/approvals/${item.id}`,
      OPERATOR,
      word("not today, says c", "deny"),
    );
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(ok(answer)).toBe(false);
    expect(answer.body).toMatchObject({
      decision: "deny",
      reasonCodes: expect.arrayContaining(["defer_denied"]),
    });
    expect((await entries(runId, "warden.gate.resolution")).length).toBe(1);
    expect((await entries(runId, "warden.gate.result")).length).toBe(0);
  });

  it("B and C releasing at once: one verdict, one resolution, the call executed at most once", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "defer-me once"));
    const item = await listedOn(node(1), runId);
    const answers = await Promise.all([
      call(node(1).url, `/v1/approvals/${item.id}`, OPERATOR, word("released on replica b")),
      call(node(2).url, `/v1/approvals/${item.id}`, OPERATOR, word("denied on replica c", "deny")),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    const answer = await waiting;
    const won = answers[0]!.status === 200 ? "allow" : "deny";
    expect(answer.body.decision).toBe(won);
    const resolved = await entries(runId, "warden.gate.resolution");
    expect(resolved.length).toBe(1);
    expect(resolved[0]!.body.resolved).toBe(won);
    expect((await entries(runId, "warden.gate.result")).length).toBe(won === "allow" ? 1 : 0);
  });

  it("the holder's timeout still denies; a release after it is refused on every replica", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "defer-short"));
    const item = await listedOn(node(1), runId);
    const answer = await waiting;
    expect(answer.body).toMatchObject({
      decision: "deny",
      reasonCodes: expect.arrayContaining(["defer_timeout"]),
    });
    for (const n of nodes) {
      const late = await call(n.url, `/v1/approvals/${item.id}`, OPERATOR, word("too late for this one"));
      expect(late.status).toBe(404);
    }
  });

  it("a verdict written into the table by hand (no approver) is never obeyed: the call times out, denied, never executed", async () => {
    const runId = await startRun(node(0), AGENT);
    const waiting = call(node(0).url, "/v1/execute", AGENT, echo(runId, "defer-3s forged"));
    const item = await listedOn(node(2), runId);
    await db.query("UPDATE deferred SET verdict = $2, decided_by = 'nobody' WHERE id = $1", [
      item.id,
      JSON.stringify({ outcome: "allow", note: "nobody approved this" }),
    ]);
    await db.query("SELECT pg_notify('warden_deferred', $1)", [item.id]);
    const answer = await waiting;
    expect(answer.body).toMatchObject({
      decision: "deny",
      reasonCodes: expect.arrayContaining(["defer_timeout"]),
    });
    expect((await entries(runId, "warden.gate.result")).length).toBe(0);
    const resolved = await entries(runId, "warden.gate.resolution");
    expect(resolved.map((e) => e.body.outcome)).toEqual(["timeout"]);
  });
});
