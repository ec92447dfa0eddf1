// POST /v1/runs/:id/capabilities as attacks: an agent cannot mint a capability for its own
// run, a read-only operator cannot either, an approver can; the token then lets the call
// through a rule that requires one, and a token for agent A's run is useless to agent B.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const POLICY = `
rules:
  - { id: echo-with-cap, name: echo, priority: 100, match: { toolClass: shell, action: exec, capability: true }, decision: allow, reason: granted }
`;

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({ policy: POLICY });
});
afterAll(() => s.stop());

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
const GRANT = { tool: "echo_tool", constraints: { msg: { in: ["hello"] } }, maxUses: 2, ttl: "5m" };

describe("POST /v1/runs/:id/capabilities", () => {
  it("an agent that grants itself a capability for its own run is refused", async () => {
    const run = await s.run("self-grant");
    const r = await s.call(`/v1/runs/${run}/capabilities`, { token: TOKENS.agentA, body: GRANT });
    expect([r.status, code(r)]).toEqual([403, "ERR_AUTH_FORBIDDEN"]);
  });

  it("a read-only operator (auditor) cannot grant", async () => {
    const run = await s.run("auditor-grant");
    const r = await s.call(`/v1/runs/${run}/capabilities`, { token: TOKENS.auditor, body: GRANT });
    expect([r.status, code(r)]).toEqual([403, "ERR_AUTH_FORBIDDEN"]);
  });

  it("an approver grants; the call passes with the token only, within its constraints and uses", async () => {
    const run = await s.run("granted");
    const g = await s.call(`/v1/runs/${run}/capabilities`, { token: TOKENS.approver, body: GRANT });
    expect(g.status).toBe(201);
    expect(g.body).toMatchObject({
      runId: run,
      principalId: "agent-a",
      maxUses: 2,
      scope: { tool: "echo_tool" },
    });
    const token = g.body.token as string;
    const decide = (body: unknown) => s.call("/v1/decide", { token: TOKENS.agentA, body });
    expect((await decide(echo("hello", { runId: run }))).body.decision).toBe("deny");
    expect((await decide(echo("hello", { runId: run, capability: token }))).body.decision).toBe("allow");
    const outside = await decide(echo("goodbye", { runId: run, capability: token }));
    expect(outside.body).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_CONSTRAINT"] });
    expect((await decide(echo("hello", { runId: run, capability: token }))).body.decision).toBe("allow");
    const spent = await decide(echo("hello", { runId: run, capability: token }));
    expect(spent.body).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_EXHAUSTED"] });
  });

  it("agent B presenting agent A's token in B's own run is denied ERR_CAPABILITY_SCOPE", async () => {
    const runA = await s.run("victim");
    const runB = await s.run("thief", TOKENS.agentB);
    const g = await s.call(`/v1/runs/${runA}/capabilities`, { token: TOKENS.approver, body: GRANT });
    const r = await s.call("/v1/decide", {
      token: TOKENS.agentB,
      body: echo("hello", { runId: runB, principalId: "agent-b", capability: g.body.token }),
    });
    expect(r.body).toMatchObject({ decision: "deny", reasonCodes: ["ERR_CAPABILITY_SCOPE"] });
  });

  it("an unknown run is 404 and bad terms are 400 with their code", async () => {
    const missing = await s.call("/v1/runs/run-nope/capabilities", { token: TOKENS.approver, body: GRANT });
    expect([missing.status, code(missing)]).toEqual([404, "ERR_SERVER_RUN_NOT_FOUND"]);
    const run = await s.run("bad-terms");
    const both = await s.call(`/v1/runs/${run}/capabilities`, {
      token: TOKENS.approver,
      body: { ...GRANT, toolClass: "shell" },
    });
    expect([both.status, code(both)]).toEqual([400, "ERR_SERVER_REQUEST_INVALID"]);
    const unsafe = await s.call(`/v1/runs/${run}/capabilities`, {
      token: TOKENS.approver,
      body: { ...GRANT, constraints: { msg: { pattern: "(a+)+$" } } },
    });
    expect([unsafe.status, code(unsafe)]).toEqual([400, "ERR_CAPABILITY_GRANT_INVALID"]);
  });
});
