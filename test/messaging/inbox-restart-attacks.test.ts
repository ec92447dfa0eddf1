// Issue 37 loose end: inter-agent inbox contents were lost on restart — a delegation the
// communication gate accepted (and journaled as sent) silently vanished if the process
// restarted before the recipient read it. Waiting messages now persist beside the nonce
// store (PostgreSQL's inbox_items in distributed mode) and are served after the restart,
// with their cross-agent context (taint) intact, exactly once.
import { afterEach, describe, expect, it } from "vitest";
import { type Agents, sealFor, twoAgents } from "./harness.js";

let live: Agents | undefined;
afterEach(async () => {
  await live?.rt.close();
  live = undefined;
});

describe("inbox contents lost on restart", () => {
  it("a message accepted before a restart is delivered after it, once, with its taint", async () => {
    const first = await twoAgents();
    const run = await first.rt.startRun("planner");
    const fetch = await first.rt.gate.evaluate({
      principalId: "planner",
      runId: run.runId,
      toolClass: "http",
      action: "get",
      parameters: { url: "https://news.example/a" },
    });
    await first.rt.gate.recordResult(fetch.decisionId!, {
      taintLabels: [{ source: "web", origin: "https://news.example/a" }],
    });
    const sent = await first.rt.messages.gate.submit(
      sealFor(first, first.planner, first.executor, { runId: run.runId }),
      "planner",
    );
    expect(sent.ok).toBe(true);
    await first.rt.close();
    const second = await twoAgents({ reopen: first });
    live = second;
    expect(second.rt.messages.gate.pending("executor")).toBe(1);
    const got = await second.rt.messages.gate.receive("executor");
    expect(got).toHaveLength(1);
    expect(got[0]!.context.taint.map((t) => t.source)).toContain("web");
    expect(
      second.rt.sessions
        .run(got[0]!.runId, "executor")
        .taintSeen()
        .map((t) => t.source),
    ).toContain("web");
    await second.rt.close();
    live = await twoAgents({ reopen: first });
    expect(live.rt.messages.gate.pending("executor")).toBe(0);
  });
});
