// APAE's task_* trust events from live outcomes: the executor's reported outcome is journaled
// in the Gate's result record, carried in the outcome ECT (`warden.outcome`), and turned into
// task_success (+α), task_failure (×β) or task_timeout (×β) for the agent that acted — each
// step journaled naming that ECT, so the score is recomputable from the journal.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type DecisionId, GATE_RESULT, type TaskOutcome, taskOutcomeOf } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { ECT_LEDGER_EVENT, ledgerToken, TRUST_STEP_EVENT } from "../../src/trust/index.js";

const POLICY = `
rules:
  - { id: writes, name: writes, priority: 100, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;

async function deployment(): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-task-outcomes-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  return composeRuntime({
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: 100 } },
      requireContract: false,
    },
    apae: { ectLevel: "L3" },
  });
}

async function act(rt: Runtime, outcome: TaskOutcome | undefined): Promise<void> {
  const run = await rt.startRun("agent-1");
  const o = await rt.gate.authorize({
    principalId: "agent-1",
    runId: run.runId,
    toolClass: "file",
    action: "write",
    parameters: { path: "notes.txt", content: "x" },
  });
  expect(o.decision).toBe("allow");
  await rt.gate.recordResult(o.decisionId as DecisionId, outcome === undefined ? {} : { outcome });
  await rt.apae?.settled();
}

const steps = async (rt: Runtime) =>
  (await rt.store.query({ type: TRUST_STEP_EVENT })).map((e) => e.body as { kind: string; ect: string });

describe("task outcomes are APAE trust events", () => {
  it("a failed execution multiplies the agent's trust by β and names the outcome ECT", async () => {
    const rt = await deployment();
    await act(rt, "failure");
    expect(rt.apae?.viewOf("agent-1").score).toBeCloseTo(0.4, 10);
    const ledger = (await rt.store.query({ type: ECT_LEDGER_EVENT })).map((e) => {
      const payload = ledgerToken(e.body as never).split(".")[1] ?? "";
      return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
        jti: string;
        ext: Record<string, unknown>;
      };
    });
    const outcome = ledger.find((c) => c.ext["warden.phase"] === "outcome");
    expect(outcome?.ext["warden.outcome"]).toBe("failure");
    expect(await steps(rt)).toEqual([expect.objectContaining({ kind: "task_failure", ect: outcome?.jti })]);
    const results = await rt.store.query({ type: GATE_RESULT });
    expect(results.map((e) => (e.body as { outcome?: string }).outcome)).toEqual(["failure"]);
    await rt.close();
  });

  it("a timeout is task_timeout (×β) and a success task_success (+α)", async () => {
    const rt = await deployment();
    await act(rt, "timeout");
    expect(rt.apae?.viewOf("agent-1").score).toBeCloseTo(0.4, 10);
    await act(rt, "success");
    expect(rt.apae?.viewOf("agent-1").score).toBeCloseTo(0.41, 10);
    expect((await steps(rt)).map((s) => s.kind)).toEqual(["task_timeout", "task_success"]);
    await rt.close();
  });

  it("an agent that keeps failing its tasks falls to quarantine without any policy denial", async () => {
    const rt = await deployment();
    // 0.5 × 0.8^6 = 0.131 < 0.15, the quarantine floor.
    for (let i = 0; i < 6; i++) await act(rt, "failure");
    expect(rt.apae?.viewOf("agent-1").status).toBe("quarantined");
    expect(rt.sessions.principals.quarantineOf("agent-1")).toBeDefined();
    await rt.close();
  });

  it("a result reported without an outcome changes no trust", async () => {
    const rt = await deployment();
    await act(rt, undefined);
    expect(rt.apae?.viewOf("agent-1").score).toBe(0.5);
    expect(await steps(rt)).toEqual([]);
    await rt.close();
  });

  it("an executor's *_TIMEOUT code is a timeout, any other failure a failure", () => {
    expect(taskOutcomeOf(true)).toBe("success");
    expect(taskOutcomeOf(false, "ERR_EXEC_TIMEOUT")).toBe("timeout");
    expect(taskOutcomeOf(false, "ERR_EXEC_EXIT_NONZERO")).toBe("failure");
    expect(taskOutcomeOf(false)).toBe("failure");
  });
});
