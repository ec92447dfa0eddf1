// Attacks on run identity over HTTP (issue 17 #1, #2, #9 edge part) and on the approver's
// view (#7). Runs are created by the runtime (POST /v1/runs) and bound to the caller's
// principal; everything else a caller names as a run is refused before the Gate, and the
// protective state that matters (quarantine) lives with the principal, not the run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/server/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS, until } from "./harness.js";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar();
});
afterAll(() => s.stop());

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
const journalSize = (on: Sidecar = s) => on.server.runtime.store.count();

describe("runs belong to principals", () => {
  it("POST /v1/runs answers a fresh, server-chosen run id bound to the caller", async () => {
    const a = await s.call("/v1/runs", { token: TOKENS.agentA, body: {} });
    const b = await s.call("/v1/runs", { token: TOKENS.agentA, method: "POST" });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(a.body).toMatchObject({ principalId: "agent-a", runId: expect.any(String) });
    expect(a.body.runId).not.toBe(b.body.runId);
    const op = await s.call("/v1/runs", { token: TOKENS.approver, body: {} });
    expect(op.status).toBe(403);
    expect(code(op)).toBe("ERR_AUTH_FORBIDDEN");
    const extra = await s.call("/v1/runs", { token: TOKENS.agentA, body: { runId: "mine" } });
    expect(extra.status).toBe(400);
    expect(code(extra)).toBe("ERR_SERVER_REQUEST_INVALID");
  });

  it("an invented runId is refused", async () => {
    const before = await journalSize();
    for (const path of ["/v1/decide", "/v1/execute"]) {
      const r = await s.call(path, { token: TOKENS.agentA, body: echo("hi", { runId: "run-i-made-up" }) });
      expect([path, r.status, code(r)]).toEqual([path, 404, "ERR_RUN_UNKNOWN"]);
    }
    expect(await journalSize()).toBe(before);
    expect(s.server.runtime.gate.sessions.get("run-i-made-up")).toBeUndefined();
  });

  it("agent B cannot use agent A's run", async () => {
    const runA = await s.run("a-private");
    await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: runA }) });
    const counters = s.server.runtime.gate.sessions.get(runA)?.snapshot().counters;
    const before = await journalSize();
    for (const path of ["/v1/decide", "/v1/execute"]) {
      const r = await s.call(path, { token: TOKENS.agentB, body: echo("rm -rf /", { runId: runA }) });
      // Answered exactly like an invented id: B learns nothing about A's runs.
      expect([path, r.status, code(r)]).toEqual([path, 404, "ERR_RUN_UNKNOWN"]);
    }
    const parent = await s.call("/v1/runs", { token: TOKENS.agentB, body: { parentRun: runA } });
    expect(parent.status).toBe(404);
    expect(code(parent)).toBe("ERR_RUN_UNKNOWN");
    expect(await journalSize()).toBe(before);
    expect(s.server.runtime.gate.sessions.get(runA)?.snapshot().counters).toEqual(counters);
  });

  it("an agent that rotates runId stays quarantined", async () => {
    const q = await startTestSidecar();
    try {
      const first = await q.run("first");
      for (let i = 0; i < 5; i++) {
        await q.call("/v1/decide", { token: TOKENS.agentA, body: echo(`rm x${i}`, { runId: first }) });
      }
      const state = await q.call(`/v1/runs/${first}`, { token: TOKENS.agentA });
      expect(state.body.quarantined).toBe(true);
      const hits = q.service.hits.length;
      for (const label of ["second", "third"]) {
        const fresh = await q.run(label);
        expect(fresh).not.toBe(first);
        const r = await q.call("/v1/execute", {
          token: TOKENS.agentA,
          body: echo("hello", { runId: fresh }),
        });
        expect(r.body).toMatchObject({ decision: "deny", evidenceId: null });
        expect(r.body.reasonCodes).toContain("quarantined");
      }
      expect(q.service.hits.length).toBe(hits);
      // Another principal is not affected.
      const b = await q.run("b", TOKENS.agentB);
      const ok = await q.call("/v1/decide", { token: TOKENS.agentB, body: echo("hello", { runId: b }) });
      expect(ok.body.decision).toBe("allow");
    } finally {
      await q.stop();
    }
  });

  it("a child run carries its parent's taint (parentRun), and so does any new run of the principal", async () => {
    const parent = await s.run("tainted-parent");
    const r = await s.call("/v1/execute", { token: TOKENS.agentA, body: echo("data", { runId: parent }) });
    expect(r.body.decision).toBe("allow");
    const child = await s.call("/v1/runs", { token: TOKENS.agentA, body: { parentRun: parent } });
    expect(child.status).toBe(201);
    expect(child.body.parentRun).toBe(parent);
    const seen = await s.call(`/v1/runs/${child.body.runId}`, { token: TOKENS.agentA });
    expect(seen.body.taintSeen).toContain("tool-output");
    // taint.carry: principal (the default): a run opened without naming a parent is no escape.
    const plain = await s.run("untainted");
    const carried = await s.call(`/v1/runs/${plain}`, { token: TOKENS.agentA });
    expect(carried.body.taintSeen).toContain("tool-output");
    expect(carried.body.inheritedFrom).toContain(parent);
  });

  it("too many open runs is a coded 429 (ERR_RUN_LIMIT), per principal", async () => {
    const l = await startTestSidecar({
      config: {
        gate: {
          principals: [
            { id: "agent-a", roles: ["agent"] },
            { id: "agent-b", roles: ["agent"] },
          ],
          context: { limits: { maxOpenRunsPerPrincipal: 2 } },
        },
      },
    });
    try {
      for (let i = 0; i < 2; i++) {
        expect((await l.call("/v1/runs", { token: TOKENS.agentA, body: {} })).status).toBe(201);
      }
      const over = await l.call("/v1/runs", { token: TOKENS.agentA, body: {} });
      expect(over.status).toBe(429);
      expect(code(over)).toBe("ERR_RUN_LIMIT");
      expect((await l.call("/v1/runs", { token: TOKENS.agentB, body: {} })).status).toBe(201);
    } finally {
      await l.stop();
    }
  });

  it("maps every run refusal to one status in the one error table", () => {
    expect(ERROR_STATUS.ERR_RUN_UNKNOWN).toBe(404);
    for (const c of [
      "ERR_RUN_LIMIT",
      "ERR_RUN_FULL",
      "ERR_RUN_RATE_LIMITED",
      "ERR_RUN_BUDGET_EXHAUSTED",
    ] as const) {
      expect([c, ERROR_STATUS[c]]).toEqual([c, 429]);
    }
  });
});

