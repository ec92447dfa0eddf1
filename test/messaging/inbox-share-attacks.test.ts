// Issue 37 fair shares: one sender must not take a recipient's inbox (or every inbox)
// from the others. Mallory floods the executor's inbox; at its share the flood is refused
// (ERR_MESSAGE_INBOX_FULL, 429) and the planner's delegation still reaches the executor.
import { afterEach, describe, expect, it } from "vitest";
import { type Agents, POLICY, sealFor, twoAgents } from "./harness.js";

const OPEN = `${POLICY}
  - id: mallory-may-write
    name: mallory may send tasks to the executor
    priority: 100
    match: { toolClass: message, message: { from: mallory, to: executor, payloadType: delegate_task } }
    decision: allow
    reason: open inbox
`;

let a: Agents | undefined;
afterEach(async () => {
  await a?.rt.close();
  a = undefined;
});

describe("one sender fills a recipient's inbox", () => {
  it("a flood from one sender stops at its share; another sender's message still gets in", async () => {
    a = await twoAgents({ policy: OPEN, inbox: { maxPerRecipient: 16 } });
    const x = a;
    const mallory = await x.rt.startRun("mallory");
    const outcomes = [];
    for (let i = 0; i < 16; i++)
      outcomes.push(
        await x.rt.messages.gate.submit(
          sealFor(x, x.mallory, x.executor, { runId: mallory.runId }),
          "mallory",
        ),
      );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(4); // a quarter of maxPerRecipient
    expect(outcomes.find((o) => !o.ok)).toMatchObject({ code: "ERR_MESSAGE_INBOX_FULL" });
    const planner = await x.rt.startRun("planner");
    const honest = await x.rt.messages.gate.submit(
      sealFor(x, x.planner, x.executor, { runId: planner.runId }),
      "planner",
    );
    expect(honest.ok).toBe(true);
    expect(x.rt.messages.gate.pending("executor")).toBe(5);
    // Delivered messages free the sender's share again.
    await x.rt.messages.gate.receive("executor", 5);
    expect(
      (
        await x.rt.messages.gate.submit(
          sealFor(x, x.mallory, x.executor, { runId: mallory.runId }),
          "mallory",
        )
      ).ok,
    ).toBe(true);
  });
});
