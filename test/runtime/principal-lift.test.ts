// Issue 37, the runtime's principal quarantine lift over a principal state store two
// replicas share (distributed mode's port): an operator's manual quarantine is listed with
// its kind; a lift signed with a configured approver key (`approvers:`) ends it on replica A
// and, verified again, on replica B; a record forged into the shared state — signed by a key
// no approver holds — lifts nothing on B. The SQLite store lists its quarantined principals.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryPrincipalStateStore, type PrincipalStateStore } from "../../src/context/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime, signPrincipalLift } from "../../src/runtime/index.js";
import { SqlitePrincipalStateStore } from "../../src/runtime/principal-store.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;
const APPROVER = generateKeyPair("ed25519");
const STRANGER = generateKeyPair("ed25519");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();

async function replica(shared: PrincipalStateStore): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-principal-lift-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  return composeRuntime(
    {
      policy: [join(dir, "policy.yaml")],
      journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
      gate: { principals: { "agent-1": { id: "agent-1", roles: ["agent"] } }, requireContract: false },
      approvers: { alice: [pem(APPROVER)] },
    },
    { principalStore: shared },
  );
}

async function write(rt: Runtime) {
  const run = await rt.startRun("agent-1");
  const o = await rt.gate.authorize({
    principalId: "agent-1",
    runId: run.runId,
    toolClass: "file",
    action: "write",
    parameters: {},
  });
  return o.decision;
}

const lift = (quarantineId: string, key: KeyPair) =>
  signPrincipalLift(
    {
      principal: "agent-1",
      quarantine_id: quarantineId,
      approver_id: "alice",
      issued_at: new Date().toISOString(),
      reason: "the operator's concern was resolved",
    },
    key,
  );

describe("the principal quarantine lift across replicas sharing principal state", () => {
  it("a manual quarantine is listed; A's signed lift ends it on A and, verified again, on B", async () => {
    const shared = new MemoryPrincipalStateStore();
    const a = await replica(shared);
    const b = await replica(shared);
    try {
      (await a.startRun("agent-1")).quarantine("the operator saw a suspicious plan");
      await a.sessions.principals.flush();
      expect(await write(b)).toBe("deny");
      const [q] = await b.quarantines.list();
      expect(q).toMatchObject({ kind: "principal", principalId: "agent-1", trigger: "manual" });
      // A key no approver holds, presented by alice: refused, nothing changes.
      const forged = await a.quarantines.lift(lift(q?.quarantineId ?? "", STRANGER), "alice");
      expect(forged).toMatchObject({ ok: false, code: "ERR_TRUST_LIFT_APPROVER_UNKNOWN" });
      const r = await a.quarantines.lift(lift(q?.quarantineId ?? "", APPROVER), "alice");
      expect(r).toMatchObject({ ok: true, principalId: "agent-1", trigger: "manual", approver: "alice" });
      expect(await write(a)).toBe("allow");
      expect(await b.quarantines.adopt("agent-1")).toMatchObject({ lifted: true });
      expect(await write(b)).toBe("allow");
      const onB = await b.store.query({ type: "warden.principal.quarantine_lifted" });
      expect(onB.at(-1)?.body).toMatchObject({ via: "shared_state", approver: "alice", trigger: "manual" });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a lift forged into the shared state (a stranger's key) lifts nothing on B", async () => {
    const shared = new MemoryPrincipalStateStore();
    const a = await replica(shared);
    const b = await replica(shared);
    try {
      (await a.startRun("agent-1")).quarantine("the operator saw a suspicious plan");
      await a.sessions.principals.flush();
      expect(await write(b)).toBe("deny");
      const [q] = await b.quarantines.list();
      await shared.save({
        principalId: "agent-1",
        lift: { kind: "principal_lift", signed: lift(q?.quarantineId ?? "", STRANGER) },
      });
      expect(await b.quarantines.adopt("agent-1")).toMatchObject({ lifted: false });
      expect(await write(b)).toBe("deny");
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("the SQLite store lists the quarantined principals only", () => {
    const store = SqlitePrincipalStateStore.open(":memory:");
    const trigger = { reason: "r", counters: {} as never, matchedEvents: [], at: "2026-01-01T00:00:00.000Z" };
    store.save({
      principalId: "p1",
      quarantine: { ...trigger, type: "behavioral_rule", ruleId: "x", runId: "r1" },
    });
    store.save({ principalId: "p2", quarantine: { ...trigger, type: "denial_threshold", runId: "r2" } });
    store.save({ principalId: "p3" });
    expect(store.listQuarantined(10).map((r) => [r.principalId, r.quarantine?.type])).toEqual([
      ["p1", "behavioral_rule"],
      ["p2", "denial_threshold"],
    ]);
    store.close();
  });
});
