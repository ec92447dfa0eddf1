import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import { checkRegexSafety, compileSafeRegex, MAX_PATTERN_LENGTH } from "../../src/policy/index.js";

describe("checkRegexSafety", () => {
  it.each([
    "^https://(api\\.github\\.com|api\\.openai\\.com)",
    "^https?://[a-z0-9.-]+/",
    "(foo|bar)?baz",
    "\\.ssh/",
    "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$",
    "^(?:rm|mv)\\b",
    "a{1,3}b",
    "x(?=y)",
    "^.*\\.env$",
    "^/data/.*",
  ])("accepts %s", (p) => {
    expect(checkRegexSafety(p)).toEqual({ ok: true });
  });

  it.each([
    ["(a+)+", "nested quantifier"],
    ["(a*)*b", "nested quantifier"],
    ["(a|a)*", "alternation"],
    ["(a|aa)+$", "alternation"],
    ["^(\\w+\\s?)*$", "nested quantifier"],
    ["(?:\\.[a-z]+)*@", "nested quantifier"],
    ["(a?){20}", "nested quantifier"],
    ["((ab)*c)+", "nested quantifier"],
    ["(a)\\1", "backreferences"],
    ["(?<x>a)\\k<x>", "backreferences"],
    ["(?<=a)b", "lookbehind"],
    [".*a.*b", "unbounded quantifiers"],
    ["[a-z]+[a-z]+x", "unbounded quantifiers"],
    ["^.*a.*a.*b", "unbounded quantifiers"],
    ["^a{1,100}b{1,100}c{1,100}", "unbounded quantifiers"],
    ["a|^.*b.*c", "unbounded quantifiers"],
  ])("rejects %s (%s)", (p, why) => {
    const r = checkRegexSafety(p);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("ERR_POLICY_REGEX_UNSAFE");
      expect(r.message).toContain(why);
    }
  });

  it("rejects over-long patterns and malformed structure", () => {
    for (const p of ["a".repeat(MAX_PATTERN_LENGTH + 1), "(ab", "ab)", "[abc", "*a", "a\\"]) {
      expect(checkRegexSafety(p).ok, p).toBe(false);
    }
  });

  it("compileSafeRegex throws coded errors naming where the pattern came from", () => {
    try {
      compileSafeRegex("(a+)+$", "p.yaml: rules[0]");
      expect.unreachable();
    } catch (err) {
      expect(hasErrorCode(err, "ERR_POLICY_REGEX_UNSAFE")).toBe(true);
      expect((err as Error).message).toContain("p.yaml: rules[0]");
    }
    try {
      compileSafeRegex("a{2,1}", "here");
      expect.unreachable();
    } catch (err) {
      expect(hasErrorCode(err, "ERR_POLICY_REGEX_INVALID")).toBe(true);
    }
    expect(compileSafeRegex("^ab+c$", "x").test("abbbc")).toBe(true);
  });
});
