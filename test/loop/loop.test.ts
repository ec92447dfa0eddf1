import { describe, expect, it } from "vitest";
import { hasErrorCode, LoopError } from "../../src/contracts/index.js";
import {
  Dispatching,
  type LoopOptions,
  Observing,
  PolicyCheck,
  Reasoning,
  runLoop,
  startLoop,
} from "../../src/loop/index.js";
import {
  FakeCatalog,
  FakeExecutor,
  FakeGate,
  type FakeTicket,
  MemoryJournal,
  observationFor,
  RecordingModel,
  type Turn,
  WEB,
} from "./fakes.js";

function setup(
  turns: ConstructorParameters<typeof RecordingModel>[0],
  over: Partial<LoopOptions<FakeTicket>> = {},
) {
  const model = new RecordingModel(turns);
  const gate = over.gate instanceof FakeGate ? over.gate : new FakeGate();
  const executor = over.executor instanceof FakeExecutor ? over.executor : new FakeExecutor();
  const journal = new MemoryJournal();
  const tools = new FakeCatalog();
  const options: LoopOptions<FakeTicket> = {
    model,
    gate,
    executor,
    journal,
    tools,
    principalId: "agent-1",
    task: "summarise the page",
    ...over,
  };
  return { model, gate, executor, journal, tools, options };
}

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (err) {
    expect((err as LoopError).code).toBe(code);
    return;
  }
  throw new Error(`expected ${code}`);
}

async function expectAsyncCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LoopError);
  expect((err as LoopError).code).toBe(code);
}

const fetchTurn: Turn = { calls: [{ name: "fetch_page", arguments: { url: "http://127.0.0.1/page" } }] };

describe("the ORGA loop: legal path and journal", () => {
  it("runs Reason → Gate → Act → Observe until a final answer and records every phase (OATS §8.2)", async () => {
    const { options, journal, executor, model } = setup([fetchTurn, { text: "The page says hello." }]);
    const result = await runLoop(options);
    expect(result.phase).toBe("terminated");
    expect(result.reason).toBe("final_answer");
    expect(result.finalText).toBe("The page says hello.");
    expect(result.iterations).toBe(2);
    expect(result.usage).toEqual({ inputTokens: 20, outputTokens: 10 });
    expect(result.decisions.allow).toBe(1);
    expect(result.toolCalls).toBe(1);
    expect(executor.executed.map((e) => e.tool)).toEqual(["fetch_page"]);
    expect(journal.types()).toEqual([
      "LoopStarted",
      "ReasoningComplete",
      "PolicyEvaluated",
      "ToolsDispatched",
      "ObservationsCollected",
      "ReasoningComplete",
      "PolicyEvaluated",
      "ToolsDispatched",
      "ObservationsCollected",
      "LoopTerminated",
    ]);
    const started = journal.last("LoopStarted").body;
    expect(started.agent_id).toBe("agent-1");
    expect(started.request).toBe("summarise the page");
    expect((started.config as { tools: string[] }).tools).toEqual(["fetch_page", "read_file", "http_post"]);
    const term = journal.last("LoopTerminated").body;
    expect(term).toMatchObject({
      reason: "final_answer",
      iterations: 2,
      usage: { input_tokens: 20, output_tokens: 10 },
    });
    expect(typeof term.duration_ms).toBe("number");
    expect(new Set(journal.events.map((e) => e.run_id))).toEqual(new Set([result.runId]));
    expect(new Set(journal.events.map((e) => e.trace_id))).toEqual(new Set([result.traceId]));
    // The model saw the tool's output as an observation tied to its call id.
    const obs = observationFor(model.requests[1], "m1_0");
    expect(obs.status).toBe("ok");
    // The model sees contract-derived schemas, never invocation details.
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["fetch_page", "read_file", "http_post"]);
  });

  it("exposes read-only views on every phase object", async () => {
    const { options } = setup([fetchTurn, { text: "done" }]);
    const r = await startLoop(options);
    expect(r.phase).toBe("reasoning");
    const p = await r.reason();
    expect(p.proposals.map((x) => x.name)).toEqual(["fetch_page"]);
    const d = await p.gate();
    expect(d.decisions[0]).toMatchObject({
      name: "fetch_page",
      decision: "allow",
      stage: "gate",
      dispatch: true,
    });
    const o = await d.act();
    expect(o.results[0]).toMatchObject({ status: "executed", decision: "allow", decisionId: "dec-1" });
    expect(Object.isFrozen(o.results[0])).toBe(true);
    const next = await o.observe();
    expect(next.phase).toBe("reasoning");
  });
});

