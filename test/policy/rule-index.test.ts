// The rule index (issue 16) must be invisible: for any rule set and any call, the indexed
// engine returns exactly what the linear first-match walk returns.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildEvalContext,
  DEFAULT_CLASSIFICATION_LEVELS,
  type PolicyFile,
  validatePolicyData,
  YamlEngine,
  type YamlSource,
} from "../../src/policy/index.js";
import { RuleIndex } from "../../src/policy/rule-index.js";
import { mkInput } from "./helpers.js";

const CLASSES = ["http", "file", "shell"];
const ACTIONS = ["get", "post", "read", "exec"];
const TOOLS = ["fetch", "cat", "sh"];
const DECISIONS = ["allow", "deny", "step_up", "defer"] as const;

const nameOrList = (names: string[]) =>
  fc.option(
    fc.oneof(fc.constantFrom(...names), fc.uniqueArray(fc.constantFrom(...names), { minLength: 1 })),
    {
      nil: undefined,
    },
  );

const ruleArb = fc.record({
  toolClass: nameOrList(CLASSES),
  action: nameOrList(ACTIONS),
  tool: nameOrList(TOOLS),
  gt: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
  priority: fc.integer({ min: 0, max: 20 }),
  layer: fc.constantFrom("project", "override"),
  decision: fc.constantFrom(...DECISIONS),
});

type GenRule = typeof ruleArb extends fc.Arbitrary<infer T> ? T : never;

function sources(rules: GenRule[]): YamlSource[] {
  const files: Record<"project" | "override", PolicyFile["rules"]> = { project: [], override: [] };
  for (const [i, r] of rules.entries()) {
    const match: Record<string, unknown> = {};
    if (r.toolClass !== undefined) match.toolClass = r.toolClass;
    if (r.action !== undefined) match.action = r.action;
    if (r.tool !== undefined) match.tool = r.tool;
    if (r.gt !== undefined) match.parameters = { n: { gt: r.gt } };
    const priority = r.layer === "project" ? r.priority : 900 + r.priority;
    files[r.layer].push(
      validatePolicyData({
        rules: [{ id: `r${i}`, name: "x", priority, match, decision: r.decision, reason: "r" }],
      }).rules[0]!,
    );
  }
  return (["project", "override"] as const).map((layer) => ({
    name: `${layer}.yaml`,
    layer,
    file: { rules: files[layer] },
  }));
}

const callArb = fc.record({
  toolClass: fc.constantFrom(...CLASSES, "other"),
  action: fc.constantFrom(...ACTIONS, "other"),
  tool: fc.option(fc.constantFrom(...TOOLS, "unknown-tool"), { nil: undefined }),
  n: fc.oneof(fc.integer({ min: -6, max: 6 }), fc.constant("3"), fc.constant(null)),
});

describe("the YAML rule index", () => {
  it("indexed evaluation equals the linear first-match walk for random rule sets and calls", () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { maxLength: 40 }),
        fc.array(callArb, { minLength: 1, maxLength: 30 }),
        (rules, calls) => {
          const src = sources(rules);
          const opts = { classificationLevels: DEFAULT_CLASSIFICATION_LEVELS };
          const indexed = new YamlEngine(src, opts);
          const linear = new YamlEngine(src, { ...opts, indexed: false });
          // Twice over the same engine: the second pass is served from the candidate cache.
          for (const c of [...calls, ...calls]) {
            const params = c.n === undefined ? {} : { n: c.n };
            const input = mkInput(
              c.toolClass,
              c.action,
              params,
              c.tool === undefined ? {} : { request: { tool: c.tool } },
            );
            const ctx = buildEvalContext(input, DEFAULT_CLASSIFICATION_LEVELS);
            expect(indexed.evaluate(ctx)).toEqual(linear.evaluate(ctx));
            // explain walks every rule; its stopping point is the same rule.
            const trace = indexed.explain(ctx);
            const got = indexed.evaluate(ctx);
            if (got === undefined) expect(trace.every((t) => !t.matched)).toBe(true);
            else expect(trace.at(-1)).toMatchObject({ id: got.rule.id, matched: true });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a call only walks the rules filed under its names plus the always-checked bucket, in rule order", () => {
    const rules = ["a", "b", "c", "d", "e", "f", "g"];
    const keys = {
      a: { dim: "tool", names: ["fetch"] },
      b: undefined,
      c: { dim: "action", names: ["get", "post"] },
      d: { dim: "toolClass", names: ["http"] },
      e: { dim: "toolClass", names: ["file"] },
      f: { dim: "tool", names: ["cat"] },
      g: { dim: "classAction", classes: ["http", "file"], actions: ["get"] },
    } as const;
    const index = new RuleIndex(rules, (r) => keys[r as keyof typeof keys]);
    expect(index.candidates("http", "get", "fetch")).toEqual(["a", "b", "c", "d", "g"]);
    expect(index.candidates("file", "read", undefined)).toEqual(["b", "e"]);
    expect(index.candidates("shell", "get", undefined)).toEqual(["b", "c"]);
    expect(index.candidates("x", "y", "never-named")).toEqual(["b"]);
    // Served from the cache the second time, same answer.
    expect(index.candidates("http", "get", "fetch")).toEqual(["a", "b", "c", "d", "g"]);
    // Repeated at once (the last-lookup memo), and then one name changed at a time.
    expect(index.candidates("http", "get", "fetch")).toEqual(["a", "b", "c", "d", "g"]);
    expect(index.candidates("http", "get", undefined)).toEqual(["b", "c", "d", "g"]);
    expect(index.candidates("http", "get", "cat")).toEqual(["b", "c", "d", "f", "g"]);
    expect(index.candidates("file", "get", "cat")).toEqual(["b", "c", "e", "f", "g"]);
    expect(index.candidates("file", "post", "cat")).toEqual(["b", "c", "e", "f"]);
    expect(index.candidates("file", "post", "cat")).toEqual(["b", "c", "e", "f"]);
  });

  it("the last-lookup memo answers only for the same three names (property: equals a fresh index)", () => {
    const rules = ["a", "b", "c", "d"];
    const keys = {
      a: { dim: "tool", names: ["fetch"] },
      b: { dim: "action", names: ["get"] },
      c: { dim: "toolClass", names: ["http"] },
      d: { dim: "classAction", classes: ["file"], actions: ["read"] },
    } as const;
    const keyOf = (r: string) => keys[r as keyof typeof keys];
    const call = fc.tuple(
      fc.constantFrom(...CLASSES, "x"),
      fc.constantFrom(...ACTIONS, "y"),
      fc.option(fc.constantFrom(...TOOLS, "z"), { nil: undefined }),
    );
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 12 }), (calls) => {
        const index = new RuleIndex(rules, keyOf);
        for (const [c, a, t] of calls) {
          expect(index.candidates(c, a, t)).toEqual(new RuleIndex(rules, keyOf).candidates(c, a, t));
        }
      }),
      { numRuns: 300 },
    );
  });
});
