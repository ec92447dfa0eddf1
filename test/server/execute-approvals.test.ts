// The governed path over HTTP: execute (gate → executor → result), decide-only, run
// state with quarantine, and the step-up queue driven by a second client (approve,
// deny, modify, timeout), plus deferred actions released by an operator.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DecisionId } from "../../src/contracts/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS, until } from "./harness.js";

let s: Sidecar;
/** The documented opt-out (gate.requireContract: false), for contract-less behaviour only. */
let loose: Sidecar;
// The approval flows run in unrelated runs of one principal, some after a web read: with
// taint carried at the principal (the default) the later egress would be refused for the
// earlier read (test/server/taint-carry-attacks.test.ts), so this host opts out.
const UNRELATED_RUNS = { taint: { carry: "explicit" } };
beforeAll(async () => {
  s = await startTestSidecar({ context: UNRELATED_RUNS });
  loose = await startTestSidecar({ requireContract: false });
});
afterAll(async () => {
  await s.stop();
  await loose.stop();
});

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
type Pending = { id: string; kind: string; runId: string; action?: { parameters?: unknown } };

async function pendingFor(runId: string, on: Sidecar = s): Promise<Pending> {
  return until(async () => {
    const r = await on.call("/v1/approvals", { token: TOKENS.approver });
    return (r.body.pending as Pending[]).find((p) => p.runId === runId);
  });
}

describe("POST /v1/execute", () => {
  it("executes an allowed contract call and returns the contract-validated output with evidence", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: echo("hello sidecar", { runId: await s.run("run-a") }),
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      decision: "allow",
      result: { ok: true, output: { raw_output: "hello sidecar\n" }, exitCode: 0 },
    });
    const evidenceId = r.body.evidenceId as string;
    const [ev] = await s.server.runtime.store.query({
      type: "warden.executor.evidence",
      run_id: await s.run("run-a"),
    });
    expect(ev?.body).toMatchObject({
      evidence_id: evidenceId,
      decision_id: r.body.decisionId,
      status: "success",
    });
    expect((r.body.taint as { source: string }[]).map((t) => t.source)).toContain("tool-output");
  });

  it("returns a denial with reasons and executes nothing", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: echo("rm -rf /", { runId: await s.run("run-deny") }),
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "deny", evidenceId: null });
    expect(r.body.result).toBeUndefined();
    expect(r.body.denial).toMatchObject({ reasonCodes: ["RULE:deny-rm"], message: "destructive" });
    expect(
      await s.server.runtime.store.query({
        type: "warden.executor.evidence",
        run_id: await s.run("run-deny"),
      }),
    ).toEqual([]);
  });

  it("denies a call naming an unknown tool (journaled as tool_unknown)", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: {
        runId: await s.run("run-unk"),
        tool: "no_such_tool",
        toolClass: "shell",
        action: "exec",
        parameters: {},
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "deny", reasonCodes: ["tool_unknown"] });
  });

  it("refuses a call without a contract: the sidecar never executes free-form invocations", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: {
        runId: await s.run("run-a"),
        toolClass: "http",
        action: "get",
        parameters: { url: "http://127.0.0.1/" },
      },
    });
    expect(r.status).toBe(422);
    expect(code(r)).toBe("ERR_SERVER_NO_EXECUTOR");
  });

  it("denies parameters the contract rejects before policy", async () => {
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-a"), tool: "slow_fetch", parameters: { ms: 99999 } },
    });
    expect(r.body.decision).toBe("deny");
    expect((r.body.reasonCodes as string[])[0]).toMatch(/^contract_param_invalid:ms/);
  });
});

