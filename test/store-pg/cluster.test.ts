// Distributed mode end to end: three `warden sidecar` processes started from the
// docker-compose file's configuration (deploy/sidecar.yaml, no containers) on one real
// PostgreSQL, written as the failures and attacks a fleet must survive.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Keyring, loadPublicKeyFile } from "../../src/crypto/index.js";
import { type ChainsReport, verifyChains } from "../../src/journal/index.js";
import { chainInputs, migrate } from "../../src/store-pg/index.js";
import { runCli } from "../helpers/cli.js";
import type { PostgresServer } from "../helpers/postgres.js";
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
  startCluster,
  startNode,
  startRun,
  stopCluster,
} from "./cluster-helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let dbUrl: string;
let dir: string;
let db: pg.Pool;
let nodes: Node[] = [];
let cluster: Cluster | undefined;

beforeAll(async () => {
  dir = deployCopy();
  cluster = await startCluster(dir);
  ({ server, dbUrl, db, nodes } = cluster);
}, 120_000);

afterAll(() => stopCluster(cluster));

const node = (i: number) => nodes[i] as Node;
/** A replica's name, and so its chain's: deploy/sidecar.yaml leaves store.node to its default host:pid. */
const nodeName = (n: Node) => `${hostname()}:${n.child.pid}`;

/** Every (chain, seq) the answers acknowledged: each replica journals on its own chain. */
const ackedEntries = (answers: Answer[]) =>
  answers
    .filter((a) => a.status === 200)
    .flatMap((a) =>
      ((a.body.journalSeqs as number[] | undefined) ?? []).map(
        (seq) => `${a.body.journalChain as string}#${seq}`,
      ),
    );

/** Every chain of the database, verified together (each alone, and every checkpoint's references). */
async function verifyChain(): Promise<ChainsReport> {
  const pool = poolOf(dbUrl, 2);
  try {
    const keys = new Keyring([loadPublicKeyFile(join(dir, "keys/journal.pub.pem"))]);
    return await verifyChains(await chainInputs(pool), keys);
  } finally {
    await pool.end();
  }
}

async function storedEntries(acked: string[]): Promise<number> {
  const pairs = acked.map((k) => [k.slice(0, k.lastIndexOf("#")), Number(k.slice(k.lastIndexOf("#") + 1))]);
  const r = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM journal_entries e JOIN unnest($1::text[], $2::bigint[]) AS a(chain, seq) USING (chain, seq)",
    [pairs.map((p) => p[0]), pairs.map((p) => p[1])],
  );
  return Number(r.rows[0]?.n);
}