describe("runtime enforcement behind the types", () => {
  it("a spent Reasoning throws ERR_LOOP_STALE_PHASE and does not call the model again", async () => {
    const { options, model } = setup([fetchTurn, fetchTurn]);
    const r = await startLoop(options);
    await r.reason();
    await expectAsyncCode(r.reason(), "ERR_LOOP_STALE_PHASE");
    expect(model.requests).toHaveLength(1);
  });

  it("a spent PolicyCheck cannot gate twice (one decision per proposal)", async () => {
    const { options, gate } = setup([fetchTurn]);
    const p = await (await startLoop(options)).reason();
    await p.gate();
    await expectAsyncCode(p.gate(), "ERR_LOOP_STALE_PHASE");
    expect(gate.requests).toHaveLength(1);
  });

  it("a spent Dispatching cannot dispatch twice (no replay of the Gate's tickets)", async () => {
    const { options, executor } = setup([fetchTurn]);
    const d = await (await (await startLoop(options)).reason()).gate();
    await d.act();
    await expectAsyncCode(d.act(), "ERR_LOOP_STALE_PHASE");
    expect(executor.executed).toHaveLength(1);
  });

  it("a spent Observing cannot branch twice", async () => {
    const { options } = setup([fetchTurn, { text: "x" }]);
    const o = await (await (await (await startLoop(options)).reason()).gate()).act();
    await o.observe();
    await expectAsyncCode(o.observe(), "ERR_LOOP_STALE_PHASE");
  });

  it("two concurrent transitions on one phase object: the second throws before anything runs", async () => {
    const { options, model } = setup([fetchTurn, fetchTurn]);
    const r = await startLoop(options);
    const first = r.reason();
    await expectAsyncCode(r.reason(), "ERR_LOOP_STALE_PHASE");
    await first;
    expect(model.requests).toHaveLength(1);
  });

  it("act() borrowed onto a PolicyCheck (skipping the Gate from JavaScript) is refused and executes nothing", async () => {
    const { options, executor, gate } = setup([fetchTurn]);
    const p = await (await startLoop(options)).reason();
    const act = Dispatching.prototype.act as unknown as (this: unknown) => Promise<unknown>;
    await expectAsyncCode(act.call(p), "ERR_LOOP_FORGED_PHASE");
    expect(executor.executed).toHaveLength(0);
    expect(gate.requests).toHaveLength(0);
  });

  it("observe() borrowed onto a Reasoning (observing without dispatching) is refused", async () => {
    const { options } = setup([fetchTurn]);
    const r = await startLoop(options);
    const observe = Observing.prototype.observe as unknown as (this: unknown) => Promise<unknown>;
    await expectAsyncCode(observe.call(r), "ERR_LOOP_FORGED_PHASE");
    // The refused borrow did not consume the genuine phase.
    await expect(r.reason()).resolves.toBeInstanceOf(PolicyCheck);
  });

  it("phase objects cannot be constructed outside the loop, even with a look-alike state", async () => {
    const { options } = setup([fetchTurn]);
    const ctors = [Reasoning, PolicyCheck, Dispatching, Observing] as unknown as (new (
      t: unknown,
      s: unknown,
    ) => unknown)[];
    for (const C of ctors) {
      expectCode(() => new C(Symbol("warden.loop.mint"), { run: {} }), "ERR_LOOP_FORGED_PHASE");
    }
    // A structural copy of a live phase is not a phase.
    const d = await (await (await startLoop(options)).reason()).gate();
    const copy = Object.create(Dispatching.prototype, Object.getOwnPropertyDescriptors(d)) as Dispatching;
    await expectAsyncCode(copy.act(), "ERR_LOOP_FORGED_PHASE");
  });

  it("the decisions a caller can see are frozen copies: flipping dispatch does not execute anything", async () => {
    const { options, executor } = setup([fetchTurn], { gate: new FakeGate(() => ({ decision: "deny" })) });
    const d = await (await (await startLoop(options)).reason()).gate();
    expect(() => {
      (d.decisions[0] as { dispatch: boolean }).dispatch = true;
    }).toThrow(TypeError);
    const o = await d.act();
    expect(o.results[0]?.status).toBe("denied");
    expect(executor.executed).toHaveLength(0);
  });
});

