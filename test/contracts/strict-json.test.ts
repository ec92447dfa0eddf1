import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasErrorCode, parseStrictJson, type WardenErrorCode } from "../../src/contracts/index.js";

function expectCode(text: string, code: WardenErrorCode, opts = {}): void {
  let thrown: unknown;
  try {
    parseStrictJson(text, opts);
  } catch (err) {
    thrown = err;
  }
  expect(hasErrorCode(thrown, code), `${JSON.stringify(text)}: expected ${code}, got ${String(thrown)}`).toBe(
    true,
  );
}

describe("parseStrictJson", () => {
  it("parses what JSON.parse parses, identically (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (v, pretty) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        // A "__proto__" member is refused by design (tested below); fast-check can generate one.
        if (text.includes('"__proto__"')) return;
        expect(parseStrictJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it("rejects duplicate keys, including ones spelled with escapes", () => {
    expectCode('{"a":1,"a":2}', "ERR_JSON_DUPLICATE_KEY");
    expectCode('{"a":1,"\\u0061":2}', "ERR_JSON_DUPLICATE_KEY");
    expectCode('{"x":{"role":"user","role":"admin"}}', "ERR_JSON_DUPLICATE_KEY");
  });

  it("rejects __proto__ keys (prototype pollution)", () => {
    expectCode('{"__proto__":{"admin":true}}', "ERR_JSON_FORBIDDEN_KEY");
    expectCode('{"a":[{"\\u005f_proto__":1}]}', "ERR_JSON_FORBIDDEN_KEY");
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it("rejects lone surrogate escapes", () => {
    expectCode('"\\ud800"', "ERR_CANON_LONE_SURROGATE");
    expectCode('{"\\udc00":1}', "ERR_CANON_LONE_SURROGATE");
    expect(parseStrictJson('"\\ud83d\\ude00"')).toBe("😀");
  });

  it("rejects numbers that overflow to infinity", () => {
    expectCode("1e400", "ERR_CANON_NON_FINITE_NUMBER");
    expectCode("[-1e309]", "ERR_CANON_NON_FINITE_NUMBER");
  });

  it("enforces size and depth limits", () => {
    expectCode("[1,2,3]", "ERR_JSON_TOO_LARGE", { maxLength: 5 });
    expectCode("[".repeat(200) + "]".repeat(200), "ERR_CANON_TOO_DEEP");
    expectCode("[[[1]]]", "ERR_CANON_TOO_DEEP", { maxDepth: 2 });
  });

  it("rejects malformed JSON with ERR_JSON_SYNTAX", () => {
    for (const bad of [
      "",
      " ",
      "{",
      "[1,]",
      "{,}",
      '{"a" 1}',
      '{"a":1,}',
      "01",
      "1.",
      ".5",
      "+1",
      "NaN",
      "Infinity",
      "tru",
      "nulls",
      '"\\x41"',
      '"a\nb"',
      '"\\u12g4"',
      "\uFEFF{}",
      "{} {}",
      "'a'",
      "[1 2]",
      '{"a":1 "b":2}',
    ]) {
      expectCode(bad, "ERR_JSON_SYNTAX");
    }
  });

  it("never throws anything but a coded error on arbitrary input (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (s) => {
        try {
          parseStrictJson(s);
        } catch (err) {
          expect((err as { code?: string }).code).toMatch(/^ERR_(JSON|CANON)_/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
