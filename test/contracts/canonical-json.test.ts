import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkedJson } from "../../src/contracts/canonical-json.js";
import {
  canonicalJson,
  hasErrorCode,
  isSha256Hash,
  parseStrictJson,
  sha256Hex,
  sha256Of,
  type WardenErrorCode,
} from "../../src/contracts/index.js";

function expectCode(fn: () => unknown, code: WardenErrorCode): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(hasErrorCode(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true);
}

describe("canonicalJson", () => {
  it("sorts keys by UTF-16 code units, not code points", () => {
    // U+1F600 (surrogates D83D DE00) sorts before U+FB01 in UTF-16 order, after it in code point order.
    expect(canonicalJson({ "\uFB01": 1, "\u{1F600}": 2 })).toBe('{"\u{1F600}":2,"\uFB01":1}');
  });

  it("writes numbers as ECMAScript does (RFC 8785 §3.2.2.3)", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [-0, "0"],
      [1, "1"],
      [1.5, "1.5"],
      [1e21, "1e+21"],
      [1e-7, "1e-7"],
      [123456789012345680000, "123456789012345680000"],
      [0.000001, "0.000001"],
      [5e-324, "5e-324"],
      [1.7976931348623157e308, "1.7976931348623157e+308"],
      [-1e-7, "-1e-7"],
      [9007199254740992, "9007199254740992"],
    ];
    for (const [n, s] of cases) expect(canonicalJson(n)).toBe(s);
  });

  it("escapes strings per RFC 8785 (short escapes, lowercase \\u00xx, no escaping of non-ASCII)", () => {
    expect(canonicalJson('\u0000\b\t\n\f\r\u001f"\\/é€😀')).toBe(
      '"\\u0000\\b\\t\\n\\f\\r\\u001f\\"\\\\/é€😀"',
    );
  });

  it("rejects non-finite numbers", () => {
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expectCode(() => canonicalJson({ n }), "ERR_CANON_NON_FINITE_NUMBER");
    }
  });

  it("rejects lone surrogates in values and keys", () => {
    expectCode(() => canonicalJson("a\uD800b"), "ERR_CANON_LONE_SURROGATE");
    expectCode(() => canonicalJson("\uDC00"), "ERR_CANON_LONE_SURROGATE");
    expectCode(() => canonicalJson({ "k\uDBFF": 1 }), "ERR_CANON_LONE_SURROGATE");
  });

  it("rejects undefined, functions, symbols, BigInt and non-plain objects", () => {
    expectCode(() => canonicalJson(undefined), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson({ a: undefined }), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson([undefined]), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson({ f: () => 1 }), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson(Symbol("s")), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson(10n), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson(new Date(0)), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson(new Map()), "ERR_CANON_UNSUPPORTED_TYPE");
    expectCode(() => canonicalJson(Buffer.from("x")), "ERR_CANON_UNSUPPORTED_TYPE");
  });

  it("accepts null-prototype objects", () => {
    const o = Object.create(null) as Record<string, unknown>;
    o.b = 1;
    o.a = 2;
    expect(canonicalJson(o)).toBe('{"a":2,"b":1}');
  });

  it("rejects cycles but allows shared (acyclic) references", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expectCode(() => canonicalJson(a), "ERR_CANON_CYCLE");
    const arr: unknown[] = [];
    arr.push(arr);
    expectCode(() => canonicalJson(arr), "ERR_CANON_CYCLE");
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it("rejects nesting beyond the depth limit", () => {
    let v: unknown = 1;
    for (let i = 0; i < 129; i++) v = [v];
    expectCode(() => canonicalJson(v), "ERR_CANON_TOO_DEEP");
    expect(() => canonicalJson(v, { maxDepth: 200 })).not.toThrow();
  });

  it("hashes as sha256:<64 lowercase hex>", () => {
    const h = sha256Of({ a: 1 });
    expect(isSha256Hash(h)).toBe(true);
    expect(isSha256Hash("sha256:ABC")).toBe(false);
    expect(isSha256Hash(`sha256:${"A".repeat(64)}`)).toBe(false);
  });
});