describe("untrusted model output becomes observations", () => {
  it("a denial is fed back to the model (OATS §4.5) and the next proposal is judged on its own", async () => {
    const gate = new FakeGate((req) =>
      String((req.parameters as { path?: string }).path).includes("secret")
        ? { decision: "deny", reasons: ["secret files are off limits"] }
        : { decision: "allow" },
    );
    const { options, model, executor } = setup(
      [
        { calls: [{ id: "a", name: "read_file", arguments: { path: "secret.env" } }] },
        { calls: [{ id: "b", name: "read_file", arguments: { path: "notes.txt" } }] },
        { text: "ok" },
      ],
      { gate },
    );
    const result = await runLoop(options);
    expect(result.reason).toBe("final_answer");
    const denied = observationFor(model.requests[1], "a");
    expect(denied).toEqual({ status: "denied", decision: "deny", reasons: "secret files are off limits" });
    expect(gate.requests.map((r) => (r.parameters as { path: string }).path)).toEqual([
      "secret.env",
      "notes.txt",
    ]);
    expect(executor.executed.map((e) => e.parameters.path)).toEqual(["notes.txt"]);
    expect(result.decisions).toMatchObject({ allow: 1, deny: 1 });
  });

  it("a call naming an unknown tool is refused before the Gate and the loop goes on", async () => {
    const { options, model, gate } = setup([
      { calls: [{ id: "x", name: "rm_rf", arguments: {} }] },
      { text: "sorry" },
    ]);
    const result = await runLoop(options);
    expect(result.reason).toBe("final_answer");
    expect(gate.requests).toHaveLength(0);
    expect(observationFor(model.requests[1], "x")).toMatchObject({ status: "rejected" });
    expect(String(observationFor(model.requests[1], "x").reason)).toContain("ERR_TOOL_UNKNOWN");
    expect(result.decisions.rejected).toBe(1);
  });

  it("a prototype-named tool (`__proto__`, `constructor`) is just an unknown tool", async () => {
    const { options, gate } = setup([
      {
        calls: [
          { name: "__proto__", arguments: {} },
          { name: "constructor", arguments: {} },
        ],
      },
      { text: "x" },
    ]);
    const result = await runLoop(options);
    expect(result.decisions.rejected).toBe(2);
    expect(gate.requests).toHaveLength(0);
  });

  it("arguments that fail the contract become an observation with the contract's code", async () => {
    const { options, model, executor } = setup([
      { calls: [{ id: "t", name: "read_file", arguments: { path: 42 } }] },
      { text: "x" },
    ]);
    await runLoop(options);
    expect(String(observationFor(model.requests[1], "t").reason)).toContain("ERR_TOOL_ARG_TYPE");
    expect(executor.executed).toHaveLength(0);
  });

  it("arguments that are not JSON become an observation, never an exception", async () => {
    const { options, model, journal } = setup([
      { calls: [{ id: "j", name: "read_file", arguments: '{"path": "a' }] },
      { text: "x" },
    ]);
    const result = await runLoop(options);
    expect(result.reason).toBe("final_answer");
    expect(String(observationFor(model.requests[1], "j").reason)).toContain("ERR_MODEL_TOOL_ARGUMENTS");
    const proposed = journal.events.find((e) => e.type === "ReasoningComplete")?.body
      .proposed_actions as unknown[];
    expect(proposed[0]).toMatchObject({ name: "read_file", arguments_error: expect.any(String) });
    // The conversation echoes the model's own text back verbatim.
    const assistant = model.requests[1]?.messages.find((m) => m.role === "assistant");
    expect(assistant?.role === "assistant" && assistant.toolCalls?.[0]?.argumentsJson).toBe('{"path": "a');
  });

  it("duplicate argument keys (show the Gate one path, run another) are refused", async () => {
    const { options, gate, executor, model } = setup([
      { calls: [{ id: "d", name: "read_file", arguments: '{"path":"notes.txt","path":"/etc/shadow"}' }] },
      { text: "x" },
    ]);
    await runLoop(options);
    expect(gate.requests).toHaveLength(0);
    expect(executor.executed).toHaveLength(0);
    expect(observationFor(model.requests[1], "d").status).toBe("rejected");
  });

  it("tool-call ids the model repeats or garbles are replaced so every call gets its own observation", async () => {
    const { options, model } = setup([
      {
        calls: [
          { id: "same", name: "fetch_page", arguments: { url: "u1" } },
          { id: "same", name: "fetch_page", arguments: { url: "u2" } },
          { id: "bad id\nwith newline", name: "fetch_page", arguments: { url: "u3" } },
        ],
      },
      { text: "x" },
    ]);
    await runLoop(options);
    const toolMsgs = model.requests[1]?.messages.filter((m) => m.role === "tool") ?? [];
    const ids = toolMsgs.map((m) => (m.role === "tool" ? m.toolCallId : ""));
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe("same");
  });

  it("more calls in one turn than the limit: the extras are refused as observations", async () => {
    const calls = Array.from({ length: 4 }, (_, i) => ({ name: "fetch_page", arguments: { url: `u${i}` } }));
    const { options, executor } = setup([{ calls }, { text: "x" }], { limits: { maxToolCallsPerTurn: 2 } });
    const result = await runLoop(options);
    expect(executor.executed).toHaveLength(2);
    expect(result.decisions.rejected).toBe(2);
  });

  it("an executor that throws yields a failed observation and a RecoveryTriggered event", async () => {
    const executor = new FakeExecutor({
      fetch_page: () => {
        throw new Error("socket hang up http://user:pw@host");
      },
    });
    const { options, model, journal } = setup([fetchTurn, { text: "x" }], { executor });
    const result = await runLoop(options);
    expect(result.reason).toBe("final_answer");
    const obs = observationFor(model.requests[1], "m1_0");
    expect(obs).toMatchObject({ status: "error", code: "ERR_UNEXPECTED" });
    // Foreign error text (which may carry credentials) is not passed on.
    expect(JSON.stringify(journal.events)).not.toContain("pw@host");
    expect(JSON.stringify(obs)).not.toContain("pw@host");
    expect(journal.last("RecoveryTriggered").body).toMatchObject({
      strategy: "report_to_model",
      tool: "fetch_page",
    });
  });

  it("long tool output is truncated before it reaches the model", async () => {
    const executor = new FakeExecutor({ fetch_page: () => ({ ok: true, output: "A".repeat(5000) }) });
    const { options, model } = setup([fetchTurn, { text: "x" }], {
      executor,
      limits: { maxObservationChars: 100 },
    });
    await runLoop(options);
    const m = model.requests[1]?.messages.find((x) => x.role === "tool");
    expect(m?.content.length).toBeLessThan(200);
    expect(m?.content).toContain("truncated");
  });
});