describe("POST /v1/decide", () => {
  it("decides without executing and returns step_up as-is", async () => {
    const hits = s.service.hits.length;
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-decide"), tool: "publish", parameters: { text: "hi" } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      decision: "step_up",
      stepUp: { approverRole: "approver", timeoutMs: 20000 },
      matchedRules: [{ id: "approve-post" }],
    });
    expect(r.body.result).toBeUndefined();
    expect(s.service.hits.length).toBe(hits);
    const decideRun = await s.run("run-decide");
    const list = await s.call("/v1/approvals", { token: TOKENS.approver });
    expect((list.body.pending as Pending[]).some((p) => p.runId === decideRun)).toBe(false);
  });

  it("a call to a tool with no contract is refused by default", async () => {
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: {
        runId: await s.run("run-nc"),
        toolClass: "http",
        action: "get",
        parameters: { url: "https://x.test/" },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "deny", reasonCodes: ["contract_required"] });
    expect(s.loaded.config.gate.requireContract).toBe(true);
  });

  it("takes tool-class calls without a contract when the configuration opts out", async () => {
    const r = await loose.call("/v1/decide", {
      token: TOKENS.agentA,
      body: {
        runId: await loose.run("run-decide"),
        toolClass: "http",
        action: "get",
        parameters: { url: "https://x.test/" },
      },
    });
    expect(r.body).toMatchObject({ decision: "allow", reasonCodes: ["RULE:allow-get"] });
  });
});

describe("GET /v1/runs/:id", () => {
  it("shows quarantine after repeated denials, and the quarantined run is refused writes", async () => {
    // Quarantine binds the principal across all its runs, so this test has a sidecar of its own.
    const q = await startTestSidecar();
    try {
      for (let i = 0; i < 5; i++) {
        const r = await q.call("/v1/decide", {
          token: TOKENS.agentA,
          body: echo(`rm x${i}`, { runId: await q.run("run-q") }),
        });
        expect(r.body.decision).toBe("deny");
      }
      const state = await q.call(`/v1/runs/${await q.run("run-q")}`, { token: TOKENS.agentA });
      expect(state.status).toBe(200);
      expect(state.body).toMatchObject({
        runId: await q.run("run-q"),
        principalId: "agent-a",
        quarantined: true,
        counters: { denied: 5 },
      });
      expect(state.body.quarantineReason).toEqual(expect.any(String));
      const after = await q.call("/v1/execute", {
        token: TOKENS.agentA,
        body: echo("hello", { runId: await q.run("run-q") }),
      });
      expect(after.body).toMatchObject({ decision: "deny" });
      expect(after.body.reasonCodes).toContain("quarantined");
      // Operators see any run.
      const op = await q.call(`/v1/runs/${await q.run("run-q")}`, { token: TOKENS.auditor });
      expect(op.body.quarantined).toBe(true);
      // A fresh run id does not shed the quarantine (issue 17 finding 1).
      const rotated = await q.call("/v1/execute", {
        token: TOKENS.agentA,
        body: echo("hello", { runId: await q.run("run-q-rotated") }),
      });
      expect(rotated.body).toMatchObject({ decision: "deny" });
      expect(rotated.body.reasonCodes).toContain("quarantined");
    } finally {
      await q.stop();
    }
  });

  it("reports budgets with what is left", async () => {
    const b = await startTestSidecar({
      config: {
        gate: {
          principals: [
            { id: "agent-a", roles: ["agent"] },
            { id: "agent-b", roles: ["agent"] },
          ],
          context: { budgets: { toolCalls: 2 } },
        },
      },
    });
    try {
      await b.call("/v1/execute", {
        token: TOKENS.agentA,
        body: echo("one", { runId: await b.run("run-budget") }),
      });
      const st = await b.call(`/v1/runs/${await b.run("run-budget")}`, { token: TOKENS.agentA });
      expect(st.body.budgets).toEqual({ toolCalls: { used: 1, limit: 2, remaining: 1 } });
      await b.call("/v1/execute", {
        token: TOKENS.agentA,
        body: echo("two", { runId: await b.run("run-budget") }),
      });
      const third = await b.call("/v1/execute", {
        token: TOKENS.agentA,
        body: echo("three", { runId: await b.run("run-budget") }),
      });
      expect(third.body.reasonCodes).toContain("budget_tool_calls_exhausted");
      const end = await b.call(`/v1/runs/${await b.run("run-budget")}`, { token: TOKENS.agentA });
      expect(end.body.budgets).toEqual({ toolCalls: { used: 2, limit: 2, remaining: 0 } });
    } finally {
      await b.stop();
    }
  });

  it("answers 404 for a run that does not exist", async () => {
    const r = await s.call("/v1/runs/never-seen", { token: TOKENS.agentA });
    expect(r.status).toBe(404);
    expect(code(r)).toBe("ERR_SERVER_RUN_NOT_FOUND");
  });
});

