// Attacks on the Gate's budgets and rate limits (issue 17 #3): the checks ran before an
// await on the journal, so concurrent calls all passed a budget of 5, and a principal's
// maxCallsPerMinute never limited sequential calls.
import { describe, expect, it } from "vitest";
import { ticketOf } from "../../src/gate/index.js";
import { makeGate, req } from "./harness.js";

const ALLOW_ALL = `
name: races
version: "1.0"
rules:
  - id: allow-get
    name: reads
    priority: 100
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads are fine
  - id: approve-post
    name: posts need a human
    priority: 110
    match: { toolClass: http, action: post }
    decision: require-approval
    reason: egress
`;

describe("Gate attacks: budget and rate-limit races", () => {
  it("40 concurrent authorize() calls against a tool-call budget of 5 get exactly 5 tickets", async () => {
    const h = await makeGate({ yaml: ALLOW_ALL, context: { budgets: { toolCalls: 5 } } });
    const outs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.gate.authorize(req({ parameters: { url: `https://e.org/${i}` } })),
      ),
    );
    const granted = outs.filter((o) => ticketOf(o) !== undefined);
    expect(granted).toHaveLength(5);
    const denied = outs.filter((o) => o.decision === "deny");
    expect(denied).toHaveLength(35);
    for (const o of denied) expect(o.reasonCodes).toContain("budget_tool_calls_exhausted");
    // every refusal is journaled, so the chain shows all 40 decisions
    const decisions = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(decisions).toHaveLength(40);
    expect((await h.verify()).ok).toBe(true);
  });

  it("seven sequential calls with a principal maxCallsPerMinute of 5: the last two are rate_limited", async () => {
    const h = await makeGate({
      yaml: ALLOW_ALL,
      principals: [{ id: "agent-1", roles: ["agent"], maxCallsPerMinute: 5 }],
      gate: { clock: () => 1_000_000 },
    });
    const decisions: string[] = [];
    for (let i = 0; i < 7; i++) {
      const o = await h.gate.authorize(req({ parameters: { url: `https://e.org/${i}` } }));
      decisions.push(o.decision);
      if (o.decision === "deny") expect(o.reasonCodes).toEqual(["rate_limited"]);
    }
    expect(decisions).toEqual(["allow", "allow", "allow", "allow", "allow", "deny", "deny"]);
  });

  it("40 concurrent calls with a principal maxCallsPerMinute of 5 get exactly 5 tickets", async () => {
    const h = await makeGate({
      yaml: ALLOW_ALL,
      principals: [{ id: "agent-1", roles: ["agent"], maxCallsPerMinute: 5 }],
    });
    const outs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        h.gate.authorize(req({ runId: `run-${i % 4}`, parameters: { url: `https://e.org/${i}` } })),
      ),
    );
    expect(outs.filter((o) => ticketOf(o) !== undefined)).toHaveLength(5);
  });

  it("a call waiting for a human holds its budget unit: a concurrent call cannot take it", async () => {
    const h = await makeGate({ yaml: ALLOW_ALL, context: { budgets: { toolCalls: 1 } } });
    const post = h.gate.authorize(req({ action: "post", parameters: { url: "https://e.org/p" } }));
    for (let i = 0; i < 200 && h.approvals.pending().length === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    const get = await h.gate.authorize(req());
    expect(get.decision).toBe("deny");
    expect(get.reasonCodes).toContain("budget_tool_calls_exhausted");
    const p = h.approvals.pending()[0]!;
    expect(
      h.approvals.decide(p.id, {
        outcome: "approve",
        approver: { id: "alice", roles: ["approver"] },
        justification: "checked the target by hand",
      }).ok,
    ).toBe(true);
    const o = await post;
    expect(ticketOf(o)).toBeDefined();
  });

  it("a denied call gives its budget unit back", async () => {
    const h = await makeGate({ yaml: ALLOW_ALL, context: { budgets: { toolCalls: 1 } } });
    const denied = await h.gate.authorize(req({ action: "delete" })); // default deny
    expect(denied.decision).toBe("deny");
    expect(ticketOf(await h.gate.authorize(req()))).toBeDefined();
  });
});