describe("the Gate's other decisions", () => {
  it("modify: the rewritten call is executed with the Gate's parameters", async () => {
    const gate = new FakeGate(() => ({ decision: "modify", parameters: { url: "http://127.0.0.1/safe" } }));
    const { options, executor } = setup([fetchTurn, { text: "x" }], { gate });
    const r = await runLoop(options);
    expect(executor.executed[0]?.parameters).toEqual({ url: "http://127.0.0.1/safe" });
    expect(r.decisions.modify).toBe(1);
  });

  it("allow without a ticket fails closed: nothing is dispatched", async () => {
    const gate = new FakeGate(() => ({ decision: "allow", withholdTicket: true }));
    const { options, executor, model } = setup([fetchTurn, { text: "x" }], { gate });
    await runLoop(options);
    expect(executor.executed).toHaveLength(0);
    expect(observationFor(model.requests[1], "m1_0").status).toBe("denied");
  });

  it("step_up and defer are reported as not executed", async () => {
    let n = 0;
    const gate = new FakeGate(() => ({
      decision: n++ === 0 ? "step_up" : "defer",
      reasons: ["needs a human"],
    }));
    const { options, model, executor } = setup(
      [{ calls: [fetchTurn.calls![0]!, { name: "read_file", arguments: { path: "a" } }] }, { text: "x" }],
      { gate },
    );
    const r = await runLoop(options);
    expect(executor.executed).toHaveLength(0);
    expect(observationFor(model.requests[1], "m1_0")).toMatchObject({
      status: "not_executed",
      decision: "step_up",
    });
    expect(observationFor(model.requests[1], "m1_1")).toMatchObject({
      status: "not_executed",
      decision: "defer",
    });
    expect(r.decisions).toMatchObject({ step_up: 1, defer: 1 });
  });
});