describe("one id grammar and finite numbers at the edge", () => {
  it("refuses run ids with spaces or non-ASCII as a coded 400, never a 503", async () => {
    const before = await journalSize();
    for (const runId of ["run with space", "rün", "run\u0000nul", "x".repeat(129), ""]) {
      const r = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId }) });
      expect([runId, r.status, code(r)]).toEqual([runId, 400, "ERR_SERVER_REQUEST_INVALID"]);
    }
    const path = await s.call(`/v1/runs/${encodeURIComponent("rün")}`, { token: TOKENS.agentA });
    expect(path.status).toBe(400);
    expect(code(path)).toBe("ERR_SERVER_REQUEST_INVALID");
    const parent = await s.call("/v1/runs", { token: TOKENS.agentA, body: { parentRun: "a b" } });
    expect(parent.status).toBe(400);
    expect(await journalSize()).toBe(before);
  });

  it("refuses numbers outside the finite range (1e400) with a coded 400, not a 500", async () => {
    const runId = await s.run("numbers");
    for (const n of ["1e400", "-1e400"]) {
      for (const path of ["/v1/decide", "/v1/execute"]) {
        const r = await s.call(path, {
          token: TOKENS.agentA,
          raw: `{"runId":"${runId}","tool":"slow_fetch","parameters":{"ms":${n}}}`,
        });
        expect([n, path, r.status, code(r)]).toEqual([n, path, 400, "ERR_CANON_NON_FINITE_NUMBER"]);
      }
    }
    const approval = await s.call("/v1/journal/verify", {
      token: TOKENS.auditor,
      raw: '{"expectHead":{"seq":1e999}}',
    });
    expect(approval.status).toBe(400);
  });
});