describe("step-up approvals across two clients", () => {
  it("approve: the agent's blocked execute resumes and runs, with a signed HITL record", async () => {
    const before = s.service.hits.filter((h) => h.url === "/publish").length;
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-approve"), tool: "publish", parameters: { text: "release notes" } },
    });
    const item = await pendingFor(await s.run("run-approve"));
    expect(item.kind).toBe("step_up");
    expect(item.action?.parameters).toEqual({ text: "release notes" });
    // Nothing has run while the call waits.
    expect(s.service.hits.filter((h) => h.url === "/publish").length).toBe(before);

    const d = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "reviewed the text, fine" },
    });
    expect(d.status).toBe(200);
    expect(d.body).toEqual({ ok: true, id: item.id, outcome: "approve" });

    const r = await agent;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      decision: "allow",
      policyDecision: "step_up",
      approval: { outcome: "approve", approver: "alice" },
      result: { ok: true, output: { ok: true, method: "POST" }, httpStatus: 200 },
    });
    const hits = s.service.hits.filter((h) => h.url === "/publish");
    expect(hits.length).toBe(before + 1);
    expect(JSON.parse(hits.at(-1)?.body ?? "{}")).toEqual({ text: "release notes" });
    const [hitl] = await s.server.runtime.store.query({
      type: "dare.hitl.decision",
      run_id: await s.run("run-approve"),
    });
    expect(hitl?.body).toMatchObject({
      approval_id: (r.body.approval as { hitlId: string }).hitlId,
      decision: { approver_id: "alice", action: "approve" },
    });
  });

  it("deny: the blocked execute fails with the denial and nothing runs", async () => {
    const before = s.service.hits.length;
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: {
        runId: await s.run("run-deny-approval"),
        tool: "publish",
        parameters: { text: "secret plans" },
      },
    });
    const item = await pendingFor(await s.run("run-deny-approval"));
    const d = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "deny", justification: "not for publication" },
    });
    expect(d.status).toBe(200);
    const r = await agent;
    expect(r.body).toMatchObject({ decision: "deny", approval: { outcome: "deny", approver: "alice" } });
    expect((r.body.denial as { reasonCodes: string[] }).reasonCodes).toContain("approval_denied");
    expect(s.service.hits.length).toBe(before);
  });

  it("modify: the approver's parameters are executed, re-validated against the contract", async () => {
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-modify"), tool: "publish", parameters: { text: "draft with typo" } },
    });
    const item = await pendingFor(await s.run("run-modify"));
    const d = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "modify", justification: "fixed the typo first", parameters: { text: "final text" } },
    });
    expect(d.status).toBe(200);
    const r = await agent;
    expect(r.body).toMatchObject({
      decision: "modify",
      parameters: { text: "final text" },
      originalParameters: { text: "draft with typo" },
    });
    expect(JSON.parse(s.service.hits.at(-1)?.body ?? "{}")).toEqual({ text: "final text" });
  });

  it("timeout: no decision in the window means deny", async () => {
    const before = s.service.hits.length;
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-timeout"), tool: "quick_put", parameters: { text: "x" } },
    });
    expect(r.body).toMatchObject({ decision: "deny", approval: { outcome: "timeout" } });
    expect((r.body.denial as { reasonCodes: string[] }).reasonCodes).toContain("approval_timeout");
    expect(s.service.hits.length).toBe(before);
    const late = await s.call("/v1/approvals/whatever", {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "too late to matter" },
    });
    expect(late.status).toBe(404);
    expect(code(late)).toBe("ERR_APPROVAL_NOT_FOUND");
  });

  it("refuses approvers without the role, short justifications and malformed verdicts", async () => {
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-refusals"), tool: "publish", parameters: { text: "hello" } },
    });
    const item = await pendingFor(await s.run("run-refusals"));
    const auditor = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.auditor,
      body: { outcome: "approve", justification: "I am only an auditor" },
    });
    expect(auditor.status).toBe(403);
    expect(code(auditor)).toBe("ERR_APPROVAL_FORBIDDEN");
    const short = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "ok" },
    });
    expect(short.status).toBe(400);
    expect(code(short)).toBe("ERR_SERVER_REQUEST_INVALID");
    const blank = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "          " },
    });
    expect(blank.status).toBe(400);
    expect(code(blank)).toBe("ERR_APPROVAL_INVALID");
    const stray = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "looks right to me", parameters: { text: "sneaky" } },
    });
    expect(stray.status).toBe(400);
    expect(code(stray)).toBe("ERR_SERVER_REQUEST_INVALID");
    // Still pending after all of that; a real decision ends it.
    const ok = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "deny", justification: "closing this test item" },
    });
    expect(ok.status).toBe(200);
    expect((await agent).body.decision).toBe("deny");
  });

  it("a rewrite the contract rejects is denied, not executed", async () => {
    const before = s.service.hits.length;
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId: await s.run("run-bad-modify"), tool: "publish", parameters: { text: "short" } },
    });
    const item = await pendingFor(await s.run("run-bad-modify"));
    await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: {
        outcome: "modify",
        justification: "expanding the message",
        parameters: { text: "y".repeat(500) },
      },
    });
    const r = await agent;
    expect(r.body.decision).toBe("deny");
    expect((r.body.reasonCodes as string[]).some((c) => c.startsWith("contract_param_invalid:text"))).toBe(
      true,
    );
    expect(s.service.hits.length).toBe(before);
  });

  it("cancels the approval wait when the agent disconnects", async () => {
    const ac = new AbortController();
    const agent = fetch(`${s.url}/v1/execute`, {
      method: "POST",
      signal: ac.signal,
      headers: { authorization: `Bearer ${TOKENS.agentA}`, "content-type": "application/json" },
      body: JSON.stringify({ runId: await s.run("run-gone"), tool: "publish", parameters: { text: "bye" } }),
    }).catch((e: Error) => e);
    const goneRun = await s.run("run-gone");
    await pendingFor(goneRun);
    ac.abort();
    await agent;
    await until(async () => {
      const r = await s.call("/v1/approvals", { token: TOKENS.approver });
      return (r.body.pending as Pending[]).some((p) => p.runId === goneRun) ? undefined : true;
    });
    const [res] = await s.server.runtime.store.query({
      type: "warden.gate.resolution",
      run_id: await s.run("run-gone"),
    });
    expect(res?.body).toMatchObject({ resolved: "deny", outcome: "cancelled" });
  });
});