describe("several calls per turn and the context accumulator", () => {
  it("gates calls one by one, in order, and feeds the taint observed so far into each Gate request", async () => {
    const executor = new FakeExecutor({
      fetch_page: () => ({ ok: true, output: "<html>", taintLabels: [WEB] }),
    });
    const { options, gate, journal } = setup(
      [
        fetchTurn,
        {
          calls: [
            { name: "read_file", arguments: { path: "a" } },
            { name: "http_post", arguments: { url: "http://x", body: "b" } },
          ],
        },
        { text: "x" },
      ],
      { executor },
    );
    const r = await runLoop(options);
    expect(gate.maxInFlight).toBe(1);
    expect(gate.requests.map((q) => q.tool)).toEqual(["fetch_page", "read_file", "http_post"]);
    expect(gate.requests[0]?.taintLabels).toEqual([]);
    expect(gate.requests[1]?.taintLabels).toEqual([WEB]);
    expect(gate.requests[2]?.taintLabels).toEqual([WEB]);
    expect(gate.requests[1]?.originalRequest).toBe("summarise the page");
    expect(gate.requests.every((q) => q.runId === r.runId && q.principalId === "agent-1")).toBe(true);
    expect(r.taintSources).toEqual(["web"]);
    const evaluated = journal.events.filter((e) => e.type === "PolicyEvaluated")[1]?.body
      .decisions as unknown[];
    expect(evaluated).toHaveLength(2);
  });
});

