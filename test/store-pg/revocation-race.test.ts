// Issue 36, "protective state durable before the answer", for APAE trust: two `warden sidecar`
// processes with APAE on one real PostgreSQL; replica A reaches the database through the pause
// proxy (pause-proxy.ts), which holds A's trust update back. The policy denial that drives the
// agent under the revocation floor is answered only once the revocation is in the shared store,
// so the client's very next call on replica B, with a capability token B granted before, is
// refused and executes nothing, although B has not yet heard of the change (no notification
// window). On the old main the answer left first and B executed the call.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { migrate } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import {
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

let server: PostgresServer;
let db: pg.Pool;
let proxy: PauseProxy;
let a: Node;
let b: Node;

beforeAll(async () => {
  const dir = deployCopy();
  const config = parse(readFileSync(join(dir, "sidecar.yaml"), "utf8")) as Record<string, unknown>;
  // Action ECTs at L1 (no key), no tick; the quarantine floor under the revocation floor (0.2),
  // so three policy violations (0.5 × 0.64³ ≈ 0.13) revoke without quarantining.
  config.apae = { ectLevel: "L1", tickMs: 3_600_000, settings: { quarantine_floor: 0.05 } };
  writeFileSync(join(dir, "sidecar.yaml"), stringify(config));
  server = await startPostgres();
  const dbUrl = await freshDatabase(server.connectionString);
  db = poolOf(dbUrl, 2);
  await migrate(db);
  proxy = await startPauseProxy(dbUrl);
  a = await startNode(dir, "a", proxy.url);
  b = await startNode(dir, "b", dbUrl);
}, 120_000);

afterAll(async () => {
  for (const n of [a, b]) if (n !== undefined) await stopNode(n);
  proxy?.thaw();
  await proxy?.close();
  await db?.end();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ok = (x: Answer) => x.status === 200 && (x.body.result as { ok?: boolean } | undefined)?.ok === true;

async function score(subject: string): Promise<number> {
  const r = await db.query<{ row: string }>(
    "SELECT row FROM trust_rows WHERE truster = 'deployment' AND subject = $1",
    [subject],
  );
  const text = r.rows[0]?.row;
  return text === undefined ? 1 : (JSON.parse(text) as { score: number }).score;
}

describe("APAE revocation durable before the answer", () => {
  it("trust revocation race: the call on replica B right after the answer that revoked the agent on A is refused, its token void, nothing executed", async () => {
    const onB = await startRun(b, AGENT_3);
    const grant = await call(b.url, `/v1/runs/${onB}/capabilities`, OPERATOR, { tool: "echo", maxUses: 100 });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    const withToken = (message: string) =>
      call(b.url, "/v1/execute", AGENT_3, { ...echo(onB, message), capability: grant.body.token });
    expect(ok(await withToken("before"))).toBe(true);
    // Two policy violations on A (0.5 × 0.64² ≈ 0.205: still above the floor), applied.
    const onA = await startRun(a, AGENT_3);
    for (let k = 0; k < 2; k++)
      expect((await call(a.url, "/v1/execute", AGENT_3, echo(onA, `rm -rf /${k}`))).body.decision).toBe(
        "deny",
      );
    for (let i = 0; i < 100 && (await score("demo-agent-3")) > 0.21; i++) await sleep(100);
    expect(await score("demo-agent-3")).toBeLessThan(0.21);
    // The third crosses the revocation floor; A's trust update is held back by the proxy.
    const frozen = proxy.freezeOn(/trust_rows/, "before");
    let right: Answer | undefined;
    const crossing = call(a.url, "/v1/execute", AGENT_3, echo(onA, "rm -rf /last")).then(async (x) => {
      right = await withToken("right after the answer"); // the client's very next call, on B
      return x;
    });
    await frozen;
    await Promise.race([crossing, sleep(1500)]); // an answer sent before the update lands here
    proxy.thaw();
    expect((await crossing).body.decision).toBe("deny");
    expect(right, "B answered").toBeDefined();
    const next = right as Answer;
    expect(next.body, JSON.stringify(next.body)).toMatchObject({
      decision: "deny",
      reasonCodes: ["ERR_CAPABILITY_REVOKED"],
    });
    // The harm did not happen: B executed nothing for that call (no result entry for it).
    expect(ok(next)).toBe(false);
    const results = await db.query<{ body: string }>(
      "SELECT body FROM journal_entries WHERE run_id = $1 AND type = 'warden.gate.result'",
      [onB],
    );
    expect(results.rowCount).toBe(1); // the call made before the revocation only
  }, 90_000);
});
