// schemapin-v1 canonical form: Python's json.dumps(sort_keys=True, separators=(",",":"),
// ensure_ascii=False). Expected strings below were produced by CPython 3 json.dumps.
import { describe, expect, it } from "vitest";
import { canonicalJson, hasErrorCode } from "../../../src/contracts/index.js";
import { compareCodePoints, schemapinCanonical } from "../../../src/tools/integrity/index.js";

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return hasErrorCode(err, "ERR_INTEGRITY_CANONICAL") ? err.code : String(err);
  }
  return undefined;
}

describe("schemapinCanonical", () => {
  it.each([
    [0.1, "0.1"],
    [1.5, "1.5"],
    [1e-5, "1e-05"],
    [1.5e-7, "1.5e-07"],
    [1e-7, "1e-07"],
    [0.0001, "0.0001"],
    [0.000123, "0.000123"],
    [-2.5e-10, "-2.5e-10"],
    [5e-324, "5e-324"],
    [123456789012345.6, "123456789012345.6"],
    [42, "42"],
    [-0, "0"],
    [9007199254740991, "9007199254740991"],
  ])("writes %s as Python does: %s", (n, text) => {
    expect(schemapinCanonical(n)).toBe(text);
  });

  it("differs from RFC 8785 for small numbers (documented)", () => {
    expect(canonicalJson(1e-5)).toBe("0.00001");
    expect(schemapinCanonical(1e-5)).toBe("1e-05");
  });

  it("sorts keys by code point, not UTF-16 unit (astral after U+E000)", () => {
    const v = { "\ue000": 1, "\u{1f600}": 2, a: 3, é: 4, Z: 5 };
    expect(schemapinCanonical(v)).toBe('{"Z":5,"a":3,"é":4,"\ue000":1,"\u{1f600}":2}');
    // RFC 8785 orders by UTF-16 code units and puts the surrogate pair first.
    expect(canonicalJson(v)).toBe('{"Z":5,"a":3,"é":4,"\u{1f600}":2,"\ue000":1}');
    expect(compareCodePoints("\u{1f600}", "\uffff")).toBeGreaterThan(0);
    expect(compareCodePoints("ab", "a")).toBeGreaterThan(0);
  });

  it("escapes strings as ensure_ascii=False does", () => {
    expect(schemapinCanonical({ s: '\u2028\x7f\x01\t"\\/é😀' })).toBe(
      '{"s":"\u2028\x7f\\u0001\\t\\"\\\\/é😀"}',
    );
  });

  it("keeps array order and nests", () => {
    expect(schemapinCanonical({ b: [3, { d: null, c: true }], a: false })).toBe(
      '{"a":false,"b":[3,{"c":true,"d":null}]}',
    );
  });

  it.each([
    ["integer beyond 2^53", 2 ** 53 + 2],
    ["huge float", 1.7976931348623157e308],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["lone surrogate", "\ud800"],
    ["lone surrogate key", { "\udc00": 1 }],
    ["undefined member", { a: undefined }],
    ["bigint", 1n],
    ["Date", new Date(0)],
    ["function", () => 1],
  ])("refuses %s with ERR_INTEGRITY_CANONICAL", (_label, v) => {
    expect(code(() => schemapinCanonical(v))).toBe("ERR_INTEGRITY_CANONICAL");
  });

  it("refuses cycles and excessive depth", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(code(() => schemapinCanonical(a))).toBe("ERR_INTEGRITY_CANONICAL");
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(code(() => schemapinCanonical(deep))).toBe("ERR_INTEGRITY_CANONICAL");
  });

  it("a shared (non-cyclic) sub-object is fine", () => {
    const shared = { x: 1 };
    expect(schemapinCanonical({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});
