// The Gate's pre-compiled GateRequest check must give zod's answer on every input: the
// same refusals (it leaves every refusal to zod) and, when it accepts, the very value
// zod builds (members, order, -0, defaults). Property tests over near-valid and hostile
// input; a test that fails if the fast path stopped being taken.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastGateRequest, UNSURE } from "../../src/contracts/gate-request-fast.js";
import { GateRequest, safeParseGateRequest, TAINT_SOURCES } from "../../src/contracts/index.js";

const SOURCES: ReadonlySet<string> = new Set(TAINT_SOURCES);

/** Mostly `valid`; now and then one of `odd` (each is weighted 1 against valid's 12). */
const mostly = <T>(valid: fc.Arbitrary<T>, ...odd: fc.Arbitrary<unknown>[]) =>
  fc.oneof({ weight: 12, arbitrary: valid as fc.Arbitrary<unknown> }, ...odd);

const name = mostly(
  fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,12}$/),
  fc.constantFrom("", "a".repeat(128), "a".repeat(129), "http; rm -rf /", "__proto__", "constructor"),
  fc.string({ maxLength: 6 }),
  fc.anything(),
);

/** Mostly the value itself; sometimes a member present with `undefined` (zod's default or refusal). */
const optional = <T>(a: fc.Arbitrary<T>) => mostly(a, fc.constant(undefined));

const label = mostly(
  fc.record(
    {
      source: mostly(fc.constantFrom(...TAINT_SOURCES), fc.string(), fc.anything()),
      origin: mostly(fc.string(), fc.constant("o".repeat(513)), fc.anything()),
      confidence: optional(
        mostly(fc.double({ min: 0, max: 1 }), fc.double(), fc.constantFrom(0, -0, 1, Number.NaN, 2, "0.5")),
      ),
      addedAt: optional(mostly(fc.string(), fc.constant("t".repeat(65)), fc.integer())),
      propagatedFrom: optional(mostly(fc.string(), fc.constant("p".repeat(129)))),
    },
    { requiredKeys: ["source", "origin"] },
  ),
  fc.record({ source: fc.constant("web"), origin: fc.string(), extra: fc.anything() }),
  fc.anything(),
);

/** Records with the keys zod treats specially: `__proto__`, over-long names, undefined, non-finite numbers. */
const ODD_RECORDS: unknown[] = [
  JSON.parse('{"__proto__": {"x": 1}, "a": 1}'),
  { ["k".repeat(257)]: 1 },
  { ["k".repeat(256)]: 1 },
  { a: undefined },
  { a: [1, undefined] },
  // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
  { a: [1, , 2] },
  { a: Number.NaN, b: Number.POSITIVE_INFINITY },
  { a: -0, b: { c: -0 } },
  { a: new Date(0) },
  { [Symbol("s")]: 1, a: 1 },
  Object.defineProperty({ a: 1 }, "hidden", { value: 2, enumerable: false }),
  Object.assign(Object.create(null), { a: 1 }),
  { a: Object.assign(Object.create(null), { b: 1 }) },
  { constructor: "x", nested: { constructor: { prototype: 1 } } },
  { deep: JSON.parse(`${"[".repeat(80)}1${"]".repeat(80)}`) },
];
const oddRecord = fc.constantFrom(...ODD_RECORDS);

const parameters = mostly(
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })),
  fc.object(),
  oddRecord,
  fc.anything({
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withBoxedValues: true,
  }),
);

const request = fc.record(
  {
    principalId: name,
    runId: mostly(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 130 }), fc.anything()),
    toolClass: name,
    action: name,
    tool: optional(name),
    parameters: optional(parameters),
    taintLabels: optional(mostly(fc.array(label, { maxLength: 3 }), fc.anything())),
    originalRequest: optional(mostly(fc.string(), fc.anything())),
    rationale: optional(mostly(fc.string(), fc.anything())),
    traceId: optional(mostly(fc.stringMatching(/^[0-9a-f]{32}$/), fc.string(), fc.constant("0".repeat(32)))),
  },
  { requiredKeys: ["principalId", "runId", "toolClass", "action"] },
);

