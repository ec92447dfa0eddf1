// Issue 17 #8 over HTTP: what an agent reads of a failed execution. The executor's error
// can quote the failed request and the tool's own output; the agent gets a cleaned first
// line, and the failure counts as tool output in the run's taint (the detail stays in the
// evidence and the journal). The cleaning itself is property-tested with agentErrorText
// (test/loop); this file holds the HTTP side of it as a regression test.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar();
  // The tool's upstream is gone: every http tool call fails in the executor.
  await s.service.close();
});
afterAll(() => s.stop());

describe("a failed execution as the agent sees it", () => {
  it("a tool failure taints the run as tool output and its text is one cleaned line", async () => {
    const runId = await s.run("fails");
    const r = await s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId, tool: "slow_fetch", parameters: { ms: 0 } },
    });
    expect(r.status).toBe(200);
    const result = r.body.result as { ok: boolean; message: string };
    expect(result.ok).toBe(false);
    expect(result.message).not.toMatch(/\n|\/(?:work|tmp|usr|home|root)\//);
    expect(result.message.length).toBeLessThanOrEqual(301);
    const state = await s.call(`/v1/runs/${runId}`, { token: TOKENS.agentA, method: "GET" });
    expect(state.body.taintSeen).toContain("tool-output");
  });
});
