// The cost of the ORGA typestate: one whole run (start, a turn with one tool call, a
// final-answer turn) through the loop with in-memory ports, against the same port calls
// made directly in the same order (the baseline: what an ungoverned loop would do).
import { performance } from "node:perf_hooks";
import type { GateRequestInput } from "../src/contracts/index.js";
import {
  type ExecutorPort,
  type GatePort,
  type JournalPort,
  type LoopEvent,
  type ModelAdapter,
  type ModelRequest,
  type ModelResponse,
  runLoop,
  type ToolCatalog,
} from "../src/loop/index.js";
import { type Stats, summarize, table } from "./_stats.js";

const usage = { inputTokens: 10, outputTokens: 5 };
const callTurn: ModelResponse = {
  text: null,
  toolCalls: [{ id: "c1", name: "fetch_page", arguments: { ok: true, value: { url: "http://127.0.0.1/" } } }],
  usage,
};
const finalTurn: ModelResponse = { text: "done", toolCalls: [], usage };

function model(): ModelAdapter {
  let i = 0;
  return {
    id: "bench",
    complete: async (_req: ModelRequest) => (i++ % 2 === 0 ? callTurn : finalTurn),
  };
}

const ticket = {};
const gate: GatePort = {
  decide: async (_r: GateRequestInput) => ({ decision: "allow", decisionId: "d", reasons: [], ticket }),
};
const executor: ExecutorPort = { execute: async () => ({ ok: true, output: "page" }) };
let appended = 0;
const journal: JournalPort = {
  append: (_e: LoopEvent) => {
    appended += 1;
  },
};
const tools: ToolCatalog = {
  modelTools: () => [{ name: "fetch_page", description: "fetch", inputSchema: { type: "object" } }],
  resolve: (name, args) => ({ ok: true, toolClass: "http", action: "get", tool: name, parameters: args }),
};

async function measureAsync(name: string, n: number, fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < Math.min(500, n); i++) await fn();
  const samples = new Float64Array(n);
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples[i] = (performance.now() - t0) * 1000;
  }
  return summarize(name, samples, performance.now() - start);
}

async function direct(): Promise<void> {
  const m = model();
  const req: ModelRequest = { messages: [{ role: "user", content: "task" }], tools: tools.modelTools() };
  journal.append({ type: "LoopStarted", run_id: "r", trace_id: "t", body: {} });
  const t1 = await m.complete(req);
  journal.append({ type: "ReasoningComplete", run_id: "r", trace_id: "t", body: {} });
  for (const c of t1.toolCalls) {
    if (!c.arguments.ok) continue;
    const r = tools.resolve(c.name, c.arguments.value);
    if (!r.ok) continue;
    const v = await gate.decide({ principalId: "a", runId: "r", toolClass: r.toolClass, action: r.action });
    if (v.ticket) await executor.execute(v.ticket);
  }
  for (const type of ["PolicyEvaluated", "ToolsDispatched", "ObservationsCollected"] as const) {
    journal.append({ type, run_id: "r", trace_id: "t", body: {} });
  }
  await m.complete(req);
  for (const type of [
    "ReasoningComplete",
    "PolicyEvaluated",
    "ToolsDispatched",
    "ObservationsCollected",
    "LoopTerminated",
  ] as const) {
    journal.append({ type, run_id: "r", trace_id: "t", body: {} });
  }
}

const N = 5_000;
const baseline = await measureAsync("direct port calls, no loop (baseline)", N, direct);
const governed = await measureAsync("runLoop: 2 turns, 1 tool call, 10 events", N, () =>
  runLoop({ model: model(), gate, executor, journal, tools, principalId: "agent", task: "task" }),
);
process.stdout.write(`## ORGA loop overhead (in-memory ports)\n\n${table([baseline, governed], baseline)}\n`);
if (appended === 0) throw new Error("journal port never called");
