// Regex patterns in policies come from files an attacker may influence, and they run
// against parameter values the model chose. JavaScript's backtracking engine can take
// exponential time on nested quantifiers and polynomial time on runs of unbounded ones,
// so patterns are checked at load for the shapes that backtrack catastrophically and are
// only ever run on values up to a length cap (see MAX_PATTERN_INPUT_LENGTH).
import { PolicyError } from "../contracts/index.js";

export const MAX_PATTERN_LENGTH = 512;
/** Default cap on the length of a value a pattern is run against. */
export const MAX_PATTERN_INPUT_LENGTH = 2048;
/** Unbounded quantifiers allowed in a pattern anchored with a leading `^`, and in one that is not. */
export const MAX_UNBOUNDED_ANCHORED = 2;
export const MAX_UNBOUNDED_UNANCHORED = 1;
/** A bounded repetition `{n,m}` above this counts as unbounded. */
const LARGE_BOUND = 16;

export type RegexCheck = { ok: true } | { ok: false; code: "ERR_POLICY_REGEX_UNSAFE"; message: string };

interface Frame {
  hasQuantifier: boolean;
  hasAlternation: boolean;
}

interface Atom {
  kind: "char" | "class" | "group" | "none";
  /** For groups: whether the group body contains a quantifier or an alternation. */
  risky: boolean;
}

/** Checks a pattern's shape; never compiles or runs it. */
export function checkRegexSafety(pattern: string): RegexCheck {
  const fail = (message: string): RegexCheck => ({ ok: false, code: "ERR_POLICY_REGEX_UNSAFE", message });
  if (pattern.length > MAX_PATTERN_LENGTH)
    return fail(`pattern longer than ${MAX_PATTERN_LENGTH} characters`);
  const stack: Frame[] = [{ hasQuantifier: false, hasAlternation: false }];
  let last: Atom = { kind: "none", risky: false };
  let unbounded = 0;
  let topLevelAlternation = false;
  let i = 0;
  const top = () => stack[stack.length - 1]!;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      const n = pattern[i + 1];
      if (n === undefined) return fail("pattern ends with a lone backslash");
      if (/[1-9]/.test(n) || (n === "k" && pattern[i + 2] === "<")) {
        return fail("backreferences are not allowed");
      }
      last = { kind: "char", risky: false };
      i += 2;
      continue;
    }
    if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      if (j >= pattern.length) return fail("unterminated character class");
      last = { kind: "class", risky: false };
      i = j + 1;
      continue;
    }
    if (c === "(") {
      if (pattern[i + 1] === "?") {
        const rest = pattern.slice(i + 2);
        if (rest.startsWith("<=") || rest.startsWith("<!")) return fail("lookbehind is not allowed");
        const m = /^(?::|=|!|<[A-Za-z_$][\w$]*>|[ims-]+:)/.exec(rest);
        if (m === null) return fail("unsupported group syntax");
        i += 2 + m[0].length;
      } else {
        i += 1;
      }
      stack.push({ hasQuantifier: false, hasAlternation: false });
      last = { kind: "none", risky: false };
      continue;
    }
    if (c === ")") {
      if (stack.length === 1) return fail("unbalanced parenthesis");
      const frame = stack.pop()!;
      const parent = top();
      if (frame.hasQuantifier) parent.hasQuantifier = true;
      last = { kind: "group", risky: frame.hasQuantifier || frame.hasAlternation };
      i += 1;
      continue;
    }
    if (c === "|") {
      top().hasAlternation = true;
      if (stack.length === 1) topLevelAlternation = true;
      last = { kind: "none", risky: false };
      i += 1;
      continue;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{") {
      let max: number;
      let len = 1;
      if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
        if (m === null) {
          // A literal brace, as the non-unicode syntax allows.
          last = { kind: "char", risky: false };
          i += 1;
          continue;
        }
        len = m[0].length;
        max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
      } else {
        max = c === "?" ? 1 : Number.POSITIVE_INFINITY;
      }
      if (last.kind === "none") return fail("quantifier without a target");
      if (last.kind === "group" && last.risky && max > 1) {
        return fail("a repeated group contains a quantifier or an alternation (nested quantifier)");
      }
      if (max > LARGE_BOUND) unbounded++;
      top().hasQuantifier = true;
      last = { kind: "none", risky: false };
      i += len;
      if (pattern[i] === "?") i += 1; // lazy modifier
      continue;
    }
    last = { kind: "char", risky: false };
    i += 1;
  }
  if (stack.length !== 1) return fail("unbalanced parenthesis");
  const anchored = pattern.startsWith("^") && !topLevelAlternation;
  const limit = anchored ? MAX_UNBOUNDED_ANCHORED : MAX_UNBOUNDED_UNANCHORED;
  if (unbounded > limit) {
    return fail(
      `${unbounded} unbounded quantifiers; at most ${limit} ${anchored ? "in an anchored" : "in an unanchored"} pattern` +
        (anchored ? "" : " (anchor it with ^ to allow two)"),
    );
  }
  return { ok: true };
}

/** Checks and compiles a policy pattern; throws a coded PolicyError naming `where`. */
export function compileSafeRegex(pattern: string, where: string): RegExp {
  const check = checkRegexSafety(pattern);
  if (!check.ok) {
    throw new PolicyError(check.code, `${where}: unsafe pattern: ${check.message}`, { details: { where } });
  }
  try {
    return new RegExp(pattern);
  } catch (err) {
    throw new PolicyError(
      "ERR_POLICY_REGEX_INVALID",
      `${where}: invalid pattern: ${(err as Error).message}`,
      {
        details: { where },
      },
    );
  }
}
