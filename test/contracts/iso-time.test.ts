// isoTime remembers the last second's text and writes only the milliseconds of a new
// instant in it: every sequence of instants must still give exactly toISOString's text
// (or its RangeError), whatever came before.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";

const reference = (ms: number): string | RangeError => {
  try {
    return new Date(ms).toISOString();
  } catch (e) {
    return e as RangeError;
  }
};

const ours = (ms: number): string | RangeError => {
  try {
    return isoTime(ms);
  } catch (e) {
    return e as RangeError;
  }
};

const instant = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }) },
  fc.integer({ min: -62_198_755_200_000, max: 253_402_300_800_999 }),
  fc.constantFrom(0, -1, 999, 1000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15, 8.64e15 + 1),
  fc.double({ noNaN: false }),
);

describe("isoTime", () => {
  it("gives toISOString's text for every instant, in any order", () => {
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 30 }), (seq) => {
        for (const ms of seq) {
          const want = reference(ms);
          const got = ours(ms);
          if (typeof want === "string") expect(got).toBe(want);
          else expect(got).toBeInstanceOf(RangeError);
          expect(ours(ms)).toEqual(got);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("accepts a Date", () => {
    const d = new Date(1_700_000_000_123);
    expect(isoTime(d)).toBe(d.toISOString());
  });
});