describe("feeding results back to the Gate's context", () => {
  it("reports each executed call's output and taint to the Gate, keyed by its decision id", async () => {
    const gate = new FakeGate();
    const reported: unknown[] = [];
    const port = Object.assign(gate, {
      recordResult: async (id: string, r: unknown) => {
        reported.push({ id, r });
      },
    });
    const executor = new FakeExecutor({
      fetch_page: () => ({ ok: true, output: "<p>", taintLabels: [WEB] }),
    });
    const { options } = setup([fetchTurn, { text: "x" }], { gate: port, executor });
    await runLoop(options);
    expect(reported).toEqual([{ id: "dec-1", r: { taintLabels: [WEB], output: "<p>", outcome: "success" } }]);
  });

  it("reports a failed call's outcome (timeout for a *_TIMEOUT code) so APAE can count it", async () => {
    for (const [code, outcome] of [
      ["ERR_EXEC_TIMEOUT", "timeout"],
      ["ERR_EXEC_EXIT_NONZERO", "failure"],
    ] as const) {
      const reported: { r: { outcome?: string } }[] = [];
      const port = Object.assign(new FakeGate(), {
        recordResult: async (id: string, r: { outcome?: string }) => {
          reported.push({ r });
          expect(id).toBe("dec-1");
        },
      });
      const executor = new FakeExecutor({
        fetch_page: () => ({ ok: false, code, message: "it failed" }),
      });
      const { options } = setup([fetchTurn, { text: "x" }], { gate: port, executor });
      await runLoop(options);
      expect(reported.map((x) => x.r.outcome)).toEqual([outcome]);
    }
  });

  it("a Gate that cannot record a result stops the run (it would decide without that taint)", async () => {
    const gate = Object.assign(new FakeGate(), {
      recordResult: async () => {
        throw new Error("session store down");
      },
    });
    const { options, journal } = setup([fetchTurn, fetchTurn], { gate });
    const r = await runLoop(options);
    expect(r.reason).toBe("gate_fault");
    expect(journal.last("RecoveryTriggered").body).toMatchObject({ strategy: "fail_closed", phase: "act" });
  });
});

