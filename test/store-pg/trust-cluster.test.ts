// APAE trust tables shared by three `warden sidecar` processes (the docker-compose
// configuration with an `apae` section) on one real PostgreSQL, as attacks: an agent
// driven into trust quarantine through one replica cannot carry on through another, and
// trust events decided on three replicas at once on one row lose none (PgTrustStore).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
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
  startRun,
  stopCluster,
} from "./cluster-helpers.js";

/**
 * deploy/ with APAE on (action ECTs at L1: no ECT key needed; no tick during the test). The
 * quarantine floor is lowered to 0.05 so that the revocation floor (0.2: three policy
 * violations from 0.5) is crossed well before the quarantine (six).
 */
function apaeDeploy(): string {
  const dir = deployCopy();
  const config = parse(readFileSync(join(dir, "sidecar.yaml"), "utf8")) as Record<string, unknown>;
  config.apae = { ectLevel: "L1", tickMs: 3_600_000, settings: { quarantine_floor: 0.05 } };
  writeFileSync(join(dir, "sidecar.yaml"), stringify(config));
  return dir;
}

let dir: string;
let db: pg.Pool;
let nodes: Node[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  dir = apaeDeploy();
  cluster = await startCluster(dir);
  ({ db, nodes } = cluster);
}, 120_000);

afterAll(() => stopCluster(cluster));

const node = (i: number) => nodes[i] as Node;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StoredRow {
  score: number;
  interactions: number;
  status: string;
}

async function trustRow(subject: string): Promise<StoredRow | undefined> {
  const r = await db.query<{ row: string }>(
    "SELECT row FROM trust_rows WHERE truster = 'deployment' AND subject = $1",
    [subject],
  );
  const text = r.rows[0]?.row;
  return text === undefined ? undefined : (JSON.parse(text) as StoredRow);
}

/** Waits (polling the database, at most `tries` × 100 ms) until the row satisfies `ok`. */
async function rowWhere(subject: string, ok: (r: StoredRow) => boolean, tries = 300): Promise<StoredRow> {
  let row = await trustRow(subject);
  for (let i = 0; i < tries && (row === undefined || !ok(row)); i++) {
    await pause(100);
    row = await trustRow(subject);
  }
  if (row === undefined || !ok(row))
    throw new Error(`row of ${subject} never got there: ${JSON.stringify(row)}`);
  return row;
}

describe("APAE trust tables shared by three replicas", () => {
  it("an agent driven under the quarantine floor on node A is held on node B: its open run within the notification window, and no new run", async () => {
    const openOnB = await startRun(node(1));
    expect((await call(node(1).url, "/v1/decide", AGENT, echo(openOnB))).body.decision).toBe("allow");
    // Policy violations on A (each a deny by a rule: a policy_violation trust event) until
    // the shared row is quarantined.
    const onA = await startRun(node(0));
    for (let i = 0; i < 7; i++) {
      const d = await call(node(0).url, "/v1/decide", AGENT, echo(onA, "rm -rf /"));
      expect(d.body.decision).toBe("deny");
    }
    const row = await rowWhere("demo-agent", (r) => r.status === "quarantined");
    expect(row.score).toBeLessThan(0.05);
    // From the COMMIT of the quarantine on: B's decisions on its open run, counted until the
    // first refusal. The bound is the notification's delivery and one row read
    // (docs/distributed.md): a decision B starts before it has read the row may still pass.
    let slipped = 0;
    let answer: Answer = { status: 0, body: {} };
    for (let i = 0; i < 40; i++) {
      answer = await call(node(1).url, "/v1/decide", AGENT, echo(openOnB));
      if (answer.body.decision !== "allow") break;
      slipped++;
    }
    expect(answer.body).toMatchObject({ decision: "deny", reasonCodes: ["quarantined"] });
    expect(slipped).toBeLessThanOrEqual(2);
    // B's own table has the quarantine: no new run for the agent there (nor on C).
    for (const other of [node(1), node(2)]) {
      const fresh = await call(other.url, "/v1/runs", AGENT, {});
      expect([fresh.status, codeOf(fresh)]).toEqual([503, "ERR_TRUST_QUARANTINED"]);
    }
  });

  it("a revocation decided on node A voids the agent's capability token granted on node B", async () => {
    const onB = await startRun(node(1), AGENT_3);
    const grant = await call(node(1).url, `/v1/runs/${onB}/capabilities`, OPERATOR, {
      toolClass: "shell",
      action: "exec",
      maxUses: 100,
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const withToken = () =>
      call(node(1).url, "/v1/decide", AGENT_3, { ...echo(onB), capability: grant.body.token });
    expect((await withToken()).body.decision).toBe("allow");
    // Three policy violations on A: 0.5 × 0.64³ ≈ 0.13, under the revocation floor (0.2), not
    // under the quarantine floor (0.05).
    const onA = await startRun(node(0), AGENT_3);
    for (let i = 0; i < 3; i++)
      expect((await call(node(0).url, "/v1/decide", AGENT_3, echo(onA, "rm -rf /"))).body.decision).toBe(
        "deny",
      );
    const row = await rowWhere("demo-agent-3", (r) => r.score < 0.2);
    expect(row.status).toBe("active");
    // From the COMMIT on: B's decisions with the token until the first refusal (the window).
    let slipped = 0;
    let answer: Answer = { status: 0, body: {} };
    for (let i = 0; i < 40; i++) {
      answer = await withToken();
      if (answer.body.decision !== "allow") break;
      slipped++;
    }
    expect(answer.body).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_REVOKED"] });
    expect(slipped).toBeLessThanOrEqual(2);
    // The agent itself is not quarantined: without the token its echo is still allowed.
    expect((await call(node(1).url, "/v1/decide", AGENT_3, echo(onB))).body.decision).toBe("allow");
  });

  it("trust events decided on three replicas at once on one row lose none", async () => {
    const runs = await Promise.all(nodes.map((n) => startRun(n, AGENT_2)));
    const perNode = 12;
    const answers = await Promise.all(
      nodes.flatMap((n, i) =>
        Array.from({ length: perNode }, (_, k) =>
          call(n.url, "/v1/execute", AGENT_2, echo(runs[i] as string, `event ${k}`)),
        ),
      ),
    );
    const executed = answers.filter(
      (a) => a.status === 200 && (a.body.result as { ok?: boolean } | undefined)?.ok === true,
    );
    expect(executed).toHaveLength(3 * perNode);
    // Each executed call's outcome is one task_success on the row (applied after the answer).
    const row = await rowWhere("demo-agent-2", (r) => r.interactions >= 3 * perNode);
    expect(row.interactions).toBe(3 * perNode);
    // Each change is journaled after its COMMIT: wait for the last entry, then count.
    const stepCount = async () =>
      (
        await db.query(
          "SELECT 1 FROM journal_entries WHERE type = 'warden.trust.step' AND body::jsonb->>'subject' = 'demo-agent-2'",
        )
      ).rowCount ?? 0;
    let steps = await stepCount();
    for (let i = 0; i < 100 && steps < 3 * perNode; i++) {
      await pause(100);
      steps = await stepCount();
    }
    expect(steps).toBe(3 * perNode);
    // Every replica journaled its own share: the events were decided on all three.
    const byNode = await db.query<{ node: string }>(
      "SELECT DISTINCT node FROM journal_entries WHERE type = 'warden.trust.step' AND body::jsonb->>'subject' = 'demo-agent-2'",
    );
    expect(byNode.rowCount).toBe(3);
  });
});
