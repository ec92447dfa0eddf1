// The signed early lift across replicas sharing one principal state store (distributed
// mode's port): replica A lifts with an approver's record, saved with the lift; replica B,
// told the principal changed (the PostgreSQL watcher's notification), verifies that record
// itself before dropping the quarantine it holds. A record forged into the shared state, one
// for another principal, or one for an earlier quarantine episode of B's own table lifts nothing.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryPrincipalStateStore, type PrincipalStateStore } from "../../src/context/index.js";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import { APAE_LIFT_EVENT, composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { type SignedLift, signLift } from "../../src/trust/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
  - { id: no-shell, name: no shell, priority: 100, match: { toolClass: shell }, decision: deny, reason: s }
`;
const APPROVER = generateKeyPair("ed25519");
const STRANGER = generateKeyPair("ed25519");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();

async function replica(shared: PrincipalStateStore): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-apae-lift-shared-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  return composeRuntime(
    {
      policy: [join(dir, "policy.yaml")],
      journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
      gate: {
        principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
        context: { quarantine: { denialThreshold: 100 } },
        requireContract: false,
      },
      approvers: { "alice-approver": [pem(APPROVER)] },
      apae: { profile: "relaxed" },
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

async function quarantine(rt: Runtime): Promise<void> {
  for (let i = 0; i < 10 && rt.apae?.viewOf("agent-1").status !== "quarantined"; i++) {
    const run = await rt.startRun("agent-1");
    await rt.gate.authorize({ principalId: "agent-1", runId: run.runId, toolClass: "shell", action: "exec" });
    await rt.apae?.settled();
  }
  expect(rt.apae?.viewOf("agent-1").status).toBe("quarantined");
}

const record = (rt: Runtime, over: Record<string, unknown> = {}) => ({
  scope: "apae:quarantine_lift",
  truster: rt.apae?.engine.config.self_id ?? "",
  subject: "agent-1",
  quarantine_count: rt.apae?.viewOf("agent-1").quarantineCount ?? 0,
  issued_at: isoTime(Date.now() - 1000),
  reason: "false positive",
  ...over,
});

/** Two replicas on one shared store; A quarantined the agent, B holds it (loaded as the watcher does). */
async function cluster() {
  const shared = new MemoryPrincipalStateStore();
  const a = await replica(shared);
  const b = await replica(shared);
  await quarantine(a);
  await a.sessions.principals.flush();
  await b.sessions.principals.load("agent-1");
  expect(await write(b)).toBe("deny");
  return { shared, a, b };
}

async function stillHeld(b: Runtime, why: RegExp | string) {
  const r = await b.apae?.adoptLift("agent-1");
  expect(r?.lifted).toBe(false);
  expect(r?.lifted === false ? r.why : "").toMatch(why);
  expect(await write(b)).toBe("deny");
  expect(await b.store.query({ type: APAE_LIFT_EVENT })).toHaveLength(0);
}

describe("a signed lift reaches every replica through the shared principal state", () => {
  it("replica B verifies the lift replica A saved and releases the agent, journaled", async () => {
    const { a, b } = await cluster();
    expect((await a.apae?.lift(signLift(record(a), APPROVER)))?.ok).toBe(true);
    expect(await write(a)).toBe("allow");
    expect(await write(b)).toBe("deny");
    const r = await b.apae?.adoptLift("agent-1");
    expect(r?.lifted).toBe(true);
    expect(await write(b)).toBe("allow");
    const [entry] = await b.store.query({ type: APAE_LIFT_EVENT });
    expect(entry?.body).toMatchObject({
      subject: "agent-1",
      via: "shared_state",
      approver: "alice-approver",
    });
    await a.close();
    await b.close();
  });

  it("a lift forged into the shared state (signed by no approver) releases nothing", async () => {
    const { shared, a, b } = await cluster();
    await shared.save({ principalId: "agent-1", lift: signLift(record(a), STRANGER) });
    await stillHeld(b, "ERR_TRUST_LIFT_APPROVER_UNKNOWN");
    const real = signLift(record(a), APPROVER);
    const tampered: SignedLift = { ...real, lift: { ...real.lift, reason: "altered after signing" } };
    await shared.save({ principalId: "agent-1", lift: tampered });
    await stillHeld(b, "ERR_TRUST_LIFT_SIGNATURE_INVALID");
    await a.close();
    await b.close();
  });

  it("a cleared row without a signed record, or with another principal's lift, releases nothing", async () => {
    const { shared, a, b } = await cluster();
    await shared.save({ principalId: "agent-1" });
    await stillHeld(b, /no lift/);
    await shared.save({
      principalId: "agent-1",
      lift: signLift(record(a, { subject: "agent-2" }), APPROVER),
    });
    await stillHeld(b, /not a signed lift of this principal/);
    await a.close();
    await b.close();
  });

  it("a signed lift naming another quarantine episode than B's own trust table keeps the agent held", async () => {
    const shared = new MemoryPrincipalStateStore();
    const b = await replica(shared);
    await quarantine(b);
    expect(b.apae?.viewOf("agent-1").quarantineCount).toBe(1);
    // A genuine approver signature for this principal, but for episode 2: stale on B's table.
    await shared.save({
      principalId: "agent-1",
      lift: signLift(record(b, { quarantine_count: 2 }), APPROVER),
    });
    await stillHeld(b, "ERR_TRUST_LIFT_STALE");
    await b.close();
  });
});