/** A request, now and then with a member the schema does not know. */
const withExtra = fc
  .tuple(request, mostly(fc.constant(null), fc.tuple(fc.string({ maxLength: 12 }), fc.anything())))
  .map(([r, extra]) =>
    extra === null ? r : { ...r, [(extra as [string, unknown])[0]]: (extra as [string, unknown])[1] },
  );

/**
 * Exactly the same data: primitives by Object.is (so -0 is not 0), the same prototypes,
 * the same own keys in the same order. (toStrictEqual compares `constructor` members by
 * identity, which a parameter named `constructor` defeats.)
 */
function identical(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k, i) =>
      k === kb[i] &&
      identical((a as Record<PropertyKey, unknown>)[k], (b as Record<PropertyKey, unknown>)[k]),
  );
}

function sameAsZod(input: unknown): boolean {
  const zod = GateRequest.safeParse(input);
  const ours = safeParseGateRequest(input);
  expect(ours.success).toBe(zod.success);
  if (zod.success) {
    expect(identical(ours.data, zod.data), JSON.stringify(zod.data)).toBe(true);
  } else {
    expect(ours.error?.issues).toEqual(zod.error.issues);
  }
  return fastGateRequest(input, SOURCES) !== UNSURE;
}

describe("the fast GateRequest check", () => {
  it("accepts iff zod accepts, with zod's value, on near-valid and hostile requests", () => {
    let fast = 0;
    fc.assert(
      fc.property(withExtra, (r) => {
        if (sameAsZod(r)) fast++;
      }),
      { numRuns: 3000 },
    );
    // The property is not vacuous: a good share of the generated requests took the fast path.
    expect(fast).toBeGreaterThan(150);
  });

  it("gives zod's answer for each kind of parameters zod treats specially", () => {
    for (const parameters of ODD_RECORDS) {
      sameAsZod({ principalId: "a", runId: "r", toolClass: "http", action: "get", parameters });
      sameAsZod({
        principalId: "a",
        runId: "r",
        toolClass: "http",
        action: "get",
        parameters: { p: parameters },
      });
    }
  });

  it("gives zod's answer for anything at all", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withObjectString: true }), (x) => {
        sameAsZod(x);
      }),
      { numRuns: 1000 },
    );
  });

  it("leaves a request to zod when Object.prototype has an enumerable member zod's key walk would see", () => {
    const r = { principalId: "a", runId: "r", toolClass: "http", action: "get" };
    expect(fastGateRequest(r, SOURCES)).not.toBe(UNSURE);
    (Object.prototype as Record<string, unknown>).polluted = 1;
    try {
      expect(fastGateRequest(r, SOURCES)).toBe(UNSURE);
      sameAsZod(r);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it("takes the fast path for a plain well-formed request and builds a fresh copy", () => {
    const r = {
      principalId: "agent-1",
      runId: "run-1",
      toolClass: "http",
      action: "get",
      tool: "fetch",
      parameters: { url: "https://example.org/", n: [1, { x: null }] },
      taintLabels: [{ source: "web", origin: "example.org", confidence: 0.5 }],
      traceId: "0af7651916cd43dd8448eb211c80319c",
    };
    const out = fastGateRequest(r, SOURCES);
    expect(out).not.toBe(UNSURE);
    expect(identical(out, GateRequest.parse(r))).toBe(true);
    const o = out as { parameters: { n: unknown[] }; taintLabels: unknown[] };
    expect(o.parameters).not.toBe(r.parameters);
    expect(o.parameters.n).not.toBe(r.parameters.n);
    expect(o.taintLabels[0]).not.toBe(r.taintLabels[0]);
  });
});
