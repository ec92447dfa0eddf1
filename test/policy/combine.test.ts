import { describe, expect, it } from "vitest";
import { DECISIONS, type Decision } from "../../src/contracts/index.js";
import {
  combineOutcomes,
  DEFAULT_DEFER_TIMEOUT_MS,
  DEFAULT_STEP_UP,
  type RuleOutcome,
} from "../../src/policy/index.js";

function out(id: string, decision: Decision, extra: Partial<RuleOutcome> = {}): RuleOutcome {
  return { rule: { id, source: "yaml", decision }, reasonCode: `R_${id.toUpperCase()}`, ...extra };
}

/** The combination rule written independently of the implementation, as a lookup table. */
const EXPECTED: Record<Decision, Record<Decision, Decision>> = {
  allow: { allow: "allow", modify: "modify", defer: "defer", step_up: "step_up", deny: "deny" },
  modify: { allow: "modify", modify: "modify", defer: "defer", step_up: "step_up", deny: "deny" },
  defer: { allow: "defer", modify: "defer", defer: "defer", step_up: "step_up", deny: "deny" },
  step_up: { allow: "step_up", modify: "step_up", defer: "step_up", step_up: "step_up", deny: "deny" },
  deny: { allow: "deny", modify: "deny", defer: "deny", step_up: "deny", deny: "deny" },
};

describe("combineOutcomes", () => {
  it("denies by default when no source produced a verdict", () => {
    const c = combineOutcomes([]);
    expect(c.decision).toBe("deny");
    expect(c.reasonCodes).toEqual(["DEFAULT_DENY"]);
    expect(c.matchedRules).toEqual([
      expect.objectContaining({ id: "builtin.default-deny", source: "builtin" }),
    ]);
  });

  it.each(DECISIONS)("a single %s stands", (d) => {
    expect(combineOutcomes([out("a", d)]).decision).toBe(d);
  });

  for (const a of DECISIONS) {
    for (const b of DECISIONS) {
      it(`${a} + ${b} → ${EXPECTED[a][b]} (either order)`, () => {
        const ab = combineOutcomes([out("a", a), out("b", b)]);
        const ba = combineOutcomes([out("b", b), out("a", a)]);
        expect(ab.decision).toBe(EXPECTED[a][b]);
        expect(ba.decision).toBe(EXPECTED[a][b]);
        expect(ab.matchedRules.map((r) => r.id)).toEqual(["a", "b"]);
      });
    }
  }

  it("reports the reason codes of the determining outcomes only, without repeats", () => {
    const c = combineOutcomes([out("a", "allow"), out("d1", "deny"), out("d2", "deny"), out("d1", "deny")]);
    expect(c.reasonCodes).toEqual(["R_D1", "R_D2"]);
  });

  it("a deny anywhere beats any number of allows (an attacker cannot outvote a deny)", () => {
    const many = Array.from({ length: 50 }, (_, i) => out(`allow${i}`, "allow"));
    expect(combineOutcomes([...many, out("d", "deny"), ...many]).decision).toBe("deny");
  });

  it("drops modify payloads under deny but keeps them under step_up and defer", () => {
    const modify = { redact: ["token"] };
    expect(combineOutcomes([out("m", "modify", { modify }), out("d", "deny")]).modifySpecs).toEqual([]);
    expect(combineOutcomes([out("m", "modify", { modify }), out("s", "step_up")]).modifySpecs).toEqual([
      modify,
    ]);
    expect(combineOutcomes([out("m", "modify", { modify }), out("f", "defer")]).modifySpecs).toEqual([
      modify,
    ]);
  });

  it("takes the first approver role and the shortest step_up timeout", () => {
    const c = combineOutcomes([
      out("a", "step_up", { stepUp: { approverRole: "security", timeoutMs: 60_000 } }),
      out("b", "step_up", { stepUp: { approverRole: "finance", timeoutMs: 10_000 } }),
    ]);
    expect(c.stepUp).toEqual({ approverRole: "security", timeoutMs: 10_000 });
  });

  it("takes the shortest defer timeout and fills defaults when a payload is missing", () => {
    const c = combineOutcomes([
      out("a", "defer", { defer: { timeoutMs: 9000 } }),
      out("b", "defer", { defer: { timeoutMs: 4000 } }),
    ]);
    expect(c.defer).toEqual({ timeoutMs: 4000 });
    expect(combineOutcomes([out("x", "defer")]).defer).toEqual({ timeoutMs: DEFAULT_DEFER_TIMEOUT_MS });
    expect(combineOutcomes([out("x", "step_up")]).stepUp).toEqual(DEFAULT_STEP_UP);
  });

  it("carries no stepUp/defer payload when the final decision is something else", () => {
    const c = combineOutcomes([
      out("a", "defer", { defer: { timeoutMs: 1 } }),
      out("b", "step_up", { stepUp: { approverRole: "x", timeoutMs: 1 } }),
      out("c", "deny"),
    ]);
    expect(c.stepUp).toBeUndefined();
    expect(c.defer).toBeUndefined();
    expect(combineOutcomes([out("a", "defer"), out("b", "step_up")]).defer).toBeUndefined();
  });

  it("collects obligations from every matched rule, deduplicated", () => {
    const c = combineOutcomes([
      out("a", "allow", { obligations: [{ type: "log" }, { type: "notify", params: { channel: "sec" } }] }),
      out("b", "deny", { obligations: [{ type: "log" }] }),
    ]);
    expect(c.obligations).toEqual([{ type: "log" }, { type: "notify", params: { channel: "sec" } }]);
  });
});