describe("deferred actions", () => {
  it("lists a deferred decision and releases it on an operator's word", async () => {
    const r0 = loose.call("/v1/decide", {
      token: TOKENS.agentA,
      body: {
        runId: await loose.run("run-defer"),
        toolClass: "file",
        action: "delete",
        parameters: { path: "a.txt" },
      },
    });
    // decide does not wait: the deferral is returned, not held.
    expect((await r0).body.decision).toBe("defer");
    const deferRun = await loose.run("run-defer");
    const list = await loose.call("/v1/approvals", { token: TOKENS.approver });
    expect((list.body.pending as Pending[]).some((p) => p.runId === deferRun)).toBe(false);
  });

  it("refuses a deferred-item decision from an operator without the approver role", async () => {
    const gate = loose.server.runtime.gate;
    const held = gate.authorize({
      principalId: "agent-a",
      runId: await loose.run("run-defer-2"),
      toolClass: "file",
      action: "delete",
      parameters: { path: "b.txt" },
    });
    const item = await pendingFor(await loose.run("run-defer-2"), loose);
    expect(item.kind).toBe("defer");
    const auditor = await loose.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.auditor,
      body: { outcome: "approve", justification: "auditors cannot release" },
    });
    expect(auditor.status).toBe(403);
    expect(code(auditor)).toBe("ERR_APPROVAL_FORBIDDEN");
    const ok = await loose.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification: "batch window reached" },
    });
    expect(ok.status).toBe(200);
    const out = await held;
    expect(out).toMatchObject({ decision: "allow", reasonCodes: expect.arrayContaining(["defer_released"]) });
    await gate.recordResult(out.decisionId as DecisionId, {});
  });
});
