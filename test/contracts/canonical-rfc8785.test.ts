// RFC 8785 (JSON Canonicalization Scheme) cases written from the RFC's own text: the
// §3.2.2 example, the §3.2.3 sorting example and the Appendix B number table (IEEE 754
// bit patterns and their expected text). The project's own cases: they need no vectors.
import { describe, expect, it } from "vitest";
import { canonicalJson, hasErrorCode } from "../../src/contracts/index.js";

const fromBits = (hex: string): number => Buffer.from(hex, "hex").readDoubleBE(0);

describe("RFC 8785 examples", () => {
  it("§3.2.2: the example object canonicalizes to the RFC's output", () => {
    const input =
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
      ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
      ' "literals": [null, true, false]}';
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("§3.2.3: properties sort by UTF-16 code units", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  // Appendix B: IEEE 754 double (hex bit pattern) -> JSON text.
  const numbers: [string, string][] = [
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"],
  ];
  it.each(numbers)("Appendix B: %s serializes as %s", (bits, text) => {
    expect(canonicalJson(fromBits(bits))).toBe(text);
    expect(canonicalJson({ n: [fromBits(bits)] })).toBe(`{"n":[${text}]}`);
  });

  it.each(["7ff0000000000000", "fff0000000000000", "7fffffffffffffff"])(
    "Appendix B: %s (Infinity/NaN) is refused",
    (bits) => {
      let caught: unknown;
      try {
        canonicalJson(fromBits(bits));
      } catch (err) {
        caught = err;
      }
      expect(hasErrorCode(caught, "ERR_CANON_NON_FINITE_NUMBER")).toBe(true);
    },
  );
});
