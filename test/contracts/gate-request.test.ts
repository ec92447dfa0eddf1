// parseGateRequest: the edge's one strict parse of a Gate request, which the Gate then
// takes as parsed. Only the untouched result counts; it cannot be changed after the parse.
import { describe, expect, it } from "vitest";
import { GateRequest, isParsedGateRequest, parseGateRequest } from "../../src/contracts/index.js";

const raw = () => ({
  principalId: "agent-1",
  runId: "run-1",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://example.org/", nested: { list: [1, { deep: "x" }] } },
  taintLabels: [{ source: "web", origin: "example.org" }],
});

describe("parseGateRequest", () => {
  it("gives the schema's result, deep-frozen and marked as parsed, without touching the input", () => {
    const input = raw();
    const r = parseGateRequest(input);
    expect(r.success).toBe(true);
    const data = r.data!;
    expect(data).toEqual(GateRequest.parse(raw()));
    expect(isParsedGateRequest(data)).toBe(true);
    for (const v of [data, data.parameters, data.parameters.nested, data.taintLabels, data.taintLabels[0]]) {
      expect(Object.isFrozen(v)).toBe(true);
    }
    expect(Object.isFrozen(input)).toBe(false);
    expect(Object.isFrozen(input.parameters.nested)).toBe(false);
    expect(isParsedGateRequest(input)).toBe(false);
  });

  it("refuses what GateRequest refuses, and marks nothing", () => {
    const bad = { ...raw(), toolClass: "http; rm -rf /" };
    const r = parseGateRequest(bad);
    expect(r.success).toBe(false);
    expect(isParsedGateRequest(bad)).toBe(false);
  });

  it("attack: a parsed request cannot be changed afterwards, and no copy or look-alike passes as parsed", () => {
    const data = parseGateRequest(raw()).data!;
    expect(() => {
      (data as { toolClass: string }).toolClass = "shell";
    }).toThrow(TypeError);
    expect(() => {
      (data.parameters as Record<string, unknown>).url = "http://169.254.169.254/";
    }).toThrow(TypeError);
    expect(() => {
      ((data.parameters.nested as { list: unknown[] }).list as unknown[]).push("more");
    }).toThrow(TypeError);
    for (const lookAlike of [
      { ...data },
      structuredClone(data),
      JSON.parse(JSON.stringify(data)),
      Object.freeze(Object.create(data)),
      Object.freeze({ ...data, toolClass: "shell" }),
    ]) {
      expect(isParsedGateRequest(lookAlike)).toBe(false);
    }
    expect(isParsedGateRequest(null)).toBe(false);
    expect(isParsedGateRequest("x")).toBe(false);
  });
});
