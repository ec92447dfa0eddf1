// The --probe parser: any input gives a value (never a throw); what it accepts is bounded and
// well-formed.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_PROBE_BYTES, parseProbe } from "../../src/conformance/index.js";

describe("parseProbe", () => {
  it("accepts a probe call and its string argument", () => {
    expect(parseProbe('{"tool":"echo","parameters":{"message":"hi"},"textArg":"message"}')).toEqual({
      ok: true,
      probe: { tool: "echo", parameters: { message: "hi" }, textArg: "message" },
    });
    expect(parseProbe('{"tool":"echo"}')).toEqual({ ok: true, probe: { tool: "echo", parameters: {} } });
  });

  it("refuses a textArg that names no string parameter, unknown keys, duplicate keys, oversize input", () => {
    expect(parseProbe('{"tool":"echo","parameters":{"n":1},"textArg":"n"}').ok).toBe(false);
    expect(parseProbe('{"tool":"echo","run":"x"}').ok).toBe(false);
    expect(parseProbe('{"tool":"a","tool":"b"}').ok).toBe(false);
    expect(parseProbe(`{"tool":"${"x".repeat(MAX_PROBE_BYTES)}"}`).ok).toBe(false);
    expect(parseProbe('{"tool":""}').ok).toBe(false);
  });

  it("never throws, and an accepted probe is well-formed (arbitrary text)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const r = parseProbe(text);
        if (r.ok) expect(typeof r.probe.tool).toBe("string");
      }),
      { numRuns: 500 },
    );
  });

  it("never throws, and an accepted probe is well-formed (arbitrary JSON)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.string({ maxLength: 20 })), (v, tool) => {
        const doc = tool === null ? v : { tool, parameters: v };
        const r = parseProbe(JSON.stringify(doc));
        if (!r.ok) return;
        expect(r.probe.tool.length).toBeGreaterThan(0);
        expect(r.probe.tool.length).toBeLessThanOrEqual(256);
        expect(typeof r.probe.parameters).toBe("object");
        expect(Array.isArray(r.probe.parameters)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
