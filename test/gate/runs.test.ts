// Attacks on run identity (issue 17 #1): every piece of protective state was keyed by the
// caller-chosen runId, so an agent that sent its next call under a new run id shed its
// quarantine. Quarantine now lives with the principal, and with `runs: "runtime"` a call
// must name a run the runtime started for its principal.
import { describe, expect, it } from "vitest";
import { ticketOf } from "../../src/gate/index.js";
import { makeGate, req } from "./harness.js";

const POLICY = `
name: runs
version: "1.0"
rules:
  - id: allow-http
    name: http
    priority: 100
    match: { toolClass: http }
    decision: allow
    reason: fine
`;

/** Five denied calls (default deny for shell) reach the denial threshold. */
async function quarantine(h: Awaited<ReturnType<typeof makeGate>>, runId: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const o = await h.gate.authorize(req({ runId, toolClass: "shell", action: "exec", parameters: {} }));
    expect(o.decision).toBe("deny");
  }
}

const post = (runId: string) => req({ runId, action: "post", parameters: { url: "https://e.org/x" } });

describe("Gate attacks: run identity", () => {
  it("an agent that rotates runId stays quarantined (caller-named runs)", async () => {
    const h = await makeGate({ yaml: POLICY });
    expect(ticketOf(await h.gate.authorize(post("run-a")))).toBeDefined();
    await quarantine(h, "run-a");
    const same = await h.gate.authorize(post("run-a"));
    expect(same.reasonCodes).toEqual(["quarantined"]);
    const rotated = await h.gate.authorize(post("run-b-fresh"));
    expect(rotated.decision).toBe("deny");
    expect(rotated.reasonCodes).toEqual(["quarantined"]);
    // read-only calls still pass
    expect(ticketOf(await h.gate.authorize(req({ runId: "run-c" })))).toBeDefined();
  });

  it("an agent that rotates runId stays quarantined (runtime-created runs)", async () => {
    const h = await makeGate({ yaml: POLICY, gate: { runs: "runtime" } });
    const first = await h.gate.sessions.startRun("agent-1");
    expect(ticketOf(await h.gate.authorize(post(first.runId)))).toBeDefined();
    await quarantine(h, first.runId);
    const second = await h.gate.sessions.startRun("agent-1");
    const o = await h.gate.authorize(post(second.runId));
    expect(o.decision).toBe("deny");
    expect(o.reasonCodes).toEqual(["quarantined"]);
  });

  it("with runs: runtime, a run id the agent made up is denied run_unknown and opens no run", async () => {
    const h = await makeGate({ yaml: POLICY, gate: { runs: "runtime" } });
    const o = await h.gate.authorize(post("made-up-run"));
    expect(o.decision).toBe("deny");
    expect(o.reasonCodes).toEqual(["run_unknown"]);
    expect(o.decisionId).not.toBeNull();
    expect(h.gate.sessions.get("made-up-run")).toBeUndefined();
    const decisions = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(decisions.map((e) => e.body.reason_codes)).toEqual([["run_unknown"]]);
    const dare = decisions[0]!.body.dare as { result: { reason_codes: string[] } };
    expect(dare.result.reason_codes).toEqual(["IDENTITY_INVALID"]);
  });

  it("with runs: runtime, another principal's run is answered exactly like an unknown one", async () => {
    const h = await makeGate({
      yaml: POLICY,
      principals: [
        { id: "agent-1", roles: ["agent"] },
        { id: "agent-2", roles: ["agent"] },
      ],
      gate: { runs: "runtime" },
    });
    const theirs = await h.gate.sessions.startRun("agent-2");
    const o = await h.gate.authorize(post(theirs.runId));
    expect(o.reasonCodes).toEqual(["run_unknown"]);
    // the victim's run is untouched: no decision counted in it
    expect(theirs.snapshot().counters.proposed).toBe(0);
  });

  it("with runs: runtime, an ended run cannot be used again", async () => {
    const h = await makeGate({ yaml: POLICY, gate: { runs: "runtime" } });
    const s = await h.gate.sessions.startRun("agent-1");
    expect(ticketOf(await h.gate.authorize(post(s.runId)))).toBeDefined();
    h.gate.sessions.end(s.runId);
    expect((await h.gate.authorize(post(s.runId))).reasonCodes).toEqual(["run_unknown"]);
  });
});
