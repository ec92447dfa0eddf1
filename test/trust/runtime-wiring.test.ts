// APAE wired into the composition root: policy denials are policy_violation trust events,
// a trust quarantine holds the principal across runs and restarts, and it is lifted when
// the trust quarantine expires (a behavioural/operator quarantine is not).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type RuntimeConfig } from "../../src/runtime/index.js";
import { HOUR_MS, TRUST_EMITTED_EVENT, TRUST_STEP_EVENT } from "../../src/trust/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
  - { id: no-shell, name: no-shell, priority: 200, match: { toolClass: shell }, decision: deny, reason: no shell }
`;
const T0 = Date.parse("2026-03-01T12:00:00Z");

/** `null`: a deployment without APAE. */
function deployment(apae: RuntimeConfig["apae"] | null = {}) {
  const dir = mkdtempSync(join(tmpdir(), "warden-apae-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const signer = generateKeyPair("ed25519");
  let now = T0;
  const config = (): RuntimeConfig => ({
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      // High enough that the Gate's own per-run counter never fires here.
      context: { quarantine: { denialThreshold: 100 } },
      requireContract: false,
    },
    ...(apae === null ? {} : { apae }),
  });
  return { dir, config, clock: () => now, advance: (ms: number) => (now += ms) };
}

const call = (runId: string, toolClass: "file" | "shell") => ({
  principalId: "agent-1",
  runId,
  toolClass,
  action: toolClass === "file" ? "write" : "exec",
  parameters: toolClass === "file" ? { path: "notes.txt", content: "x" } : {},
});

describe("APAE in the runtime", () => {
  it("an agent that keeps hitting deny rules in fresh runs is quarantined by trust, across runs and a restart", async () => {
    const d = deployment();
    const rt = await composeRuntime(d.config(), { clock: d.clock });
    for (let i = 0; i < 3; i++) {
      const run = await rt.startRun("agent-1");
      expect((await rt.gate.authorize(call(run.runId, "shell"))).decision).toBe("deny");
    }
    await rt.apae?.settled();
    expect(await rt.apae?.engine.view("agent-1")).toMatchObject({
      score: 0.131072,
      status: "quarantined",
      quarantineCount: 1,
    });
    expect(rt.sessions.principals.quarantineOf("agent-1")?.type).toBe("trust_score");
    const fresh = await rt.startRun("agent-1");
    const held = await rt.gate.authorize(call(fresh.runId, "file"));
    expect(held.decision).toBe("deny");
    expect(held.reasonCodes).toContain("quarantined");
    const steps = await rt.store.query({ type: TRUST_STEP_EVENT });
    expect(steps.map((e) => [e.body.kind, e.body.after])).toEqual([
      ["policy_violation", 0.32],
      ["policy_violation", 0.2048],
      ["policy_violation", 0.131072],
    ]);
    expect((await rt.store.query({ type: TRUST_EMITTED_EVENT })).map((e) => e.body.exec_act)).toEqual([
      "apae:trust_revoke",
      "apae:quarantine",
    ]);
    await rt.close();

    const again = await composeRuntime(d.config(), { clock: d.clock });
    expect(await again.apae?.engine.view("agent-1")).toMatchObject({
      score: 0.131072,
      status: "quarantined",
    });
    const run = await again.startRun("agent-1");
    expect((await again.gate.authorize(call(run.runId, "file"))).reasonCodes).toContain("quarantined");

    // The trust quarantine expires after 1 h: the principal quarantine it caused is lifted.
    d.advance(HOUR_MS + 1000);
    await again.apae?.tick();
    expect(again.sessions.principals.quarantineOf("agent-1")).toBeUndefined();
    expect(await again.apae?.engine.view("agent-1")).toMatchObject({ score: 0.5, status: "active" });
    const after = await again.startRun("agent-1");
    expect((await again.gate.authorize(call(after.runId, "file"))).decision).toBe("allow");
    await again.close();
  });

  it("allowed calls and a deployment without apae leave trust untouched", async () => {
    const d = deployment();
    const rt = await composeRuntime(d.config(), { clock: d.clock });
    const run = await rt.startRun("agent-1");
    expect((await rt.gate.authorize(call(run.runId, "file"))).decision).toBe("allow");
    await rt.apae?.settled();
    expect(await rt.store.query({ type: TRUST_STEP_EVENT })).toEqual([]);
    await rt.close();

    const off = deployment(null);
    const plain = await composeRuntime(off.config(), { clock: off.clock });
    expect(plain.apae).toBeUndefined();
    const r = await plain.startRun("agent-1");
    for (let i = 0; i < 3; i++) await plain.gate.authorize(call(r.runId, "shell"));
    expect(plain.sessions.principals.quarantineOf("agent-1")).toBeUndefined();
    await plain.close();
  });

  it("a quarantine set by an operator is not lifted by a trust expiry", async () => {
    const d = deployment();
    const rt = await composeRuntime(d.config(), { clock: d.clock });
    for (let i = 0; i < 3; i++) {
      const run = await rt.startRun("agent-1");
      await rt.gate.authorize(call(run.runId, "shell"));
    }
    await rt.apae?.settled();
    await rt.sessions.principals.lift("agent-1");
    const run = await rt.startRun("agent-1");
    rt.sessions.principals.quarantine("agent-1", run.runId, {
      type: "manual",
      reason: "operator hold",
      counters: { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 },
      matchedEvents: [],
      at: new Date(T0).toISOString(),
    });
    d.advance(2 * HOUR_MS);
    await rt.apae?.tick();
    expect(rt.sessions.principals.quarantineOf("agent-1")?.type).toBe("manual");
    await rt.close();
  });

  it("a malformed trust setting stops the runtime from starting", async () => {
    const d = deployment({ settings: { alpah: 1 } });
    await expect(composeRuntime(d.config())).rejects.toMatchObject({ code: "ERR_TRUST_CONFIG_INVALID" });
  });
});
