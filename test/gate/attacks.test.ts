// Attacks on the Gate's resolution paths: a policy rewrite shed by a human approval, a
// policy rewrite the contract cannot express, an approval that lands after the run was
// quarantined, and a deferral whose caller has gone away.
import { describe, expect, it } from "vitest";
import { DeferQueue, type DeferredItem, redeemTicket, ticketOf } from "../../src/gate/index.js";
import { type CompiledTool, parseContract } from "../../src/tools/index.js";
import { makeGate, req } from "./harness.js";

const PAY = `
[tool]
name = "pay"
version = "1.0.0"
description = "Pay an invoice."
category = "irreversible_write"
timeout_seconds = 10
human_approval = true

[args.amount]
type = "integer"
required = true
min = 1
max = 1000000
description = "Amount in cents"

[args.memo]
type = "string"
required = true
max_length = 64
description = "Memo"

[http]
method = "POST"
url = "https://pay.example.com/pay"
headers = { "Content-Type" = "application/json" }
body_template = '{"amount": "{amount}", "memo": "{memo}"}'

[output]
format = "text"
[output.schema]
type = "object"
required = ["raw_output"]
[output.schema.properties.raw_output]
type = "string"
`;

function compiled(text: string): CompiledTool {
  const r = parseContract(text);
  if (!r.ok) throw new Error(r.message);
  return r.tool;
}

const pay = compiled(PAY);
const contracts = { get: (n: string) => (n === "pay" ? pay : undefined) };
const payReq = (over: Record<string, unknown> = {}) =>
  req({
    tool: "pay",
    toolClass: "http",
    action: "post",
    parameters: { amount: 500000, memo: "inv-1" },
    ...over,
  });
const alice = { id: "alice", roles: ["approver"] };

async function pendingApproval(h: Awaited<ReturnType<typeof makeGate>>) {
  for (let i = 0; i < 100 && h.approvals.pending().length === 0; i++)
    await new Promise((r) => setTimeout(r, 5));
  const p = h.approvals.pending();
  expect(p).toHaveLength(1);
  return p[0]!;
}

describe("Gate attacks: policy rewrites", () => {
  it("keeps the policy's rewrite when a contract's human_approval turns modify into step_up", async () => {
    const h = await makeGate({
      yaml: `
rules:
  - id: cap-payments
    name: cap
    priority: 100
    match: { tool: pay }
    decision: modify
    modify: { clamp: { amount: { max: 10000 } } }
    reason: payments are capped
`,
      gate: { contracts },
    });
    const p = h.gate.authorize(payReq());
    const pending = await pendingApproval(h);
    // The approver is shown what will run, not what the model asked for.
    expect(pending.request.parameters).toMatchObject({ amount: 10000 });
    h.approvals.decide(pending.id, {
      outcome: "approve",
      approver: alice,
      justification: "capped payment is fine",
    });
    const out = await p;
    expect(out.policyDecision).toBe("step_up");
    expect(out.decision).toBe("allow");
    expect(out.reasonCodes).toContain("contract_requires_approval");
    expect(out.originalParameters).toMatchObject({ amount: 500000 });
    const r = redeemTicket(ticketOf(out), { tool: "pay" });
    expect(r.ok && r.parameters.amount).toBe(10000);
    const detail = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect(detail.body.modified).toMatchObject({ parameters: { amount: 10000 } });
  });

  it("denies a policy rewrite that the contract cannot express (no ticket for invalid parameters)", async () => {
    const h = await makeGate({
      yaml: `
rules:
  - id: redact-amount
    name: redact
    priority: 100
    match: { tool: pay }
    decision: modify
    modify: { redact: [amount] }
    reason: redact
`,
      gate: { contracts: { get: (n: string) => (n === "pay" ? noApproval : undefined) } },
    });
    const out = await h.gate.authorize(payReq());
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes[0]).toMatch(/^contract_modify_invalid:amount:/);
    expect(ticketOf(out)).toBeUndefined();
    const entry = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    const dare = entry.body.dare as { result: { reason_codes: string[] } };
    expect(dare.result.reason_codes).toContain("SCHEMA_INVALID");
  });
});

const noApproval = compiled(PAY.replace("human_approval = true", "human_approval = false"));

