// Attacks on the Gate's waiting rooms (issue 17 #9): the step-up queue was unbounded, so
// one agent could park any number of calls on the approvers' queue (and in memory).
import { describe, expect, it } from "vitest";
import { InProcessApprovals } from "../../src/gate/index.js";
import { makeGate, req } from "./harness.js";

const POLICY = `
name: queues
version: "1.0"
rules:
  - id: approve-post
    name: posts need a human
    priority: 100
    match: { toolClass: http, action: post }
    decision: require-approval
    reason: egress
`;

const post = (principalId: string, i: number) =>
  req({
    principalId,
    runId: `${principalId}-run`,
    action: "post",
    parameters: { url: `https://e.org/${i}` },
  });

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 5));
}

/** A Gate for two agents whose step-ups go to `approvals`. */
const twoAgents = (approvals: InProcessApprovals) =>
  makeGate({
    yaml: POLICY,
    principals: [
      { id: "agent-1", roles: ["agent"] },
      { id: "agent-2", roles: ["agent"] },
    ],
    gate: { approvals },
  });

describe("Gate attacks: bounded step-up queue", () => {
  it("an agent that floods the approvers' queue gets approval_queue_full beyond its share", async () => {
    const approvals = new InProcessApprovals({ maxPending: 8, maxPendingPerPrincipal: 2 });
    const h = await twoAgents(approvals);
    const ac = new AbortController();
    const flood = Array.from({ length: 5 }, (_, i) => h.gate.authorize(post("agent-1", i), ac.signal));
    const refused = await Promise.race([Promise.all(flood.slice(2)), settle().then(() => "timeout")]);
    expect(refused).not.toBe("timeout");
    for (const o of refused as Awaited<(typeof flood)[number]>[]) {
      expect(o.decision).toBe("deny");
      expect(o.reasonCodes).toEqual(["RULE:approve-post", "approval_queue_full"]);
    }
    expect(approvals.pending().filter((p) => p.principalId === "agent-1")).toHaveLength(2);
    // another principal still gets its turn
    const other = h.gate.authorize(post("agent-2", 9), ac.signal);
    await settle();
    expect(approvals.pending().filter((p) => p.principalId === "agent-2")).toHaveLength(1);
    ac.abort();
    await Promise.all([...flood, other]);
    expect(approvals.pending()).toHaveLength(0);
    const res = (await h.entries()).filter((e) => e.type === "warden.gate.resolution");
    expect(res.filter((e) => e.body.outcome === "queue_full")).toHaveLength(3);
    expect((await h.verify()).ok).toBe(true);
  });

  it("the whole queue is bounded too, whoever asks", async () => {
    const approvals = new InProcessApprovals({ maxPending: 2, maxPendingPerPrincipal: 2 });
    const h = await twoAgents(approvals);
    const ac = new AbortController();
    const a = [
      h.gate.authorize(post("agent-1", 1), ac.signal),
      h.gate.authorize(post("agent-1", 2), ac.signal),
    ];
    await settle();
    const b = await h.gate.authorize(post("agent-2", 3), ac.signal);
    expect(b.reasonCodes).toContain("approval_queue_full");
    ac.abort();
    await Promise.all(a);
    // slots are given back when a request ends
    const c = h.gate.authorize(post("agent-2", 4), ac.signal);
    expect((await c).reasonCodes).toContain("approval_cancelled");
  });

  it("InProcessApprovals refuses a bad bound", () => {
    expect(() => new InProcessApprovals({ maxPending: 0 })).toThrow();
    expect(() => new InProcessApprovals({ maxPending: 2, maxPendingPerPrincipal: 3 })).toThrow();
  });
});

describe("InProcessApprovals.decide", () => {
  it("a forged queue_full verdict cannot be fed to a pending approval", async () => {
    const approvals = new InProcessApprovals();
    const ac = new AbortController();
    const r = approvals.request(
      {
        id: "a1",
        decisionId: "d1",
        runId: "r1",
        principalId: "agent-1",
        approverRole: "approver",
        request: req() as never,
        reasonCodes: [],
        matchedRules: [],
        createdAt: new Date(0).toISOString(),
        expiresAt: new Date(0).toISOString(),
      },
      60_000,
      ac.signal,
    );
    expect(approvals.decide("a1", { outcome: "queue_full" })).toMatchObject({
      ok: false,
      code: "ERR_APPROVAL_INVALID",
    });
    ac.abort();
    expect(await r).toEqual({ outcome: "cancelled" });
  });
});

