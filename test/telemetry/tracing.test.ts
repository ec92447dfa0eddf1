// OpenTelemetry: with an SDK registered (in-memory exporter), one governed action is one
// `execute_tool {tool}` span with child spans for its stages and for execution, carrying
// the GenAI tool attributes; a caller's traceparent is the parent and names the journal's
// trace; without an SDK nothing is recorded.
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  contextFromTraceparent,
  parseTraceparent,
  SPAN,
  ticketOf,
  withExecutionSpan,
} from "../../src/gate/index.js";
import { makeGate, req } from "../gate/harness.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const ALLOW = `
rules:
  - { id: allow-get, name: get, priority: 100, match: { action: get }, decision: allow, reason: reads are fine }
  - { id: deny-post, name: post, priority: 100, match: { action: post }, decision: deny, reason: no writes }
`;

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe("spans of a governed action (in-memory exporter)", () => {
  beforeAll(() => {
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  it("one action span with contract, policy, journal and execution children, GenAI attributes set", async () => {
    const h = await makeGate({ yaml: ALLOW });
    const o = await h.gate.authorize(req());
    expect(o.reasonCodes).toEqual(["RULE:allow-get"]);
    expect(o.decision).toBe("allow");
    expect(ticketOf(o)).toBeDefined();
    await withExecutionSpan(o.traceparent, { tool: "http.get", decisionId: o.decisionId! }, async () => 1);
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name.startsWith("execute_tool"))!;
    expect(root.name).toBe("execute_tool http.get");
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "http.get",
      "gen_ai.tool.type": "extension",
      "gen_ai.tool.call.id": o.decisionId,
      "warden.decision": "allow",
      "warden.run_id": "run-1",
      "warden.trace_id": o.traceId,
    });
    expect(typeof root.attributes["warden.risk_score"]).toBe("number");
    const children = spans.filter((s) => parentOf(s) === root.spanContext().spanId).map((s) => s.name);
    expect(children).toEqual(
      expect.arrayContaining([SPAN.contract, SPAN.policy, SPAN.journal, SPAN.execution]),
    );
    for (const s of spans) expect(s.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(o.traceparent).toBe(`00-${root.spanContext().traceId}-${root.spanContext().spanId}-01`);
  });

  it("a caller's traceparent is the action's parent and becomes the journal's trace id", async () => {
    const h = await makeGate({ yaml: ALLOW });
    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const o = await h.gate.evaluate(req({ runId: "run-2" }), { parent: contextFromTraceparent(incoming)! });
    const root = exporter.getFinishedSpans().find((s) => s.name.startsWith("execute_tool"))!;
    expect(root.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(parentOf(root)).toBe("00f067aa0ba902b7");
    expect(o.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    const entry = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect((entry.body.dare as { trace_id: string }).trace_id).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("a denial is recorded as a decision, not an error; the request's own traceId still names the journal trace", async () => {
    const h = await makeGate({ yaml: ALLOW });
    const own = "0af7651916cd43dd8448eb211c80319c";
    const o = await h.gate.evaluate(req({ action: "post", runId: "run-3", traceId: own }), {
      parent: contextFromTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")!,
    });
    expect(o.decision).toBe("deny");
    expect(o.traceId).toBe(own);
    const root = exporter.getFinishedSpans().find((s) => s.name.startsWith("execute_tool"))!;
    expect(root.attributes["warden.decision"]).toBe("deny");
    expect(root.attributes["error.type"]).toBeUndefined();
  });
});

describe("traceparent parsing", () => {
  it.each([
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true],
    ["00-00000000000000000000000000000000-00f067aa0ba902b7-01", false],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false],
    ["01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false],
    ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false],
    ["garbage", false],
  ])("%s valid: %s", (h, ok) => {
    expect(parseTraceparent(h) !== undefined).toBe(ok);
  });
});
