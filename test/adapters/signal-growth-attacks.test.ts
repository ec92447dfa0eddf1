// The adapters joined each call's wait bound with the framework's signal through
// `AbortSignal.any`; a framework that passes one long-lived signal to every tool call (its
// agent's, its application's shutdown) kept one entry per call in it, never pruned in Node
// 20–24 (nodejs/node#55351). A call now follows the signal only while it runs (`timedScope`).
// Both modes: a runtime composed in-process, a real sidecar on loopback. Sizes measured,
// never time; a cancelled payment is shown not to have reached the payment endpoint.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { governedTools } from "../../src/adapters/index.js";
import { heldBy } from "../helpers/abort-held.js";
import { until } from "../helpers/until.js";
import { APPROVER_TOKEN, type Both, MODES, type Mode, openBoth } from "./world.js";

const CALLS = 150;
let b: Both;

beforeAll(async () => {
  b = await openBoth("20s");
});
afterAll(async () => {
  await b?.close();
});

/** Whether a step-up of `runId` is waiting for an approver, in that mode's approval queue. */
async function waiting(mode: Mode, runId: string): Promise<true | undefined> {
  if (mode === "library") return b.rt.approvals.pending().some((p) => p.runId === runId) || undefined;
  const r = await fetch(`${b.side.url}/v1/approvals`, {
    headers: { authorization: `Bearer ${APPROVER_TOKEN}` },
  });
  const { pending } = (await r.json()) as { pending: { runId: string }[] };
  return pending.some((p) => p.runId === runId) || undefined;
}

describe.each(MODES)("a framework's long-lived signal grows with every tool call, %s mode", (mode) => {
  it(`${CALLS} governed calls on one signal leave nothing with it`, async () => {
    const app = new AbortController();
    const [page] = governedTools(b.target(mode), ["fetch_page"]);
    for (let i = 0; i < CALLS; i++) {
      const o = await page!.call({ page: "pricing" }, { signal: app.signal });
      expect(o.kind).toBe("allowed");
    }
    expect(heldBy(app.signal)).toBe(0);
  });

  it("a payment waiting for its approver still ends when the signal aborts: nothing paid, nothing left with it", async () => {
    const app = new AbortController();
    const target = b.target(mode);
    const [pay] = governedTools(target, ["pay"]);
    const before = b.w.service.reached("/pay");
    const pending = pay!.call({ amount: 25 }, { signal: app.signal });
    const runId = await target.runId();
    await until(() => waiting(mode, runId), 10_000);
    expect(heldBy(app.signal)).toBe(1); // the one call in flight
    app.abort(new Error("the agent was stopped"));
    const o = await pending;
    expect(o.kind).not.toBe("allowed");
    expect(heldBy(app.signal)).toBe(0);
    expect(b.w.service.reached("/pay")).toBe(before);
  });
});