describe("termination (OATS §4.4)", () => {
  it("iteration limit", async () => {
    const { options, journal } = setup([fetchTurn, fetchTurn, fetchTurn], { limits: { maxIterations: 2 } });
    const r = await runLoop(options);
    expect(r.reason).toBe("iteration_limit");
    expect(r.iterations).toBe(2);
    expect(journal.last("LoopTerminated").body).toMatchObject({ reason: "iteration_limit", iterations: 2 });
  });

  it("token budget: the turn that overspends is not dispatched", async () => {
    const { options, executor } = setup(
      [{ ...fetchTurn, usage: { inputTokens: 60, outputTokens: 50 } }, { text: "never" }],
      { limits: { maxTokens: 100 } },
    );
    const r = await runLoop(options);
    expect(r.reason).toBe("token_budget");
    expect(r.usage).toEqual({ inputTokens: 60, outputTokens: 50 });
    expect(executor.executed).toHaveLength(0);
  });

  it("time budget: checked against the run's clock between steps", async () => {
    let t = 0;
    const executor = new FakeExecutor({
      fetch_page: () => {
        t += 5_000;
        return { ok: true, output: "slow" };
      },
    });
    const { options, model } = setup([fetchTurn, fetchTurn], {
      executor,
      now: () => t,
      limits: { timeBudgetMs: 4_000 },
    });
    const r = await runLoop(options);
    expect(r.reason).toBe("time_budget");
    expect(r.durationMs).toBe(5_000);
    expect(model.requests).toHaveLength(1);
  });

  it("circuit breaker: consecutive tool failures stop the run", async () => {
    const executor = new FakeExecutor({
      fetch_page: () => ({ ok: false, code: "ERR_EXEC_HTTP", message: "503" }),
    });
    const { options, journal } = setup([fetchTurn, fetchTurn, fetchTurn, fetchTurn], {
      executor,
      limits: { maxConsecutiveFailures: 2 },
    });
    const r = await runLoop(options);
    expect(r.reason).toBe("circuit_breaker");
    expect(r.iterations).toBe(2);
    const recoveries = journal.events
      .filter((e) => e.type === "RecoveryTriggered")
      .map((e) => e.body.strategy);
    expect(recoveries).toEqual(["report_to_model", "circuit_open"]);
  });

  it("circuit breaker: an agent that keeps hitting denials is stopped", async () => {
    const gate = new FakeGate(() => ({ decision: "deny" }));
    const { options } = setup([fetchTurn, fetchTurn, fetchTurn, fetchTurn], {
      gate,
      limits: { maxDenials: 3 },
    });
    const r = await runLoop(options);
    expect(r.reason).toBe("circuit_breaker");
    expect(r.decisions.deny).toBe(3);
  });

  it("quarantine: the run stops and later proposals of the same turn are not evaluated", async () => {
    const gate = new FakeGate(() => ({ decision: "deny", quarantined: true }));
    const { options, journal } = setup(
      [{ calls: [fetchTurn.calls![0]!, { name: "read_file", arguments: { path: "a" } }] }, { text: "x" }],
      { gate },
    );
    const r = await runLoop(options);
    expect(r.reason).toBe("quarantined");
    expect(gate.requests).toHaveLength(1);
    expect(journal.last("PolicyEvaluated").body.skipped).toEqual(["m1_1"]);
  });

  it("a Gate that throws fails closed: denied, nothing executed, run stopped", async () => {
    const gate = new FakeGate(() => {
      throw new Error("policy store offline");
    });
    const { options, executor, journal } = setup([fetchTurn, { text: "x" }], { gate });
    const r = await runLoop(options);
    expect(r.reason).toBe("gate_fault");
    expect(executor.executed).toHaveLength(0);
    expect(journal.last("RecoveryTriggered").body).toMatchObject({ strategy: "fail_closed", phase: "gate" });
  });

  it("a Gate verdict with an unknown decision is a fault, not an allow", async () => {
    const gate = new FakeGate(() => ({ decision: "allow_all" as never }));
    const { options, executor } = setup([fetchTurn, { text: "x" }], { gate });
    const r = await runLoop(options);
    expect(r.reason).toBe("gate_fault");
    expect(executor.executed).toHaveLength(0);
  });

  it("a model that fails ends the run with model_error; the loop does not throw", async () => {
    const { options, journal } = setup([]);
    const r = await runLoop(options);
    expect(r.reason).toBe("model_error");
    expect(r.iterations).toBe(1);
    expect(journal.types()).toEqual([
      "LoopStarted",
      "RecoveryTriggered",
      "ReasoningComplete",
      "PolicyEvaluated",
      "ToolsDispatched",
      "ObservationsCollected",
      "LoopTerminated",
    ]);
  });

  it("an aborted signal stops the run between steps", async () => {
    const ac = new AbortController();
    const executor = new FakeExecutor({
      fetch_page: () => {
        ac.abort();
        return { ok: true, output: "x" };
      },
    });
    const { options } = setup([fetchTurn, fetchTurn], { executor, signal: ac.signal });
    const r = await runLoop(options);
    expect(r.reason).toBe("aborted");
  });
});

describe("startLoop configuration", () => {
  const bad: [string, Partial<LoopOptions<FakeTicket>>][] = [
    ["a zero limit", { limits: { maxIterations: 0 } }],
    ["a fractional limit", { limits: { maxTokens: 1.5 } }],
    ["an unknown limit", { limits: { maxWishes: 3 } as never }],
    ["an empty task", { task: "" }],
    ["a principal with spaces", { principalId: "agent 1" }],
    ["a run id with a newline", { runId: "run\n1" }],
    ["a trace id that is not hex", { traceId: "Z".repeat(32) }],
    ["a missing gate", { gate: undefined as never }],
  ];
  for (const [name, over] of bad) {
    it(`rejects ${name} with ERR_LOOP_CONFIG_INVALID`, async () => {
      const { options, journal } = setup([]);
      const err = await startLoop({ ...options, ...over }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(hasErrorCode(err, "ERR_LOOP_CONFIG_INVALID")).toBe(true);
      expect(journal.events).toHaveLength(0);
    });
  }
});
