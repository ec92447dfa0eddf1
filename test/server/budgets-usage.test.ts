// The sidecar's /v1/execute reports what the HTTP executor used with each result: an agent
// that pulls a large download through many small calls is denied once its run's
// network-bytes budget is spent, and the service sees no request after that.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const BODY = JSON.stringify({ ok: true, method: "GET", got: 0 }).length;
let sidecar: Sidecar;

beforeAll(async () => {
  sidecar = await startTestSidecar({
    config: {
      gate: {
        tenant: "test",
        environment: "test",
        principals: [
          { id: "agent-a", roles: ["agent"] },
          { id: "agent-b", roles: ["agent"] },
        ],
        context: { budgets: { networkBytes: 3 * BODY - 1 } },
      },
    },
  });
});

afterAll(async () => {
  await sidecar?.stop();
});

describe("sidecar: executor usage meters the run's budgets", () => {
  it("an agent that streams a large download in many small calls is stopped at the network-bytes budget", async () => {
    const runId = await sidecar.run("download");
    const decisions: unknown[] = [];
    let last: Record<string, unknown> = {};
    for (let i = 0; i < 5; i++) {
      const r = await sidecar.call("/v1/execute", {
        token: TOKENS.agentA,
        body: { runId, toolClass: "http", action: "get", tool: "slow_fetch", parameters: { ms: 0 } },
      });
      expect(r.status).toBe(200);
      decisions.push(r.body.decision);
      last = r.body;
    }
    // Two calls stay under the budget, the third spends it; the rest never leave.
    expect(decisions).toEqual(["allow", "allow", "allow", "deny", "deny"]);
    expect(sidecar.service.hits).toHaveLength(3);
    expect(JSON.stringify(last)).toContain("budget_network_bytes_exhausted");
    const state = await sidecar.call(`/v1/runs/${runId}`, { token: TOKENS.agentA });
    expect(state.body.budgets).toMatchObject({ networkBytes: { used: 3 * BODY, remaining: 0 } });
  });
});
