// The chain hashes a decision's event from text written directly (event-text.ts); it
// must be canonicalJson's text for every event, plainly simple or not, so the chain's
// hashes (and every context_hash journaled) are unchanged.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { eventText } from "../../src/context/event-text.js";
import { createSessionStore } from "../../src/context/index.js";
import { canonicalJson, sha256Of, TAINT_SOURCES } from "../../src/contracts/index.js";

// Mostly names and hashes as a session writes them (every member plain, so the direct
// writer answers), now and then anything a string can hold.
const text = fc.oneof(
  { weight: 40, arbitrary: fc.stringMatching(/^[a-z0-9:._-]{0,10}$/) },
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.constantFrom('a"b', "a\\b", "\u0000", "\ud800", "é", "x".repeat(513), ""),
);
const number = fc.oneof(
  { weight: 40, arbitrary: fc.nat() },
  fc.constantFrom(-0, 1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY),
);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 3 });

const label = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record(
      {
        source: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...TAINT_SOURCES) }, text),
        origin: text,
        confidence: fc.oneof(fc.double({ min: 0, max: 1 }), number),
        addedAt: text,
        propagatedFrom: text,
      },
      { requiredKeys: ["source", "origin"] },
    ),
  },
  fc.record({ source: fc.constant("web"), origin: text, other: fc.jsonValue() }),
  fc.record({ source: fc.constant("web"), origin: text, confidence: fc.constant(undefined) }),
);

const hit = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ path: text, kind: text, outputs: fc.array(number, { maxLength: 3 }) }),
  },
  fc.record({ path: text, kind: text }),
  fc.record({ path: text, kind: text, outputs: fc.array(number), extra: fc.nat() }),
);

const decided = fc.record(
  {
    type: fc.oneof({ weight: 10, arbitrary: fc.constant("call.decided") }, fc.constant("usage")),
    call: number,
    toolClass: text,
    action: text,
    tool: optional(text),
    principalId: text,
    requestHash: text,
    decision: fc.oneof(fc.constantFrom("allow", "deny", "step_up"), text),
    reasonCodes: fc.array(text, { maxLength: 3 }),
    taint: fc.array(label, { maxLength: 3 }),
    provenance: fc.array(hit, { maxLength: 2 }),
    behaviour: fc.array(text, { maxLength: 2 }),
    seq: number,
    at: text,
    prev: text,
    stray: fc.jsonValue(),
  },
  {
    // All but `tool` and a stray member are mostly present (a missing one is tried too).
    requiredKeys: [
      "type",
      "call",
      "toolClass",
      "action",
      "principalId",
      "requestHash",
      "decision",
      "reasonCodes",
      "taint",
      "provenance",
      "behaviour",
      "seq",
      "at",
      "prev",
    ],
  },
);

const answer = (f: () => string): string | { code: unknown } => {
  try {
    return f();
  } catch (e) {
    return { code: (e as { code?: unknown }).code };
  }
};

/** Now and then one member dropped or a stray one added. */
const event = fc.tuple(decided, fc.nat({ max: 40 })).map(([e, n]) => {
  const { stray, ...rest } = e as Record<string, unknown>;
  const keys = Object.keys(rest);
  if (n < keys.length && n % 3 === 0) delete rest[keys[n]!];
  return n === 39 ? { ...rest, stray } : rest;
});

describe("a decision event's canonical text", () => {
  it("is canonicalJson's text (or its refusal) for any event of the decided shape", () => {
    fc.assert(
      fc.property(event, (e) => {
        expect(answer(() => eventText(e))).toEqual(answer(() => canonicalJson(e)));
      }),
      { numRuns: 3000 },
    );
  });

  it("is canonicalJson's for the events a session really appends", () => {
    const store = createSessionStore({ budgets: {} });
    const s = store.open({ runId: "run-1", principalId: "agent-1" }, 1_700_000_000_000);
    const req = {
      principalId: "agent-1",
      runId: "run-1",
      toolClass: "http",
      action: "get",
      tool: "fetch",
      parameters: { url: "https://example.org/é" },
      taintLabels: [{ source: "web" as const, origin: "example.org", confidence: 0.5 }],
    };
    const p = s.prepare(req, { now: 1_700_000_000_001 });
    s.recordDecision(p, "deny", ["r1", "RULE:x"], 1_700_000_000_002);
    const events = s.events();
    expect(events.some((e) => e.type === "call.decided")).toBe(true);
    for (const { hash, ...unsigned } of events) {
      expect(eventText(unsigned)).toBe(canonicalJson(unsigned));
      expect(hash).toBe(sha256Of(unsigned));
    }
  });
});
