// The signed early lift end to end (APAE §Quarantine Expiry and Recovery): an approver's
// signed HITL override of scope apae:quarantine_lift, presented to `runtime.apae.lift`,
// ends the trust quarantine AND the principal quarantine the Gate enforces, journaled
// before it resolves. Forged, unsigned, foreign, replayed and re-addressed records are
// refused with their codes and the agent stays held.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair, verifyCanonical } from "../../src/crypto/index.js";
import { APAE_LIFT_EVENT, composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { signLift, TRUST_STEP_EVENT } from "../../src/trust/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
  - { id: no-shell, name: no shell, priority: 100, match: { toolClass: shell }, decision: deny, reason: s }
`;
const APPROVER = generateKeyPair("ed25519");
const OTHER_APPROVER = generateKeyPair("ed25519");
const STRANGER = generateKeyPair("ed25519");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();

async function deployment(): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-apae-lift-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  return composeRuntime({
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: 100 } },
      requireContract: false,
    },
    approvers: { "alice-approver": [pem(APPROVER)], "bob-approver": [pem(OTHER_APPROVER)] },
    apae: { profile: "relaxed" },
  });
}

async function call(rt: Runtime, toolClass: string, action: string) {
  const run = await rt.startRun("agent-1");
  return rt.gate.authorize({ principalId: "agent-1", runId: run.runId, toolClass, action, parameters: {} });
}

/** Denied shell calls (deny rule: policy_violation) until the agent is quarantined. */
async function quarantine(rt: Runtime): Promise<void> {
  for (let i = 0; i < 10 && rt.apae?.viewOf("agent-1").status !== "quarantined"; i++) {
    await call(rt, "shell", "exec");
    await rt.apae?.settled();
  }
  expect(rt.apae?.viewOf("agent-1").status).toBe("quarantined");
  expect(rt.sessions.principals.quarantineOf("agent-1")?.type).toBe("trust_score");
  expect((await call(rt, "file", "write")).decision).toBe("deny");
}

const record = (rt: Runtime, over: Record<string, unknown> = {}) => ({
  scope: "apae:quarantine_lift",
  truster: rt.apae?.engine.config.self_id ?? "",
  subject: "agent-1",
  quarantine_count: rt.apae?.viewOf("agent-1").quarantineCount ?? 0,
  issued_at: isoTime(Date.now() - 1000),
  reason: "false positive: a misconfigured deny rule",
  ...over,
});

async function refusedAndHeld(rt: Runtime, input: unknown, code: string, by?: string) {
  const r = await rt.apae?.lift(input, by === undefined ? {} : { by });
  expect(r).toMatchObject({ ok: false, code });
  expect(rt.apae?.viewOf("agent-1").status).toBe("quarantined");
  expect(rt.sessions.principals.quarantineOf("agent-1")).toBeDefined();
  expect((await call(rt, "file", "write")).decision).toBe("deny");
  expect(await rt.store.query({ type: APAE_LIFT_EVENT })).toHaveLength(0);
}

describe("runtime.apae.lift: a signed early lift", () => {
  it("an approver's signed lift ends both quarantines, journaled before it resolves; the agent acts again", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const signed = signLift(record(rt), APPROVER);
    const r = await rt.apae?.lift(signed);
    expect(r).toMatchObject({
      ok: true,
      subject: "agent-1",
      approver: "alice-approver",
      principalLifted: true,
    });
    expect(rt.apae?.viewOf("agent-1")).toMatchObject({ status: "active", score: 0.5 });
    expect(rt.sessions.principals.quarantineOf("agent-1")).toBeUndefined();
    expect((await call(rt, "file", "write")).decision).toBe("allow");
    const [entry] = await rt.store.query({ type: APAE_LIFT_EVENT });
    expect(entry?.seq).toBe(r?.ok ? r.seq : -1);
    const body = entry?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      subject: "agent-1",
      principal_lifted: true,
      principal_held: null,
      via: "presented",
    });
    // The journaled record re-verifies under the approver's key.
    const { approver: _a, signature, principal_lifted: _l, principal_held: _h, via: _v, ...fields } = body;
    const lift = { scope: "apae:quarantine_lift", ...fields };
    expect(verifyCanonical(APPROVER.publicKey, lift, signature as string)).toBe(true);
    const steps = (await rt.store.query({ type: TRUST_STEP_EVENT })).map(
      (e) => (e.body as { kind: string }).kind,
    );
    expect(steps).toContain("quarantine_lifted");
    await rt.close();
  });

  it("an unsigned lift is refused (ERR_TRUST_LIFT_UNSIGNED) and the agent stays quarantined", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const { signature: _s, ...unsigned } = signLift(record(rt), APPROVER);
    await refusedAndHeld(rt, unsigned, "ERR_TRUST_LIFT_UNSIGNED");
    await refusedAndHeld(rt, { ...unsigned, signature: "" }, "ERR_TRUST_LIFT_UNSIGNED");
    await rt.close();
  });

  it("a lift signed by a key no approver holds is refused", async () => {
    const rt = await deployment();
    await quarantine(rt);
    await refusedAndHeld(rt, signLift(record(rt), STRANGER), "ERR_TRUST_LIFT_APPROVER_UNKNOWN");
    await rt.close();
  });

  it("a lift carrying an approver's key id but signed by another key is refused", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const real = signLift(record(rt), APPROVER);
    const forged = { ...real, signature: signLift(record(rt), STRANGER).signature };
    await refusedAndHeld(rt, forged, "ERR_TRUST_LIFT_SIGNATURE_INVALID");
    await rt.close();
  });

  it("a signed lift re-addressed to another subject does not verify", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const other = signLift(record(rt, { subject: "agent-2" }), APPROVER);
    const readdressed = { ...other, lift: { ...other.lift, subject: "agent-1" } };
    await refusedAndHeld(rt, readdressed, "ERR_TRUST_LIFT_SIGNATURE_INVALID");
    await rt.close();
  });

  it("a lift for another truster's table is refused", async () => {
    const rt = await deployment();
    await quarantine(rt);
    await refusedAndHeld(rt, signLift(record(rt, { truster: "peer-x" }), APPROVER), "ERR_TRUST_LIFT_INVALID");
    await rt.close();
  });

  it("an approver presenting another approver's signed lift is refused", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const bobs = signLift(record(rt), OTHER_APPROVER);
    await refusedAndHeld(rt, bobs, "ERR_TRUST_LIFT_APPROVER_UNKNOWN", "alice-approver");
    await rt.close();
  });

  it("a replayed lift is refused: at once (not quarantined) and against the next quarantine (stale)", async () => {
    const rt = await deployment();
    await quarantine(rt);
    const first = signLift(record(rt), APPROVER);
    expect((await rt.apae?.lift(first))?.ok).toBe(true);
    expect(await rt.apae?.lift(first)).toMatchObject({ ok: false, code: "ERR_TRUST_NOT_QUARANTINED" });
    await quarantine(rt);
    expect(rt.apae?.viewOf("agent-1").quarantineCount).toBe(2);
    expect(await rt.apae?.lift(first)).toMatchObject({ ok: false, code: "ERR_TRUST_LIFT_STALE" });
    expect(rt.sessions.principals.quarantineOf("agent-1")).toBeDefined();
    expect((await call(rt, "file", "write")).decision).toBe("deny");
    expect(await rt.store.query({ type: APAE_LIFT_EVENT })).toHaveLength(1);
    await rt.close();
  });

  it("a signed lift ends the trust quarantine but never an operator's quarantine of the agent", async () => {
    const rt = await deployment();
    const run = await rt.startRun("agent-1");
    const counters = {
      proposed: 0,
      allowed: 0,
      denied: 0,
      deferred: 0,
      executed: 0,
      stepUps: 0,
      modified: 0,
    };
    rt.sessions.principals.quarantine("agent-1", run.runId, {
      type: "manual",
      reason: "operator hold",
      counters,
      matchedEvents: [],
      at: isoTime(Date.now()),
    });
    // The held agent's calls are refused as quarantined (no violations): its trust events
    // come straight to the engine here, as a peer's quarantine notice would bring them.
    const engine = rt.apae?.engine;
    for (let i = 0; i < 3; i++) await engine?.apply({ subject: "agent-1", event: "policy_violation" });
    const view = await engine?.view("agent-1");
    expect(view?.status).toBe("quarantined");
    const r = await rt.apae?.lift(
      signLift(record(rt, { quarantine_count: view?.quarantineCount }), APPROVER),
    );
    expect(r).toMatchObject({ ok: true, principalLifted: false, principalHeld: "manual" });
    expect(rt.apae?.viewOf("agent-1").status).toBe("active");
    expect(rt.sessions.principals.quarantineOf("agent-1")?.type).toBe("manual");
    expect((await call(rt, "file", "write")).decision).toBe("deny");
    const [entry] = await rt.store.query({ type: APAE_LIFT_EVENT });
    expect(entry?.body).toMatchObject({ principal_lifted: false, principal_held: "manual" });
    await rt.close();
  });

  it("a lift for an agent that is not quarantined is refused", async () => {
    const rt = await deployment();
    const r = await rt.apae?.lift(signLift(record(rt, { quarantine_count: 1 }), APPROVER));
    expect(r).toMatchObject({ ok: false, code: "ERR_TRUST_NOT_QUARANTINED" });
    await rt.close();
  });
});
