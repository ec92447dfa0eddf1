// The Gate's outcome as a union on the decision, its reason codes, and the id grammar at
// admission. The attacks are named after what they try.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  approvalOf,
  CONTEXT_REASON_CODES,
  faultOf,
  GATE_REASON_CODES,
  termsOf,
  ticketOf,
} from "../../src/gate/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { makeGate, req } from "./harness.js";

const POLICY = `
name: outcome-test
rules:
  - { id: allow-get, name: reads, priority: 200, match: { toolClass: http, action: get }, decision: allow, reason: ok }
  - { id: approve-post, name: posts, priority: 210, match: { toolClass: http, action: post }, decision: require-approval, stepUp: { approverRole: ops, timeout: 20s }, reason: egress }
  - { id: defer-delete, name: deletes, priority: 220, match: { toolClass: file, action: delete }, decision: defer, defer: { timeout: 2s }, reason: batched }
`;

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
}

describe("GateOutcome", () => {
  it("an agent whose run id hides a space, newline or NUL is refused at admission and opens no session", async () => {
    const h = await makeGate({ yaml: POLICY });
    for (const runId of ["run 1", "run\n1", "run\u00001", "rün-1"]) {
      const out = await h.gate.authorize(req({ runId }));
      expect(out.decision).toBe("deny");
      expect(out.reasonCodes).toEqual(["run_id_invalid"]);
      expect(ticketOf(out)).toBeUndefined();
      // Like request_invalid: there is no run id to journal it under, so nothing is journaled.
      expect(out.decisionId).toBeNull();
      expect(faultOf(out)).toBeUndefined();
      expect(h.gate.sessions.get(runId)).toBeUndefined();
    }
    expect(await h.entries()).toEqual([]);
  });

  it("evaluate answers step_up and defer with their terms and never a ticket", async () => {
    const h = await makeGate({ yaml: POLICY });
    const up = await h.gate.evaluate(req({ action: "post" }));
    expect(up.decision).toBe("step_up");
    if (up.decision !== "step_up") throw new Error("unreachable");
    expect(up.stepUp).toEqual({ approverRole: "ops", timeoutMs: 20_000 });
    expect(ticketOf(up)).toBeUndefined();
    const held = await h.gate.evaluate(
      req({ toolClass: "file", action: "delete", parameters: { path: "a" } }),
    );
    expect(held.decision).toBe("defer");
    expect(termsOf(held)).toEqual({ defer: { timeoutMs: 2000 } });
    const allowed = await h.gate.evaluate(req());
    expect(allowed.decision).toBe("allow");
    expect(ticketOf(allowed)).toBeUndefined();
  });

  it("a step_up answered by an approver says how it was resolved, and only then carries a ticket", async () => {
    const h = await makeGate({ yaml: POLICY });
    const p = h.gate.authorize(req({ action: "post" }));
    await until(() => h.approvals.pending().length > 0);
    const res = h.approvals.decide(h.approvals.pending()[0]!.id, {
      outcome: "approve",
      approver: { id: "alice", roles: ["ops"] },
      justification: "expected API call for the ticket",
    });
    expect(res.ok).toBe(true);
    const out = await p;
    expect(out.reasonCodes).toContain("approval_granted");
    expect(out.decision).toBe("allow");
    if (out.decision !== "allow") throw new Error("unreachable");
    expect(out.resolution?.via).toBe("approval");
    expect(termsOf(out)).toEqual({ stepUp: { approverRole: "ops", timeoutMs: 20_000 } });
    expect(approvalOf(out)).toMatchObject({ outcome: "approve", approver: "alice" });
    expect(approvalOf(out)?.hitl).toBeDefined();
    expect(ticketOf(out)).toBeDefined();
    expect(faultOf(out)).toBeUndefined();
  });

  it("a denied approval keeps the resolution and has no ticket", async () => {
    const h = await makeGate({ yaml: POLICY });
    const p = h.gate.authorize(req({ action: "post" }));
    await until(() => h.approvals.pending().length > 0);
    const res = h.approvals.decide(h.approvals.pending()[0]!.id, {
      outcome: "deny",
      approver: { id: "bob", roles: ["ops"] },
      justification: "not part of the ticket's scope",
    });
    expect(res.ok).toBe(true);
    const out = await p;
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toContain("approval_denied");
    expect(approvalOf(out)).toMatchObject({ outcome: "deny", approver: "bob" });
    expect(ticketOf(out)).toBeUndefined();
  });

  it("docs/gate.md gives a meaning for every reason code the Gate and the context write", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs", "gate.md"), "utf8");
    for (const code of [...GATE_REASON_CODES, ...CONTEXT_REASON_CODES]) {
      expect(doc, code).toMatch(new RegExp(`^\\| \`${code}\` \\|`, "m"));
    }
  });
});
