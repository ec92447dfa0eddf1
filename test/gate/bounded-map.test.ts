import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BoundedMap } from "../../src/gate/bounded-map.js";

describe("BoundedMap (the Gate's pending results)", () => {
  it("keeps the newest `max` insertions", () => {
    const m = new BoundedMap<number, string>(3);
    for (let i = 0; i < 10; i++) m.set(i, `v${i}`);
    expect(m.size).toBe(3);
    expect([7, 8, 9].map((k) => m.get(k))).toEqual(["v7", "v8", "v9"]);
    expect(m.has(6)).toBe(false);
  });

  it("rejects a non-positive bound", () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });

  it("behaves like a Map that evicts its oldest insertion (model-based, with deletes and re-inserts)", () => {
    const op = fc.oneof(
      fc.record({ t: fc.constant("set" as const), k: fc.integer({ min: 0, max: 40 }), v: fc.integer() }),
      fc.record({ t: fc.constant("delete" as const), k: fc.integer({ min: 0, max: 40 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 400 }), (max, ops) => {
        const m = new BoundedMap<number, number>(max);
        const model = new Map<number, number>();
        for (const o of ops) {
          if (o.t === "set") {
            if (model.has(o.k)) model.set(o.k, o.v);
            else {
              model.set(o.k, o.v);
              if (model.size > max) model.delete(model.keys().next().value!);
            }
            m.set(o.k, o.v);
          } else {
            expect(m.delete(o.k)).toBe(model.delete(o.k));
          }
          expect(m.size).toBe(model.size);
        }
        for (let k = 0; k <= 40; k++) expect(m.get(k)).toBe(model.get(k));
      }),
    );
  });

  it("stays bounded in memory when entries are deleted before eviction", () => {
    const m = new BoundedMap<number, number>(4);
    for (let i = 0; i < 100_000; i++) {
      m.set(i, i);
      m.delete(i);
    }
    expect(m.size).toBe(0);
    m.set(1, 1);
    expect(m.get(1)).toBe(1);
  });

  it("reports each eviction, and never a key the caller deleted", () => {
    const evicted: number[] = [];
    const m = new BoundedMap<number, number>(2, (k) => evicted.push(k));
    m.set(1, 1);
    m.set(2, 2);
    m.delete(1);
    m.set(3, 3);
    m.set(4, 4);
    expect(evicted).toEqual([2]);
    expect([m.has(3), m.has(4)]).toEqual([true, true]);
  });
});
