// Without an OpenTelemetry SDK the Gate records nothing and costs one no-op span: its
// own file, because the API's proxy tracer keeps the first SDK it ever saw in a process.
import { describe, expect, it } from "vitest";
import { contextFromTraceparent } from "../../src/gate/index.js";
import { makeGate, req } from "../gate/harness.js";

const ALLOW = `
rules:
  - { id: allow-get, name: get, priority: 100, match: { action: get }, decision: allow, reason: reads are fine }
`;

describe("without an SDK", () => {
  it("records nothing, and the outcome has no traceparent unless the caller sent one", async () => {
    const h = await makeGate({ yaml: ALLOW });
    const o = await h.gate.evaluate(req({ runId: "run-4" }));
    expect(o.decision).toBe("allow");
    expect(o.traceparent).toBeUndefined();
    const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const p = await h.gate.evaluate(req({ runId: "run-5" }), { parent: contextFromTraceparent(incoming)! });
    expect(p.traceparent).toBe(incoming);
  });
});
