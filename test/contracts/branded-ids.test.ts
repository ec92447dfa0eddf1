import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decisionId,
  hasErrorCode,
  ID_MAX_LENGTH,
  newDecisionId,
  parseId,
  principalId,
  runId,
  traceId,
} from "../../src/contracts/index.js";

// The documented grammar, written out independently of ID_PATTERN.
function inGrammar(s: string): boolean {
  if (s.length < 1 || s.length > 128) return false;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

describe("branded ids", () => {
  it("parseId accepts exactly printable ASCII without space, 1 to 128 characters (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 140 }), fc.string({ unit: "binary", maxLength: 140 })),
        (s) => {
          const r = parseId("run", s);
          expect(r.ok).toBe(inGrammar(s));
          if (r.ok) expect(r.id).toBe(s);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("every id of printable ASCII within the bound parses, whatever its content (property)", () => {
    const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.array(printable, { minLength: 1, maxLength: ID_MAX_LENGTH }), (cs) => {
        expect(parseId("decision", cs.join("")).ok).toBe(true);
      }),
    );
  });

  it("an id smuggling a space, a newline, a NUL or non-ASCII is refused by every constructor", () => {
    for (const bad of ["run 1", "run\n1", "run\u00001", "rün", "", "x".repeat(129), 42, null, undefined]) {
      for (const make of [runId, decisionId, principalId, traceId]) {
        let err: unknown;
        try {
          make(bad);
        } catch (e) {
          err = e;
        }
        expect(hasErrorCode(err, "ERR_CONTRACT_ID_INVALID")).toBe(true);
      }
    }
  });

  it("constructors return the string itself, and fresh decision ids are in the grammar", () => {
    expect(runId("run-1")).toBe("run-1");
    expect(principalId("agent:1/x")).toBe("agent:1/x");
    for (let i = 0; i < 100; i++) expect(parseId("decision", newDecisionId()).ok).toBe(true);
  });
});