describe("Gate attacks: a run's event chain", () => {
  it("an agent that keeps proposing denied calls does not grow its run's chain in memory", async () => {
    const h = await makeGate({ yaml: POLICY, context: { limits: { eventsRetained: 16 } } });
    for (let i = 0; i < 200; i++)
      await h.gate.evaluate(req({ toolClass: "shell", action: "exec", parameters: { i } }));
    const s = h.gate.sessions.get("run-1")!;
    expect(s.snapshot().counters.proposed).toBe(200);
    expect(s.retainedEvents).toBeLessThanOrEqual(2 * 16); // compacted in batches: at most twice the tail
    expect(s.events().length).toBeLessThanOrEqual(16);
    // every decision is in the journal even though the run keeps only the tail
    const decisions = (await h.entries()).filter((e) => e.type === "warden.gate.decision");
    expect(decisions).toHaveLength(200);
  });
});

describe("Gate attacks: results awaiting recordResult", () => {
  const READS = `
name: reads
version: "1.0"
rules:
  - { id: reads, name: reads, priority: 100, match: { toolClass: http, action: get }, decision: allow, reason: r }
`;
  it("an agent that never reports results cannot push out another principal's pending result", async () => {
    const h = await makeGate({
      yaml: READS,
      principals: [
        { id: "agent-1", roles: ["agent"] },
        { id: "agent-2", roles: ["agent"] },
      ],
      gate: { pendingResultsPerPrincipal: 3 },
    });
    const victim = await h.gate.evaluate(req({ principalId: "agent-2", runId: "victim-run" }));
    expect(victim.decision).toBe("allow");
    const flood = [];
    for (let i = 0; i < 10; i++)
      flood.push(
        await h.gate.evaluate(
          req({ principalId: "agent-1", runId: "flood-run", parameters: { url: `https://e.org/${i}` } }),
        ),
      );
    // the victim's result still lands, with its taint
    const rec = await h.gate.recordResult(victim.decisionId!, {
      taintLabels: [{ source: "web", origin: "e.org" }],
      data: "page",
    });
    expect(rec.taint.map((t) => t.source)).toContain("web");
    // the flooder keeps only its newest three
    await expect(h.gate.recordResult(flood[0]!.decisionId!, {})).rejects.toThrow(/unknown/);
    for (const o of flood.slice(-3))
      await expect(h.gate.recordResult(o.decisionId!, {})).resolves.toBeDefined();
  });

  it("a host without a result channel (evaluate noResult) leaves nothing pending, and no result can be reported for its call", async () => {
    const h = await makeGate({ yaml: READS });
    const before = h.gate.pendingResults;
    const flood = [];
    for (let i = 0; i < 20; i++)
      flood.push(
        await h.gate.evaluate(req({ parameters: { url: `https://e.org/${i}` } }), { noResult: true }),
      );
    expect(flood.every((o) => o.decision === "allow" && o.journalSeqs.length > 0)).toBe(true);
    expect(h.gate.pendingResults).toBe(before); // nothing held in memory
    // nothing to report against: a forged result for such a call is refused
    await expect(h.gate.recordResult(flood[0]!.decisionId!, {})).rejects.toThrow(/unknown/);
    // the default still holds the call for its result
    const held = await h.gate.evaluate(req({ parameters: { url: "https://e.org/held" } }));
    expect(h.gate.pendingResults).toBe(before + 1);
    await expect(h.gate.recordResult(held.decisionId!, {})).resolves.toBeDefined();
  });

  it("a bad share is refused", async () => {
    await expect(makeGate({ yaml: READS, gate: { pendingResultsPerPrincipal: 0 } })).rejects.toThrow(
      RangeError,
    );
  });
});
