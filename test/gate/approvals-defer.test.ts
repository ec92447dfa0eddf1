import { describe, expect, it } from "vitest";
import { type ApprovalRequest, InProcessApprovals } from "../../src/gate/approvals.js";
import { DeferQueue, type DeferredItem } from "../../src/gate/defer.js";

const req = (id: string): ApprovalRequest => ({
  id,
  decisionId: `d-${id}`,
  runId: "r",
  principalId: "agent-1",
  approverRole: "finance-approver",
  request: {
    principalId: "agent-1",
    runId: "r",
    toolClass: "http",
    action: "post",
    parameters: {},
    taintLabels: [],
  },
  reasonCodes: ["payment_requires_approval"],
  matchedRules: ["pay"],
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 1000).toISOString(),
});
const alice = { id: "alice", roles: ["finance-approver"] };

describe("InProcessApprovals", () => {
  it("resolves with the approver's verdict", async () => {
    const a = new InProcessApprovals();
    const p = a.request(req("1"), 5000);
    expect(a.pending().map((r) => r.id)).toEqual(["1"]);
    expect(
      a.decide("1", { outcome: "approve", approver: alice, justification: "reviewed the invoice" }),
    ).toEqual({
      ok: true,
    });
    expect(await p).toMatchObject({ outcome: "approve", approver: alice });
    expect(a.pending()).toEqual([]);
  });

  it("times out to a timeout verdict; a late answer is told it timed out", async () => {
    const a = new InProcessApprovals();
    expect(await a.request(req("2"), 10)).toEqual({ outcome: "timeout" });
    const late = a.decide("2", { outcome: "approve", approver: alice, justification: "too late to matter" });
    expect(late).toMatchObject({ ok: false, code: "ERR_APPROVAL_ALREADY_DECIDED" });
    expect(JSON.stringify(late)).toContain("(timeout)");
    expect(
      a.decide("never-asked", { outcome: "approve", approver: alice, justification: "nothing to answer" }),
    ).toMatchObject({ ok: false, code: "ERR_APPROVAL_NOT_FOUND" });
  });

  it("refuses approvers without the role, self-approval, and empty justifications", async () => {
    const a = new InProcessApprovals();
    const p = a.request(req("3"), 5000);
    expect(
      a.decide("3", {
        outcome: "approve",
        approver: { id: "bob", roles: ["dev"] },
        justification: "looks fine to me",
      }),
    ).toMatchObject({ ok: false, code: "ERR_APPROVAL_FORBIDDEN" });
    expect(
      a.decide("3", {
        outcome: "approve",
        approver: { id: "agent-1", roles: ["finance-approver"] },
        justification: "I approve myself",
      }),
    ).toMatchObject({ ok: false, code: "ERR_APPROVAL_FORBIDDEN" });
    expect(a.decide("3", { outcome: "approve", approver: alice, justification: "ok" })).toMatchObject({
      ok: false,
      code: "ERR_APPROVAL_INVALID",
    });
    a.decide("3", { outcome: "deny", approver: alice, justification: "not on the vendor list" });
    expect(await p).toMatchObject({ outcome: "deny" });
  });

  it("cancels on abort", async () => {
    const a = new InProcessApprovals();
    const ac = new AbortController();
    const p = a.request(req("4"), 5000, ac.signal);
    ac.abort();
    expect(await p).toEqual({ outcome: "cancelled" });
  });
});

const item = (id: string, runId = "r"): DeferredItem => ({
  id,
  runId,
  decisionId: `d-${id}`,
  summary: { toolClass: "http", action: "post" },
  createdAt: "",
  expiresAt: "",
});

describe("DeferQueue", () => {
  it("releases in deferral order even when resolved out of order", async () => {
    const q = new DeferQueue();
    const released: string[] = [];
    const a = q.hold(item("a"), 5000)!.then(() => released.push("a"));
    const b = q.hold(item("b"), 5000)!.then(() => released.push("b"));
    expect(q.resolve("b", { outcome: "allow", by: "op" })).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    expect(released).toEqual([]);
    q.resolve("a", { outcome: "deny", by: "op" });
    await Promise.all([a, b]);
    expect(released).toEqual(["a", "b"]);
  });

  it("bounds the number of concurrent deferrals", () => {
    const q = new DeferQueue(2);
    expect(q.hold(item("1"), 1000)).not.toBeNull();
    expect(q.hold(item("2"), 1000)).not.toBeNull();
    expect(q.hold(item("3"), 1000)).toBeNull();
    q.resolve("1", { outcome: "deny", by: "t" });
    q.resolve("2", { outcome: "deny", by: "t" });
  });

  it("times out, and a resolved item cannot be resolved again", async () => {
    const q = new DeferQueue();
    const p = q.hold(item("t"), 5)!;
    expect(await p).toEqual({ outcome: "timeout" });
    expect(q.resolve("t", { outcome: "allow", by: "late" })).toBe(false);
    expect(q.size).toBe(0);
  });

  it("keeps runs independent", async () => {
    const q = new DeferQueue();
    const x = q.hold(item("x", "run-1"), 5000)!;
    const y = q.hold(item("y", "run-2"), 5000)!;
    q.resolve("y", { outcome: "allow", by: "op" });
    expect(await y).toMatchObject({ outcome: "allow" });
    q.resolve("x", { outcome: "allow", by: "op" });
    expect(await x).toMatchObject({ outcome: "allow" });
  });
});

describe("DeferQueue per-principal bound", () => {
  const byPrincipal = (id: string, principalId: string): DeferredItem => ({
    ...item(id, `run-${id}`),
    principalId,
  });

  it("one principal cannot take more than its share of the queue", () => {
    const q = new DeferQueue(8, 2);
    expect(q.hold(byPrincipal("a1", "mallory"), 1000)).not.toBeNull();
    expect(q.hold(byPrincipal("a2", "mallory"), 1000)).not.toBeNull();
    expect(q.hold(byPrincipal("a3", "mallory"), 1000)).toBeNull();
    expect(q.hold(byPrincipal("b1", "alice"), 1000)).not.toBeNull();
    q.resolve("a1", { outcome: "deny", by: "op" });
    expect(q.hold(byPrincipal("a4", "mallory"), 1000)).not.toBeNull();
    for (const id of ["a2", "a4", "b1"]) q.resolve(id, { outcome: "deny", by: "op" });
  });

  it("defaults the share to a quarter of the total", () => {
    expect(new DeferQueue(16).maxPerPrincipal).toBe(4);
    expect(new DeferQueue(2).maxPerPrincipal).toBe(1);
  });
});