describe("Gate attacks: late approvals", () => {
  it("an approval that arrives after the run was quarantined does not grant a write", async () => {
    const h = await makeGate({
      yaml: `
rules:
  - { id: reads, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: r }
  - { id: posts, name: posts, priority: 110, match: { toolClass: http, action: post }, decision: require-approval, reason: p }
`,
      context: { quarantine: { denialThreshold: 2 } },
    });
    const p = h.gate.authorize(req({ action: "post", parameters: { url: "https://example.org/api" } }));
    const pending = await pendingApproval(h);
    // While the approver reads, the run trips its denial threshold.
    for (let i = 0; i < 2; i++)
      await h.gate.authorize(req({ toolClass: "shell", action: "exec", parameters: {} }));
    expect(h.gate.sessions.get("run-1")!.quarantined).toBe(true);
    h.approvals.decide(pending.id, {
      outcome: "approve",
      approver: alice,
      justification: "looked fine at first",
    });
    const out = await p;
    expect(out.decision).toBe("deny");
    expect(out.reasonCodes).toContain("quarantined");
    expect(ticketOf(out)).toBeUndefined();
    const res = (await h.entries()).filter((e) => e.type === "warden.gate.resolution").at(-1)!;
    expect(res.body).toMatchObject({ resolved: "deny", outcome: "approve" });
    expect(res.body.reason_codes).toContain("quarantined");
  });

  // The waiting call holds its tool-call unit (a reservation), so a read cannot spend it
  // meanwhile; a budget it does not hold (tokens) can still run out while it waits.
  it("approvals granted after the run's budget ran out are denied", async () => {
    const h = await makeGate({
      yaml: `
rules:
  - { id: reads, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: r }
  - { id: posts, name: posts, priority: 110, match: { toolClass: http, action: post }, decision: require-approval, reason: p }
`,
      context: { budgets: { toolCalls: 1, tokens: 100 } },
    });
    const p = h.gate.authorize(req({ action: "post", parameters: { url: "https://example.org/api" } }));
    const pending = await pendingApproval(h);
    const read = await h.gate.authorize(req());
    expect(read.decision).toBe("deny");
    expect(read.reasonCodes).toContain("budget_tool_calls_exhausted");
    h.gate.sessions.get("run-1")!.recordUsage({ tokens: 100 });
    h.approvals.decide(pending.id, {
      outcome: "approve",
      approver: alice,
      justification: "expected API call",
    });
    const out = await p;
    expect(out).toMatchObject({ decision: "deny" });
    expect(out.reasonCodes).toContain("budget_tokens_exhausted");
    expect(ticketOf(out)).toBeUndefined();
  });
});

describe("Gate attacks: deferrals", () => {
  const DEFER = `
rules:
  - { id: later, name: later, priority: 100, match: { toolClass: file, action: delete }, decision: defer, defer: { timeout: 10m }, reason: d }
`;

  it("a deferred call is cancelled when its caller goes away, and can no longer be released", async () => {
    const h = await makeGate({ yaml: DEFER });
    const ac = new AbortController();
    const p = h.gate.authorize(
      req({ toolClass: "file", action: "delete", parameters: { path: "a" } }),
      ac.signal,
    );
    for (let i = 0; i < 100 && h.gate.deferQueue.size === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const [item] = h.gate.deferQueue.list();
    ac.abort();
    const out = await p;
    expect(out).toMatchObject({ decision: "deny", policyDecision: "defer" });
    expect(out.reasonCodes).toContain("defer_cancelled");
    expect(ticketOf(out)).toBeUndefined();
    expect(h.gate.deferQueue.size).toBe(0);
    expect(h.gate.deferQueue.resolve(item!.id, { outcome: "allow", by: "alice" })).toBe(false);
  });

  it("a cancelled item stops holding back later items of its run", async () => {
    const q = new DeferQueue();
    const item = (id: string): DeferredItem => ({
      id,
      runId: "r",
      decisionId: id,
      summary: { toolClass: "file", action: "delete" },
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const ac = new AbortController();
    const first = q.hold(item("1"), 60_000, ac.signal)!;
    const second = q.hold(item("2"), 60_000)!;
    expect(q.resolve("2", { outcome: "allow", by: "alice" })).toBe(true);
    ac.abort();
    expect(await first).toEqual({ outcome: "cancelled" });
    expect(await second).toMatchObject({ outcome: "allow" });
    expect(q.hold(item("3"), 60_000, AbortSignal.abort())).not.toBeNull();
    expect(await q.hold(item("4"), 60_000, AbortSignal.abort())).toEqual({ outcome: "cancelled" });
  });
});

describe("Gate attacks: tickets", () => {
  it("a granted ticket does not lead back to the class that mints tickets", async () => {
    const h = await makeGate({
      yaml: `
rules:
  - { id: reads, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: r }
`,
    });
    const out = await h.gate.authorize(req());
    const t = ticketOf(out) as unknown as { constructor?: { mint?: unknown } };
    expect(t.constructor?.mint).toBeUndefined();
    expect(Object.hasOwn(Object.getPrototypeOf(t), "constructor")).toBe(false);
    expect(Object.isFrozen(Object.getPrototypeOf(t))).toBe(true);
    // The ticket still works as one.
    expect(redeemTicket(ticketOf(out)).ok).toBe(true);
    expect(redeemTicket(ticketOf(out))).toMatchObject({ ok: false, code: "ERR_TICKET_REUSED" });
  });
});