describe("three replicas from deploy/sidecar.yaml", () => {
  it("--check validates the store; a replica refuses an older schema and an unreachable database, coded", async () => {
    process.env.WARDEN_DB_URL = dbUrl;
    try {
      const ok = await runCli("sidecar", "--config", join(dir, "sidecar.yaml"), "--check", "--json");
      expect(ok.code, ok.out).toBe(0);
    } finally {
      delete process.env.WARDEN_DB_URL;
    }
    const old = await freshDatabase(server.connectionString);
    const p = poolOf(old, 1);
    await migrate(p, 1);
    await p.end();
    const refused = await startNode(dir, "old", old).catch((e: unknown) => e as Error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/ERR_RUNTIME_STORE_SCHEMA/);
    const unreachable = await startNode(dir, "down", "postgres://postgres@127.0.0.1:1/none").catch(
      (e: unknown) => e as Error,
    );
    expect((unreachable as Error).message).toMatch(/ERR_RUNTIME_STORE_UNAVAILABLE/);
  });

  // Its 70 refusals also quarantine demo-agent (denialThreshold): later tests use demo-agent-2 and -3.
  it("a budget of 50 hammered with 120 executions through all three nodes executes at most 50", async () => {
    const runId = await startRun(node(0));
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        call(node(i % 2 === 0 ? 0 : 1 + ((i >> 1) % 2)).url, "/v1/execute", AGENT, echo(runId)),
      ),
    );
    const executed = answers.filter(
      (a) => a.status === 200 && (a.body.result as { ok?: boolean } | undefined)?.ok,
    );
    expect(executed.length).toBeLessThanOrEqual(50);
    expect(executed.length).toBe(50);
    // Another replica does not serve a run its owner serves (runs across replicas,
    // docs/distributed.md): 421 naming the owner, never a second budget.
    const elsewhere = answers.filter((a) => a.status === 421);
    expect(elsewhere.length).toBe(60);
    expect(elsewhere.every((a) => codeOf(a) === "ERR_RUN_ELSEWHERE")).toBe(true);
    const allows = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.decision' AND decision = 'allow'",
      [runId],
    );
    expect(Number(allows.rows[0]?.n)).toBe(50);
  });

  it("kill -9 of one node during load loses no acknowledged entry and the chain verifies", async () => {
    const runs = await Promise.all(nodes.map((n) => startRun(n, AGENT_2)));
    const load = nodes.flatMap((n, i) =>
      Array.from({ length: 30 }, (_, k) =>
        call(n.url, "/v1/execute", AGENT_2, echo(runs[i] as string, `m${k}`)),
      ),
    );
    // Kill node b once some of its calls were acknowledged.
    const before = await call(node(1).url, "/v1/execute", AGENT_2, echo(runs[1] as string));
    node(1).child.kill("SIGKILL");
    // That acknowledged call counts too: under load it may be answered before any of the 30.
    const answers = [...(await Promise.all(load)), before];
    expect((await node(1).exited).signal).toBe("SIGKILL");
    const seqs = ackedEntries(answers);
    // Acknowledged by all three replicas, each on its own chain.
    expect(new Set(seqs.map((k) => k.split("#")[0])).size).toBe(3);
    expect(answers.filter((a) => (a.body.result as { ok?: boolean } | undefined)?.ok).length).toBeGreaterThan(
      0,
    );
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(await storedEntries(seqs)).toBe(seqs.length);
    const report = await verifyChain();
    expect(report.ok, JSON.stringify(report)).toBe(true);
    // The killed replica's chain is there, cut where it was killed, and still verifies.
    expect(report.chains.map((c) => c.name)).toEqual(expect.arrayContaining(nodes.map((n) => nodeName(n))));
    nodes[1] = await startNode(dir, "b", dbUrl);
  });

  it("a PostgreSQL restart during load fails in-flight calls closed with a coded 503, then service resumes", async () => {
    if (server.restart === undefined) return expect(server.source).toBe("url");
    const runs = await Promise.all(nodes.map((n) => startRun(n, AGENT_2)));
    // Calls keep arriving on every node for as long as the restart takes.
    let restarted = false;
    const restart = server.restart().finally(() => {
      restarted = true;
    });
    const answers: Answer[] = [];
    while (!restarted) {
      const wave = nodes.map((n, i) => call(n.url, "/v1/decide", AGENT_2, echo(runs[i] as string, "during")));
      answers.push(...(await Promise.all(wave)));
    }
    await restart;
    for (const n of nodes) expect(n.child.exitCode, n.output()).toBeNull();
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    for (const a of answers) {
      expect([200, 503], JSON.stringify(a)).toContain(a.status);
      if (a.status === 503)
        expect(["ERR_SERVER_JOURNAL_UNAVAILABLE", "ERR_RUNTIME_STORE_UNAVAILABLE"]).toContain(codeOf(a));
    }
    // Service resumes without operator action: each node answers again (pools reconnect).
    for (const [i, n] of nodes.entries()) {
      let last: Answer = { status: 0, body: {} };
      for (let attempt = 0; attempt < 50 && last.status !== 200; attempt++) {
        last = await call(n.url, "/v1/decide", AGENT_2, echo(runs[i] as string, "after"));
        if (last.status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(last.status, JSON.stringify(last.body)).toBe(200);
    }
    const seqs = ackedEntries(answers);
    expect(await storedEntries(seqs)).toBe(seqs.length);
    const report = await verifyChain();
    expect(report.ok, JSON.stringify(report)).toBe(true);
  });

  it("a quarantine entered on node A is enforced on node B: its open run once the notification arrives, and new runs", async () => {
    const openOnB = await startRun(node(1), AGENT_3);
    expect((await call(node(1).url, "/v1/decide", AGENT_3, echo(openOnB))).body.decision).toBe("allow");
    const onA = await startRun(node(0), AGENT_3);
    for (let i = 0; i < 5; i++) await call(node(0).url, "/v1/decide", AGENT_3, echo(onA, "rm -rf /"));
    const stored = await db.query(
      "SELECT 1 FROM principal_state WHERE principal_id = 'demo-agent-3' AND record::jsonb ? 'quarantine'",
    );
    expect(stored.rowCount).toBe(1);
    // The run already open on B (checked first: a new run on B would load the state itself)
    // is denied once the NOTIFY (or the 1 s poll) arrived.
    // Fewer attempts than the run's budget (50), so only the quarantine can deny it.
    let answer: Answer = { status: 0, body: { decision: "allow" } };
    for (let attempt = 0; attempt < 40 && answer.body.decision === "allow"; attempt++) {
      answer = await call(node(1).url, "/v1/decide", AGENT_3, echo(openOnB));
      if (answer.body.decision === "allow") await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer.body).toMatchObject({ decision: "deny", reasonCodes: ["quarantined"] });
    // A run started on B after the quarantine: its principal's state is loaded first.
    const fresh = await call(node(1).url, "/v1/runs", AGENT_3, {});
    if (fresh.status === 201) {
      const d = await call(node(1).url, "/v1/decide", AGENT_3, echo(fresh.body.runId as string));
      expect(d.body).toMatchObject({ decision: "deny", reasonCodes: ["quarantined"] });
    } else expect(fresh.status).toBeGreaterThanOrEqual(400);
    expect(readFileSync(join(dir, "sidecar.yaml"), "utf8")).toMatch(/url: env:WARDEN_DB_URL/);
  });
});
