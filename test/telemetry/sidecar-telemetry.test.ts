// Telemetry through a real sidecar: W3C traceparent honoured and returned (the action's
// spans under the caller's span, the journal under the caller's trace), the span tree of
// an executed call, bounded per-tool and per-reason metrics under a flood of invented
// tool names, and the streaming OCSF sink writing what the journal holds.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SPAN } from "../../src/gate/index.js";
import { MAX_LABEL_VALUES } from "../../src/server/metrics.js";
import { echo, type Sidecar, startTestSidecar, TOKENS, until } from "../server/harness.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const INCOMING = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let sc: Sidecar;
beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  sc = await startTestSidecar({
    config: { telemetry: { sink: { format: "ocsf", file: "events.jsonl", intervalMs: 50 } } },
  });
});
afterAll(async () => {
  await sc.stop();
  trace.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

describe("traceparent through the sidecar", () => {
  it("an executed call is one execute_tool span under the caller's span, with an execution child", async () => {
    const run = await sc.run("trace");
    const r = await sc.call("/v1/execute", {
      token: TOKENS.agentA,
      body: echo("hi", { runId: run }),
      headers: { traceparent: INCOMING },
    });
    expect(r.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const root = spans.find((s) => s.name === "execute_tool echo_tool")!;
    expect(root.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(root.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
    const kids = spans
      .filter((s) => s.parentSpanContext?.spanId === root.spanContext().spanId)
      .map((s) => s.name);
    expect(kids).toEqual(expect.arrayContaining([SPAN.contract, SPAN.policy, SPAN.journal, SPAN.execution]));
    // The response names the action span, in the caller's trace.
    expect(r.headers.get("traceparent")).toBe(
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${root.spanContext().spanId}-01`,
    );
    const journal = await sc.call(`/v1/journal?run_id=${run}&type=warden.gate.decision`, {
      token: TOKENS.auditor,
    });
    expect(journal.status).toBe(200);
    const entries = journal.body.entries as { type: string; trace_id: string | null }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]?.trace_id).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("a malformed traceparent is ignored: no parent, not echoed", async () => {
    const run = await sc.run("bad-trace");
    const r = await sc.call("/v1/decide", {
      token: TOKENS.agentA,
      body: echo("hi", { runId: run }),
      headers: { traceparent: "00-zzzz-00f067aa0ba902b7-01" },
    });
    expect(r.status).toBe(200);
    const root = exporter.getFinishedSpans().find((s) => s.name === "execute_tool echo_tool")!;
    expect(root.parentSpanContext).toBeUndefined();
    expect(r.headers.get("traceparent")).toBe(
      `00-${root.spanContext().traceId}-${root.spanContext().spanId}-01`,
    );
  });
});

describe("bounded metrics", () => {
  it("a flood of invented tool names is counted as `other`, the exposition stays bounded", async () => {
    const run = await sc.run("flood");
    for (let i = 0; i < MAX_LABEL_VALUES + 50; i++) {
      await sc.call("/v1/decide", {
        token: TOKENS.agentA,
        body: { runId: run, toolClass: "shell", action: "exec", tool: `invented_${i}`, parameters: {} },
      });
    }
    await sc.call("/v1/decide", { token: TOKENS.agentA, body: echo("hello", { runId: run }) });
    const m = await sc.call("/metrics", { token: TOKENS.approver });
    const text = String(m.body.text);
    const toolLines = text.split("\n").filter((l) => l.startsWith("warden_tool_decisions_total"));
    expect(toolLines.some((l) => l.includes('tool="echo_tool"'))).toBe(true);
    expect(toolLines.some((l) => l.includes('tool="other"'))).toBe(true);
    expect(toolLines.some((l) => l.includes("invented_"))).toBe(false);
    expect(toolLines.length).toBeLessThan(20);
    expect(text).toMatch(/warden_reason_codes_total\{code="tool_unknown"\} \d+/);
  });
});

describe("streaming OCSF sink", () => {
  it("writes every decision and execution of the journal to the JSONL file, file mode 0600", async () => {
    const run = await sc.run("sink");
    await sc.call("/v1/execute", { token: TOKENS.agentA, body: echo("sink", { runId: run }) });
    const file = join(sc.dir, "events.jsonl");
    const events = await until(() => {
      const lines = readFileSync(file, "utf8").trim().split("\n").filter(Boolean);
      const parsed = lines.map(
        (l) => JSON.parse(l) as { class_uid: number; metadata: { correlation_uid?: string } },
      );
      const mine = parsed.filter((e) => e.metadata.correlation_uid === run);
      return mine.length >= 2 ? mine : undefined;
    });
    expect(events.map((e) => e.class_uid).sort()).toEqual([1007, 6003]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
