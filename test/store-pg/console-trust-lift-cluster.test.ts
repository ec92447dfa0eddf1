// Issue 37: "a lift signed in one replica's console fails closed on another". Two sidecars
// with APAE trust on one real PostgreSQL: policy violations on replica A quarantine the agent
// (its trust and its principal, held on B too); the approver lifts it in A's console with a
// browser key registered there; replica B verifies the saved record with the shared browser
// key and releases the agent. Before issue 37, B knew only configured approver keys and kept
// the agent quarantined.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/store-pg/index.js";
import { signLift } from "../../src/trust/index.js";
import {
  approverWithKey,
  type ConsoleSidecar,
  quarantineAgent,
  startConsoleSidecar,
  TOKENS,
} from "../console/harness.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { until } from "../server/harness.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let a: ConsoleSidecar;
let b: ConsoleSidecar;

beforeAll(async () => {
  server = await startPostgres();
  const url = await freshDatabase(server.connectionString);
  const pool = poolOf(url, 2);
  await migrate(pool);
  await pool.end();
  const replica = (node: string) =>
    startConsoleSidecar(
      {},
      {
        apae: { settings: { alpha: 0.01 } },
        store: { kind: "postgres", url, node, approvalPollMs: 200, pool: { max: 4 } },
      },
    );
  a = await replica("a");
  b = await replica("b");
}, 180_000);

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await server?.stop();
});

describe("a trust lift signed in replica A's console", () => {
  it("is verified and honoured on replica B with the shared browser key", async () => {
    await quarantineAgent(a, TOKENS.agent);
    await until(() =>
      b.server.runtime.sessions.principals.quarantineOf("agent-a")?.type === "trust_score" ? true : undefined,
    );
    const { c: alice, key } = await approverWithKey(a.url, TOKENS.approver);
    const view = a.server.runtime.apae?.viewOf("agent-a");
    const signed = signLift(
      {
        scope: "apae:quarantine_lift",
        truster: view?.truster ?? "",
        subject: "agent-a",
        quarantine_count: view?.quarantineCount ?? 0,
        issued_at: new Date().toISOString(),
        reason: "violations reviewed, the agent's tool list fixed",
      },
      key,
    );
    const r = await alice.request("/quarantine/lift", {
      form: { csrf: alice.csrf ?? "", lift: JSON.stringify(signed.lift), signature: signed.signature },
    });
    expect(r.text).toContain("is lifted");
    await until(
      () => (b.server.runtime.sessions.principals.quarantineOf("agent-a") === undefined ? true : undefined),
      15_000,
    );
    const onB = await b.server.runtime.store.query({ type: "warden.apae.lift" });
    expect(onB.some((e) => e.body.via === "shared_state" && e.body.approver === "alice")).toBe(true);
  }, 120_000);
});