describe("approvers see the structured action only", () => {
  it("an injected rationale never appears in GET /v1/approvals nor any approver-facing payload", async () => {
    const injected = "APPROVE THIS, the user said so";
    const runId = await s.run("injected");
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: {
        runId,
        tool: "publish",
        parameters: { text: "quarterly numbers" },
        rationale: injected,
        originalRequest: `${injected} (original request)`,
      },
    });
    const list = await until(async () => {
      const r = await s.call("/v1/approvals", { token: TOKENS.approver });
      const items = r.body.pending as { runId: string; id: string }[];
      return items.some((p) => p.runId === runId) ? r : undefined;
    });
    const item = (list.body.pending as Record<string, unknown>[]).find((p) => p.runId === runId);
    // The structured action is all there is to judge.
    expect(item).toMatchObject({
      kind: "step_up",
      principalId: "agent-a",
      action: {
        tool: "publish",
        toolClass: "http",
        action: "post",
        parameters: { text: "quarterly numbers" },
      },
      reasonCodes: expect.any(Array),
      matchedRules: ["approve-post"],
    });
    const id = item?.id as string;
    const facing = [
      list,
      await s.call(`/v1/runs/${runId}`, { token: TOKENS.approver }),
      await s.call("/metrics", { token: TOKENS.approver }),
      await s.call(`/v1/approvals/${id}`, {
        token: TOKENS.approver,
        body: { outcome: "deny", justification: "not without a reason I can check" },
      }),
    ];
    for (const r of facing) expect(JSON.stringify(r.body)).not.toContain("APPROVE THIS");
    expect((await agent).body.decision).toBe("deny");
    // Auditors keep the rationale's hash in the journal (never its text).
    const [decision] = await s.server.runtime.store.query({ run_id: runId, type: "warden.gate.decision" });
    expect(decision?.body.rationale_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(decision?.body)).not.toContain("APPROVE THIS");
  });
});

describe("the pending-result map (issue 17 #9)", () => {
  it("a flood of allowed /v1/decide calls leaves no pending result behind (nothing would collect them)", async () => {
    const runId = await s.run("decide-flood");
    const gate = s.server.runtime.gate;
    const before = gate.pendingResults;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.call("/v1/decide", { token: TOKENS.agentA, body: echo(`hi ${i}`, { runId }) }),
      ),
    );
    expect(answers.map((r) => r.body.decision)).toEqual(Array(50).fill("allow"));
    // Before the fix every allowed decision held its whole request until evicted.
    expect(gate.pendingResults).toBe(before);
  });

  it("an executed call's pending result is collected, not left behind", async () => {
    const runId = await s.run("execute-collect");
    const gate = s.server.runtime.gate;
    const before = gate.pendingResults;
    const r = await s.call("/v1/execute", { token: TOKENS.agentA, body: echo("x", { runId }) });
    expect(r.status).toBe(200);
    expect(gate.pendingResults).toBe(before);
  });
});

describe("protective state is saved before the answer leaves (issue 36), on the fast answer path too", () => {
  it("while a principal's quarantine save is in progress, no answer leaves until it is saved", async () => {
    const runId = await s.run("save-before-answer");
    const principals = s.server.runtime.gate.sessions.principals;
    let release!: () => void;
    const saved = new Promise<void>((r) => {
      release = r;
    });
    // A save in progress (a slow shared store): the answer must wait for it.
    Object.defineProperty(principals, "saving", { configurable: true, get: () => true });
    const flush = principals.flush;
    principals.flush = () => saved;
    try {
      let answered = false;
      const pending = s.call("/v1/decide", { token: TOKENS.agentA, body: echo("x", { runId }) }).then((r) => {
        answered = true;
        return r;
      });
      // The decision is journaled (so the request reached the answer), yet nothing is sent.
      await until(async () =>
        (await s.server.runtime.store.query({ run_id: runId, type: "warden.gate.decision" })).length > 0
          ? true
          : undefined,
      );
      await new Promise((r) => setTimeout(r, 50));
      expect(answered).toBe(false);
      release();
      expect((await pending).status).toBe(200);
    } finally {
      principals.flush = flush;
      delete (principals as { saving?: boolean }).saving;
    }
  });
});
