// A run's abort signal serves every step of the run (model calls, Gate decisions,
// executions), and a host may pass one signal (its shutdown) to every run. Each step joined
// it with the run's time bound through `AbortSignal.any`, which in Node 20–24
// (nodejs/node#55351) leaves an entry per step in the long-lived signal's dependant set,
// never pruned: a long-lived agent grew with every step. Steps now follow the signal only
// while they run (`withStepSignal`, src/contracts/abort-scope.ts `timedScope`). Sizes are
// measured, never time.
import { describe, expect, it } from "vitest";
import { type ModelAdapter, type ModelResponse, runLoop } from "../../src/loop/index.js";
import { heldBy } from "../helpers/abort-held.js";
import { FakeCatalog, FakeExecutor, FakeGate, MemoryJournal, RecordingModel, type Turn } from "./fakes.js";

const RUNS = 40;
const TURNS = 25;
const fetchTurn: Turn = { calls: [{ name: "fetch_page", arguments: { url: "http://127.0.0.1/page" } }] };

function options(model: ModelAdapter, signal: AbortSignal) {
  return {
    model,
    gate: new FakeGate(),
    executor: new FakeExecutor(),
    journal: new MemoryJournal(),
    tools: new FakeCatalog(),
    principalId: "agent-1",
    task: "summarise the page",
    limits: { maxIterations: TURNS + 1 },
    signal,
  };
}

describe("a host's long-lived signal grows with every step of every run", () => {
  it("40 runs of 25 tool-calling turns (3,000 steps) on one signal leave nothing with it", async () => {
    const host = new AbortController();
    for (let r = 0; r < RUNS; r++) {
      const model = new RecordingModel([...Array.from({ length: TURNS }, () => fetchTurn), { text: "done" }]);
      const result = await runLoop(options(model, host.signal));
      expect(result.reason).toBe("final_answer");
    }
    expect(heldBy(host.signal)).toBe(0);
  });

  it("a model call in flight still aborts when the host's signal does: the run ends 'aborted'", async () => {
    const host = new AbortController();
    let waiting: (() => void) | undefined;
    const started = new Promise<void>((r) => {
      waiting = r;
    });
    const hanging: ModelAdapter = {
      id: "hanging",
      complete: (_req, o = {}) =>
        new Promise<ModelResponse>((_resolve, reject) => {
          o.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
          waiting?.();
        }),
    };
    const run = runLoop(options(hanging, host.signal));
    await started;
    expect(heldBy(host.signal)).toBe(1); // the one step in flight
    host.abort(new Error("host shutting down"));
    const result = await run;
    expect(result.reason).toBe("aborted");
    expect(heldBy(host.signal)).toBe(0);
  });
});
