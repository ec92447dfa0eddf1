// The Prometheus exposition: the decision histogram is cumulative (each `le` bucket
// counts every observation at or below it, +Inf equals the count) although each
// observation increments only the one bucket it falls in.
import { describe, expect, it } from "vitest";
import { DECISION_BUCKETS_S, SidecarMetrics } from "../../src/server/index.js";

const gauges = {
  approvalsPending: () => 0,
  deferredPending: () => 0,
  inFlight: () => 0,
  breakers: () => [],
};

function buckets(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^warden_decision_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) {
    out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

describe("SidecarMetrics", () => {
  it("renders cumulative buckets, edges inclusive, +Inf equal to the count", () => {
    const m = new SidecarMetrics();
    for (const s of [0.0001, 0.0005, 0.003, 0.003, 250, 1000]) m.decision("decide", "allow", s);
    const text = m.render(gauges);
    const b = buckets(text);
    expect(b.size).toBe(DECISION_BUCKETS_S.length + 1);
    expect(b.get("0.0005")).toBe(2); // an observation on an edge counts in that bucket
    expect(b.get("0.001")).toBe(2);
    expect(b.get("0.005")).toBe(4);
    expect(b.get("60")).toBe(4);
    expect(b.get("300")).toBe(5);
    expect(b.get("+Inf")).toBe(6);
    expect(text).toMatch(/^warden_decision_duration_seconds_count 6$/m);
    const values = [...b.values()];
    expect(values.every((v, i) => i === 0 || v >= (values[i - 1] as number))).toBe(true);
  });

  it("counts decisions by endpoint and verdict, faults and responses by status", () => {
    const m = new SidecarMetrics();
    m.decision("execute", "deny", 0.01);
    m.decision("decide", "allow", 0.01);
    m.decision("decide", "allow", 0.01);
    m.fault("journal_unavailable");
    m.response(200);
    m.response(200);
    m.response(503);
    const text = m.render(gauges);
    expect(text).toMatch(/^warden_decisions_total\{decision="allow",endpoint="decide"\} 2$/m);
    expect(text).toMatch(/^warden_decisions_total\{decision="deny",endpoint="execute"\} 1$/m);
    expect(text).toMatch(/^warden_faults_total\{fault="journal_unavailable"\} 1$/m);
    expect(text).toMatch(/^warden_http_responses_total\{status="200"\} 2$/m);
    expect(text).toMatch(/^warden_http_responses_total\{status="503"\} 1$/m);
  });

  it("renders series in a stable order: endpoint then verdict, statuses numerically", () => {
    const m = new SidecarMetrics();
    for (const [endpoint, decision] of [
      ["execute", "deny"],
      ["decide", "step_up"],
      ["execute", "allow"],
      ["decide", "allow"],
      ["decide", "step_up"],
    ] as const) {
      m.decision(endpoint, decision, 0.001);
    }
    for (const status of [503, 200, 404, 200]) m.response(status);
    const text = m.render(gauges);
    expect(text.match(/^warden_decisions_total\{.*$/gm)).toEqual([
      'warden_decisions_total{decision="allow",endpoint="decide"} 1',
      'warden_decisions_total{decision="step_up",endpoint="decide"} 2',
      'warden_decisions_total{decision="allow",endpoint="execute"} 1',
      'warden_decisions_total{decision="deny",endpoint="execute"} 1',
    ]);
    expect(text.match(/^warden_http_responses_total\{.*$/gm)).toEqual([
      'warden_http_responses_total{status="200"} 2',
      'warden_http_responses_total{status="404"} 1',
      'warden_http_responses_total{status="503"} 1',
    ]);
  });
});
