// The signed early lift across two replicas on one real PostgreSQL (distributed mode): a
// trust quarantine entered on replica A reaches replica B's cache through the principal
// state notification; an approver's signed lift presented to A is saved with its record,
// and B — notified — verifies the record itself and releases the agent there too.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { APAE_LIFT_EVENT, composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { migrate } from "../../src/store-pg/index.js";
import { signLift } from "../../src/trust/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { freshDatabase, poolOf } from "../store-pg/helpers.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
  - { id: no-shell, name: no shell, priority: 100, match: { toolClass: shell }, decision: deny, reason: s }
`;
const APPROVER = generateKeyPair("ed25519");
const JOURNAL_KEY = generateKeyPair("ed25519");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();

let server: PostgresServer;
let url: string;
const open: Runtime[] = [];

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const pool = poolOf(url, 2);
  await migrate(pool);
  await pool.end();
}, 120_000);

afterAll(async () => {
  for (const rt of open) await rt.close();
  await server?.stop();
});

async function replica(name: string): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), `warden-apae-lift-pg-${name}-`));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const rt = await composeRuntime({
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer: JOURNAL_KEY },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: 100 } },
      requireContract: false,
    },
    approvers: { "alice-approver": [pem(APPROVER)] },
    apae: { profile: "relaxed" },
    store: { kind: "postgres", url, pool: { max: 3 }, node: name },
  });
  open.push(rt);
  return rt;
}

async function write(rt: Runtime, runId: string): Promise<string> {
  const o = await rt.gate.authorize({
    principalId: "agent-1",
    runId,
    toolClass: "file",
    action: "write",
    parameters: {},
  });
  return o.decision;
}

async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a signed lift on one replica releases the agent on the other", () => {
  it("B holds A's trust quarantine, then releases it once it has verified A's signed lift", async () => {
    const a = await replica("node-a");
    const b = await replica("node-b");
    const onB = (await b.startRun("agent-1")).runId;
    expect(await write(b, onB)).toBe("allow");
    for (let i = 0; i < 10 && a.apae?.viewOf("agent-1").status !== "quarantined"; i++) {
      const run = await a.startRun("agent-1");
      await a.gate.authorize({
        principalId: "agent-1",
        runId: run.runId,
        toolClass: "shell",
        action: "exec",
      });
      await a.apae?.settled();
    }
    await a.sessions.principals.flush();
    await until(() => b.sessions.principals.quarantineOf("agent-1") !== undefined);
    expect(await write(b, onB)).toBe("deny");

    const r = await a.apae?.lift(
      signLift(
        {
          scope: "apae:quarantine_lift",
          truster: a.apae?.engine.config.self_id ?? "",
          subject: "agent-1",
          quarantine_count: a.apae?.viewOf("agent-1").quarantineCount ?? 0,
          issued_at: isoTime(Date.now() - 1000),
          reason: "false positive",
        },
        APPROVER,
      ),
    );
    expect(r).toMatchObject({ ok: true, principalLifted: true });
    await until(() => b.sessions.principals.quarantineOf("agent-1") === undefined);
    expect(await write(b, onB)).toBe("allow");
    const via = async (rt: typeof a) =>
      (await rt.store.query({ type: APAE_LIFT_EVENT })).map((e) => (e.body as { via: string }).via);
    // Each replica journals on its own chain: A the presented lift, B its adoption of it.
    expect(await via(a)).toEqual(["presented"]);
    expect(await via(b)).toEqual(["shared_state"]);
  }, 60_000);
});