describe("canonicalJson properties", () => {
  const json = fc.jsonValue({ maxDepth: 6 });

  it("is idempotent: canonicalizing parsed canonical text yields the same text", () => {
    fc.assert(
      fc.property(json, (v) => {
        const c = canonicalJson(v);
        expect(canonicalJson(JSON.parse(c))).toBe(c);
        // The strict parser refuses a "__proto__" member by design (fast-check generates one).
        if (!c.includes('"__proto__"')) expect(canonicalJson(parseStrictJson(c))).toBe(c);
      }),
      { numRuns: 500 },
    );
  });

  it("is stable under key reordering", () => {
    const reorder = (v: unknown, seed: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => reorder(x, seed + i));
      if (v && typeof v === "object") {
        const entries = Object.entries(v);
        entries.sort((a, b) => ((a[0].length * 31 + seed) % 7) - ((b[0].length * 17 + seed) % 5));
        if (seed % 2) entries.reverse();
        return Object.fromEntries(entries.map(([k, x]) => [k, reorder(x, seed * 3 + 1)]));
      }
      return v;
    };
    fc.assert(
      fc.property(json, fc.nat(), (v, seed) => {
        expect(canonicalJson(reorder(v, seed))).toBe(canonicalJson(v));
        expect(sha256Of(reorder(v, seed))).toBe(sha256Of(v));
      }),
      { numRuns: 300 },
    );
  });

  it("the fast walk gives the checked walk's text, or its exact error code and message", () => {
    const bad = fc.constantFrom<unknown>(
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      "a\uD800",
      10n,
      () => 1,
      new Date(0),
      new Map(),
      Symbol("s"),
    );
    // JSON values with, now and then, something canonical JSON refuses somewhere inside.
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.jsonValue({ maxDepth: 2 }),
        bad,
        fc.array(tie("tree"), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: "binary", maxLength: 4 }), tie("tree"), { maxKeys: 4 }),
      ),
    }));
    const outcome = (f: () => string) => {
      try {
        return { text: f() };
      } catch (err) {
        return { code: (err as { code?: string }).code, message: (err as Error).message };
      }
    };
    fc.assert(
      fc.property(tree, fc.integer({ min: 1, max: 8 }), (v, maxDepth) => {
        expect(outcome(() => canonicalJson(v, { maxDepth }))).toEqual(
          outcome(() => checkedJson(v, maxDepth)),
        );
      }),
      { numRuns: 1000 },
    );
    // Cycles: the fast walk runs into the depth limit, the answer is still ERR_CANON_CYCLE.
    const a: unknown[] = [1, { b: [] as unknown[] }];
    ((a[1] as { b: unknown[] }).b as unknown[]).push(a);
    expectCode(() => canonicalJson(a), "ERR_CANON_CYCLE");
    expectCode(() => canonicalJson(a, { maxDepth: 1_000_000 }), "ERR_CANON_CYCLE");
  });

  it("remembered member orders: same names in other orders, shared first names, and past the bounds", () => {
    // One shape in every insertion order, then look-alikes sharing its first name.
    const names = ["b", "a", "d", "c"];
    const perms = (xs: string[]): string[][] =>
      xs.length <= 1
        ? [xs]
        : xs.flatMap((x, i) => perms([...xs.slice(0, i), ...xs.slice(i + 1)]).map((r) => [x, ...r]));
    for (const order of perms(names)) {
      const o = Object.fromEntries(order.map((k) => [k, k.toUpperCase()]));
      expect(canonicalJson(o)).toBe('{"a":"A","b":"B","c":"C","d":"D"}');
      expect(canonicalJson({ ...o, e: 1 })).toBe('{"a":"A","b":"B","c":"C","d":"D","e":1}');
      const { [order[order.length - 1]!]: _, ...fewer } = o;
      expect(canonicalJson(fewer)).toBe(checkedJson(fewer));
    }
    // Far more shapes than are remembered: still exact.
    for (let i = 0; i < 3000; i++) {
      const o = { [`z${i}`]: 1, [`y${i % 7}`]: 2, [`x${i}`]: [{ [`k${i}`]: 3, a: 4 }] };
      expect(canonicalJson(o)).toBe(checkedJson(o));
    }
  });

  it("writes a remembered member name the same first in its object and after another (property)", () => {
    // The key cache holds both forms of a name (`"k":` and `,"k":`); names recur in other
    // positions, other objects and later calls, and some are too long to be remembered.
    const name = fc.oneof(
      fc.string({ unit: "binary", maxLength: 6 }),
      fc.string({ minLength: 60, maxLength: 70 }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 6 }), fc.nat(), (names, seed) => {
        const shifted = names.map((_, i) => names[(i + seed) % names.length]!);
        const o = {
          ...Object.fromEntries(names.map((k, i) => [k, i])),
          nested: Object.fromEntries(shifted.map((k) => [k, [k]])),
        };
        if (Object.hasOwn(o, "__proto__")) return;
        expect(canonicalJson(o)).toBe(checkedJson(o));
        expect(canonicalJson(o)).toBe(checkedJson(o));
      }),
      { numRuns: 500 },
    );
  });

  it("sha256Of is SHA-256 of the canonical UTF-8 bytes (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), (v) => {
        const bytes = Buffer.from(canonicalJson(v), "utf8");
        expect(sha256Of(v)).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
        expect(sha256Hex(bytes)).toBe(sha256Of(v));
      }),
      { numRuns: 300 },
    );
  });

  it("round-trips every finite double exactly", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const back = JSON.parse(canonicalJson(n)) as number;
        expect(Object.is(back, n === 0 ? 0 : n)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips well-formed strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        expect(JSON.parse(canonicalJson(s))).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
});
