import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatTraceparent,
  hasErrorCode,
  newSpanId,
  newTraceId,
  parseTraceparent,
  SPAN_ID_PATTERN,
  TRACE_ID_PATTERN,
  UUID_PATTERN,
  uuidv4,
  uuidv7,
  uuidv7Time,
} from "../../src/contracts/index.js";

describe("ids", () => {
  it("uuidv4 is RFC 9562 version 4", () => {
    const id = uuidv4();
    expect(id).toMatch(UUID_PATTERN);
    expect(id[14]).toBe("4");
  });

  it("uuidv7 is version 7, encodes the time, and is monotonic within a process", () => {
    const now = Date.now();
    const ids = Array.from({ length: 5000 }, () => uuidv7(now));
    for (const id of ids) {
      expect(id).toMatch(UUID_PATTERN);
      expect(id[14]).toBe("7");
      expect(["8", "9", "a", "b"]).toContain(id[19]);
    }
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Math.abs(uuidv7Time(ids[0]!) - now)).toBeLessThanOrEqual(2);
  });

  it("uuidv7 stays well-formed, unique and strictly increasing across random-pool refills and clock steps back (property)", () => {
    const base = Date.now();
    let prev = uuidv7(base);
    const seen = new Set<string>([prev]);
    fc.assert(
      fc.property(
        // Timestamps near now, forwards and backwards, with runs in one millisecond.
        fc.array(fc.tuple(fc.integer({ min: -5, max: 60_000 }), fc.integer({ min: 1, max: 40 })), {
          maxLength: 60,
        }),
        (steps) => {
          for (const [dt, n] of steps) {
            for (let i = 0; i < n; i++) {
              const id = uuidv7(base + dt);
              expect(id).toMatch(UUID_PATTERN);
              expect(id[14]).toBe("7");
              expect(["8", "9", "a", "b"]).toContain(id[19]);
              expect(id > prev).toBe(true);
              // The clock never goes back in ids: the time is now, or the last id's (+1 on counter overflow).
              const t = uuidv7Time(id);
              const last = uuidv7Time(prev);
              expect(t === base + dt || t === last || t === last + 1).toBe(true);
              expect(t).toBeGreaterThanOrEqual(Math.min(base + dt, last));
              expect(seen.has(id)).toBe(false);
              seen.add(id);
              prev = id;
            }
          }
        },
      ),
    );
    // The random part varies (not one pooled value reused): 62 random bits per id.
    const tails = new Set([...seen].map((id) => id.slice(19)));
    expect(tails.size).toBe(seen.size);
  });

  it("uuidv7 refuses a timestamp that is not whole milliseconds within 48 bits", () => {
    for (const bad of [1.5, -1, 2 ** 48, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => uuidv7(bad)).toThrow(RangeError);
    }
  });

  it("uuidv7Time rejects a non-v7 id", () => {
    try {
      uuidv7Time(uuidv4());
      throw new Error("accepted");
    } catch (err) {
      expect(hasErrorCode(err, "ERR_CONTRACT_ID_INVALID")).toBe(true);
    }
  });

  it("trace and span ids follow W3C trace-context", () => {
    const t = newTraceId();
    const s = newSpanId();
    expect(t).toMatch(TRACE_ID_PATTERN);
    expect(s).toMatch(SPAN_ID_PATTERN);
    const header = formatTraceparent({ traceId: t, spanId: s, sampled: true });
    expect(header).toBe(`00-${t}-${s}-01`);
    expect(parseTraceparent(header)).toEqual({ traceId: t, spanId: s, sampled: true });
  });

  it("rejects invalid traceparent headers", () => {
    const zeros = `00-${"0".repeat(32)}-${"1".repeat(16)}-01`;
    for (const bad of [
      zeros,
      `00-${"a".repeat(32)}-${"0".repeat(16)}-01`,
      "01-abc",
      `00-${"A".repeat(32)}-${"1".repeat(16)}-01`,
      "",
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
    try {
      formatTraceparent({ traceId: "0".repeat(32), spanId: "1".repeat(16), sampled: false });
      throw new Error("accepted");
    } catch (err) {
      expect(hasErrorCode(err, "ERR_CONTRACT_ID_INVALID")).toBe(true);
    }
  });
});
