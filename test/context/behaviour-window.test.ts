// The session's BehaviourWindow answers the sequence rules from indexes kept as events
// arrive; the reference answer scans the window's events. Both must agree on every
// sequence of events (property test), and so must the rules evaluated over each.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  classify,
  evaluateRules,
  type Signal,
  scanView,
  type WindowEvent,
} from "../../src/context/behaviour.js";
import { BEHAVIOURAL_RULE_IDS, parseContextConfig } from "../../src/context/config.js";
import { BehaviourWindow } from "../../src/context/facts.js";
import { DECISIONS, TAINT_SOURCES } from "../../src/contracts/index.js";

const SIGNALS: Signal[] = [
  "sensitive_read",
  "egress",
  "any_egress",
  "secret_access",
  "shell_exec",
  "shell_with_data",
  "database_write",
];
// Classes with and without a configured risk, and names that look up Object.prototype.
const CLASSES = ["http", "database", "file", "shell", "mcp", "custom", "constructor", "toString"];

const event = fc.record({
  kind: fc.constantFrom("call" as const, "result" as const),
  toolClass: fc.constantFrom(...CLASSES),
  action: fc.constantFrom("get", "post", "read", "exec"),
  decision: fc.option(fc.constantFrom(...DECISIONS), { nil: undefined }),
  taint: fc.uniqueArray(fc.constantFrom(...TAINT_SOURCES), { maxLength: 3 }),
  signals: fc.uniqueArray(fc.constantFrom(...SIGNALS), { maxLength: 4 }),
});

const candidate = fc.record({
  toolClass: fc.constantFrom(...CLASSES),
  action: fc.constantFrom("get", "post", "read", "exec"),
  taint: fc.uniqueArray(fc.constantFrom(...TAINT_SOURCES), { maxLength: 2 }),
  signals: fc.uniqueArray(fc.constantFrom(...SIGNALS), { maxLength: 4 }),
});

const config = fc.record({
  windowSize: fc.integer({ min: 1, max: 8 }),
  taintScope: fc.constantFrom("window" as const, "call" as const),
  untrustedSources: fc.uniqueArray(fc.constantFrom(...TAINT_SOURCES), { maxLength: 3 }),
  classRisk: fc.constantFrom(
    { http: 1, database: 2, file: 3, shell: 5 },
    { http: 2, database: 2, file: 1 },
    {},
  ),
  enabled: fc.shuffledSubarray([...BEHAVIOURAL_RULE_IDS]),
});

describe("the behavioural window's indexes", () => {
  it("answer every rule query exactly as a scan of the window does", () => {
    fc.assert(
      fc.property(
        config,
        fc.array(event, { maxLength: 40 }),
        fc.array(candidate, { minLength: 1, maxLength: 4 }),
        (c, events, candidates) => {
          const cfg = parseContextConfig({ rules: c });
          const w = new BehaviourWindow(cfg.rules.windowSize, 5, cfg.rules);
          let seq = 0;
          for (const e of events) {
            seq += 1 + (e.taint.length % 2); // sequence numbers grow, with gaps (chain events outside the window)
            const { decision, ...rest } = e;
            const ev: WindowEvent = decision === undefined ? { ...rest, seq } : { ...rest, decision, seq };
            w.push(ev);
            const scan = scanView(w.events, cfg.rules);
            expect(w.lastUntrusted()).toBe(scan.lastUntrusted());
            for (const s of ["sensitive_read", "secret_access"] as const)
              expect(w.lastAdmittedWith(s)).toBe(scan.lastAdmittedWith(s));
            for (const risk of [0, 1, 2, 3, 5, 9])
              expect(w.lastDeniedBelow(risk)).toBe(scan.lastDeniedBelow(risk));
            for (const k of candidates) {
              expect(evaluateRules(w, k, cfg.rules)).toEqual(evaluateRules([...w.events], k, cfg.rules));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("classify's per-configuration class × action kinds", () => {
  const kindsCall = fc.record({
    toolClass: fc.constantFrom("http", "file", "shell", "database", "message", "x", "constructor"),
    action: fc.constantFrom("get", "post", "read", "exec", "write", "send", "toString"),
    parameters: fc.dictionary(
      fc.constantFrom("url", "path", "command", "query"),
      fc.constantFrom(
        "https://vault.example/v1/secret",
        "/home/u/.ssh/id_rsa",
        "ls",
        `echo ${"A".repeat(120)}`,
      ),
    ),
  });

  it("are what a fresh configuration computes, call after call", () => {
    fc.assert(
      fc.property(fc.array(kindsCall, { minLength: 1, maxLength: 20 }), (calls) => {
        const shared = parseContextConfig({}).rules;
        for (const c of calls) expect(classify(c, shared)).toEqual(classify(c, parseContextConfig({}).rules));
      }),
      { numRuns: 200 },
    );
  });

  it("stay right past the cache's bound (names from requests cannot grow it without limit)", () => {
    const rules = parseContextConfig({}).rules;
    for (let i = 0; i < 5000; i++) classify({ toolClass: `c${i}`, action: "post", parameters: {} }, rules);
    expect(classify({ toolClass: "http", action: "post", parameters: {} }, rules)).toEqual([
      "egress",
      "any_egress",
    ]);
    expect(classify({ toolClass: "c1", action: "post", parameters: {} }, rules)).toEqual([]);
  });
});
