import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasTaint, mergeTaint, taintIncludes, taintSources } from "../../src/context/index.js";
import { TAINT_SOURCES, type TaintLabel } from "../../src/contracts/index.js";

const label = fc.record(
  {
    source: fc.constantFrom(...TAINT_SOURCES),
    origin: fc.constantFrom("a", "b", "c"),
    confidence: fc.double({ min: 0, max: 1, noNaN: true }),
  },
  { requiredKeys: ["source", "origin"] },
) as fc.Arbitrary<TaintLabel>;

describe("taint labels", () => {
  it("merges by (source, origin) keeping first-seen order", () => {
    const a = { source: "web", origin: "x.example" } as const;
    const b = { source: "rag", origin: "docs" } as const;
    expect(mergeTaint([a], [b, { ...a }])).toEqual([a, b]);
    expect(taintSources(mergeTaint([a, b, { source: "web", origin: "other" }]))).toEqual(["web", "rag"]);
    expect(hasTaint([a], "web")).toBe(true);
    expect(hasTaint([a], "email")).toBe(false);
  });

  it("a merge raises confidence to the highest seen and never lowers it", () => {
    const low = { source: "web", origin: "x", confidence: 0.2 } as const;
    const high = { source: "web", origin: "x", confidence: 0.9 } as const;
    const certain = { source: "web", origin: "x" } as const;
    expect(mergeTaint([low], [high])[0]?.confidence).toBe(0.9);
    expect(mergeTaint([high], [low])[0]?.confidence).toBe(0.9);
    expect(mergeTaint([low], [certain])[0]).toEqual(certain);
    expect(mergeTaint([certain], [low])[0]).toEqual(certain);
  });

  it("does not alias its inputs", () => {
    const input = [{ source: "web", origin: "x", confidence: 0.1 }] as TaintLabel[];
    const out = mergeTaint(input, [{ source: "web", origin: "x", confidence: 0.5 }]);
    expect(input[0]?.confidence).toBe(0.1);
    expect(out[0]).not.toBe(input[0]);
  });

  it("is monotonic: a merge contains every label of every input (never strips)", () => {
    fc.assert(
      fc.property(fc.array(fc.array(label, { maxLength: 8 }), { maxLength: 5 }), (lists) => {
        const merged = mergeTaint(...lists);
        return lists.every((l) => taintIncludes(merged, l));
      }),
    );
  });

  it("is idempotent and order-insensitive as a set", () => {
    fc.assert(
      fc.property(fc.array(label, { maxLength: 8 }), fc.array(label, { maxLength: 8 }), (a, b) => {
        const ab = mergeTaint(a, b);
        const ba = mergeTaint(b, a);
        return taintIncludes(ab, ba) && taintIncludes(ba, ab) && mergeTaint(ab, ab).length === ab.length;
      }),
    );
  });
});
