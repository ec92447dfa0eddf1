// Compiling a YAML rule's `match` into a list of small conditions. Each condition answers
// true / false, "unknown" (a pattern that could not be run on an over-long value) or
// "not evaluable" (the parameter is present but of a type the condition cannot read: a
// comparison on anything but a finite JSON number, a pattern / in / notIn on an array,
// object or null). A rule with a condition that is not evaluable denies (yaml-engine.ts):
// a value the rule cannot judge never slips past it. Values are never coerced here;
// numeric strings become numbers only when a tool contract types the argument.
import { PolicyError } from "../contracts/index.js";
import { compileApae } from "./apae-match.js";
import { type EvalContext, paramValue } from "./eval-context.js";
import { compileMessageMatch } from "./message-match.js";
import { compileSafeRegex, MAX_PATTERN_INPUT_LENGTH } from "./regex-safety.js";
import type { PolicyFlow } from "./types.js";
import type { NumCompare, ParamCondition, PolicyMatch } from "./yaml-schema.js";

/** A condition's answer when the value is present but of a type it cannot read. */
export const NOT_EVALUABLE = "not-evaluable";

/** true / false, undefined when a pattern could not be run (value over the length cap), or NOT_EVALUABLE. */
export type Tri = boolean | undefined | typeof NOT_EVALUABLE;

export interface Condition {
  /** What the condition checks, for `explain` (e.g. `parameters.url.pattern`). */
  name: string;
  test(ctx: EvalContext): Tri;
}

export interface MatchOptions {
  maxPatternInputLength?: number;
  classificationLevels: readonly string[];
}

export function list<T>(v: T | T[]): T[] {
  return Array.isArray(v) ? v : [v];
}

type NameField = "toolClass" | "action" | "tool" | "principalId" | "riskTier" | "category";

/** One direct closure per field (no getter call per test: this runs for every rule visited). */
function equals(field: NameField, only: string): (ctx: EvalContext) => boolean {
  switch (field) {
    case "toolClass":
      return (c) => c.toolClass === only;
    case "action":
      return (c) => c.action === only;
    case "tool":
      return (c) => c.tool === only;
    case "principalId":
      return (c) => c.principalId === only;
    case "riskTier":
      return (c) => c.riskTier === only;
    case "category":
      return (c) => c.category === only;
  }
}

function oneOf(field: NameField, values: string | string[]): Condition {
  const arr = list(values);
  if (arr.length === 1) return { name: field, test: equals(field, arr[0]!) };
  const set = new Set(arr);
  return {
    name: field,
    test: (ctx) => {
      const v = ctx[field];
      return v !== undefined && set.has(v);
    },
  };
}

function compare(c: NumCompare, v: number): boolean {
  return (
    (c.eq === undefined || v === c.eq) &&
    (c.gt === undefined || v > c.gt) &&
    (c.gte === undefined || v >= c.gte) &&
    (c.lt === undefined || v < c.lt) &&
    (c.lte === undefined || v <= c.lte)
  );
}

/** Conditions in the order they are tried: the cheapest (and most selective) first. */
export function compileMatch(m: PolicyMatch, where: string, options: MatchOptions): Condition[] {
  const out: Condition[] = [];
  if (m.toolClass !== undefined) out.push(oneOf("toolClass", m.toolClass));
  if (m.action !== undefined) out.push(oneOf("action", m.action));
  if (m.tool !== undefined) out.push(oneOf("tool", m.tool));
  if (m.principalId !== undefined) out.push(oneOf("principalId", m.principalId));
  if (m.roles !== undefined) {
    const roles = list(m.roles);
    out.push({ name: "roles", test: (c) => roles.some((r) => c.roles.has(r)) });
  }
  if (m.riskTier !== undefined) out.push(oneOf("riskTier", m.riskTier));
  if (m.category !== undefined) out.push(oneOf("category", m.category));
  if (m.humanApproval !== undefined) {
    const want = m.humanApproval;
    out.push({ name: "humanApproval", test: (c) => c.humanApproval === want });
  }
  if (m.quarantined !== undefined) {
    const want = m.quarantined;
    out.push({ name: "quarantined", test: (c) => c.quarantined === want });
  }
  if (m.capability !== undefined) {
    const want = m.capability;
    out.push({ name: "capability", test: (c) => c.capability === want });
  }
  if (m.identity !== undefined) compileIdentity(m.identity, out);
  compileSession(m, where, options, out);
  if (m.message !== undefined) out.push(...compileMessageMatch(m.message));
  if (m.flow !== undefined) out.push(...compileFlow(m.flow));
  for (const [key, cond] of Object.entries(m.parameters ?? {})) {
    out.push(...compileParam(key, cond, `${where}: match.parameters.${key}`, options));
  }
  return out;
}

type FlowMatch = NonNullable<PolicyMatch["flow"]>;

/** Conditions on the call's flow facts; a call without them does not evaluate (fails closed). */
function compileFlow(m: FlowMatch): Condition[] {
  const out: Condition[] = [];
  const srcs = m.sources;
  const any = (have: readonly string[]) =>
    srcs === undefined ? have.length > 0 : srcs.some((s) => have.includes(s));
  const on = (name: string, test: (f: PolicyFlow, c: EvalContext) => boolean): void => {
    out.push({
      name: `flow.${name}`,
      test: (c) => (c.input.flow === undefined ? NOT_EVALUABLE : test(c.input.flow, c)),
    });
  };
  if (m.copied !== undefined) {
    const want = m.copied;
    on("copied", (f) => (f.copied.length > 0 && any(f.copiedSources)) === want);
  }
  if (m.named !== undefined) {
    const want = m.named;
    on("named", (f) => any(f.namedSources) === want);
  }
  if (m.fromRequest !== undefined) {
    const want = m.fromRequest;
    on("fromRequest", (f) => f.fromRequest === want);
  }
  if (m.untargeted !== undefined) {
    const want = m.untargeted;
    on("untargeted", (f) => f.untargeted === want);
  }
  if (m.designated !== undefined) {
    const want = m.designated;
    on("designated", (f) => f.designated === want);
  }
  if (m.foundIn !== undefined) {
    const where = m.foundIn;
    on("foundIn", (f) => where.some((s) => f.foundIn.includes(s)));
  }
  if (m.webRequested !== undefined) {
    const want = m.webRequested;
    on("webRequested", (f) => f.webRequested === want);
  }
  if (m.unsourced !== undefined) {
    const want = m.unsourced;
    on("unsourced", (f) => f.unsourced.length > 0 === want);
  }
  if (m.dictatedNumber !== undefined) {
    const want = m.dictatedNumber;
    on("dictatedNumber", (f) => f.dictatedNumbers.length > 0 === want);
  }
  if (m.sensitive !== undefined) {
    const want = m.sensitive;
    on("sensitive", (f) => f.sensitive.length > 0 === want);
  }
  if (m.runTaintSources !== undefined) {
    const run = m.runTaintSources;
    on("runTaintSources", (_f, c) => run.some((s) => c.input.session.taintSeen?.includes(s) === true));
  }
  return out;
}

/** Conditions on the verified agent identity; a call without one fails all but `present: false`. */
function compileIdentity(m: NonNullable<PolicyMatch["identity"]>, out: Condition[]): void {
  if (m.present !== undefined) {
    const want = m.present;
    out.push({ name: "identity.present", test: (c) => (c.input.request.identity !== undefined) === want });
  }
  if (m.agentId !== undefined) {
    const ids = new Set(list(m.agentId));
    out.push({ name: "identity.agentId", test: (c) => ids.has(c.input.request.identity?.agentId ?? "") });
  }
  if (m.domain !== undefined) {
    const domains = new Set(list(m.domain));
    out.push({ name: "identity.domain", test: (c) => domains.has(c.input.request.identity?.domain ?? "") });
  }
  if (m.capabilities !== undefined) {
    const caps = m.capabilities;
    out.push({
      name: "identity.capabilities",
      test: (c) => caps.some((x) => c.input.request.identity?.capabilities.includes(x) === true),
    });
  }
}

/** Taint, classification, counters and trust: facts the runtime computes, always numbers or sets. */
function compileSession(m: PolicyMatch, where: string, options: MatchOptions, out: Condition[]): void {
  if (m.taintSources !== undefined) {
    const srcs = m.taintSources;
    out.push({ name: "taintSources", test: (c) => srcs.some((s) => c.taint.has(s)) });
  }
  if (m.notTaintSources !== undefined) {
    const srcs = m.notTaintSources;
    out.push({ name: "notTaintSources", test: (c) => !srcs.some((s) => c.taint.has(s)) });
  }
  if (m.classificationAtLeast !== undefined) {
    const idx = options.classificationLevels.indexOf(m.classificationAtLeast);
    if (idx === -1) {
      throw new PolicyError(
        "ERR_POLICY_SCHEMA",
        `${where}: match.classificationAtLeast: unknown level ${JSON.stringify(m.classificationAtLeast)} (levels: ${options.classificationLevels.join(", ")})`,
        { details: { path: "match.classificationAtLeast" } },
      );
    }
    out.push({ name: "classificationAtLeast", test: (c) => c.classificationLevel >= idx });
  }
  if (m.classificationsSeen !== undefined) {
    const want = m.classificationsSeen;
    out.push({ name: "classificationsSeen", test: (c) => want.some((w) => c.classifications.has(w)) });
  }
  for (const [k, cmp] of Object.entries(m.counters ?? {})) {
    if (cmp === undefined) continue;
    const key = k as keyof EvalContext["counters"];
    out.push({ name: `counters.${k}`, test: (c) => compare(cmp, c.counters[key]) });
  }
  for (const [k, cmp] of Object.entries(m.perToolCalls ?? {})) {
    out.push({
      name: `perToolCalls.${k}`,
      test: (c) => compare(cmp, Object.hasOwn(c.perToolCalls, k) ? (c.perToolCalls[k] ?? 0) : 0),
    });
  }
  if (m.trustScoreBelow !== undefined) {
    const t = m.trustScoreBelow;
    // Fail closed: with no score configured, "below" holds (a restriction applies).
    out.push({ name: "trustScoreBelow", test: (c) => c.trustScore === undefined || c.trustScore < t });
  }
  if (m.risk !== undefined) {
    const r = m.risk;
    // Fail closed: an action without a risk score counts as the riskiest.
    out.push({ name: "risk", test: (c) => compare(r, c.riskScore ?? 1) });
  }
  if (m.drift !== undefined) {
    const r = m.drift;
    out.push({ name: "drift", test: (c) => c.drift !== undefined && compare(r, c.drift.action) });
  }
  if (m.cumulativeDrift !== undefined) {
    const r = m.cumulativeDrift;
    out.push({
      name: "cumulativeDrift",
      test: (c) => c.drift !== undefined && compare(r, c.drift.cumulative),
    });
  }
  if (m.trustScoreAtLeast !== undefined) {
    const t = m.trustScoreAtLeast;
    out.push({ name: "trustScoreAtLeast", test: (c) => c.trustScore !== undefined && c.trustScore >= t });
  }
  compileApae(m.apae, out);
}

/**
 * Ari reads parameter values as strings: strings as-is, finite numbers and booleans
 * stringified. Anything else present (array, object, null) cannot be read that way.
 */
function scalarString(v: unknown): string | typeof NOT_EVALUABLE {
  if (typeof v === "string") return v;
  if (typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) return String(v);
  return NOT_EVALUABLE;
}

/** Reads a parameter for a string condition: undefined when absent, NOT_EVALUABLE when unreadable. */
function readScalar(c: EvalContext, key: string): string | undefined | typeof NOT_EVALUABLE {
  const v = paramValue(c.params, key);
  return v === undefined ? undefined : scalarString(v);
}

function compileParam(key: string, cond: ParamCondition, where: string, options: MatchOptions): Condition[] {
  const out: Condition[] = [];
  const name = `parameters.${key}`;
  const cap = options.maxPatternInputLength ?? MAX_PATTERN_INPUT_LENGTH;
  if (cond.exists !== undefined) {
    const want = cond.exists;
    out.push({ name: `${name}.exists`, test: (c) => (paramValue(c.params, key) !== undefined) === want });
  }
  for (const [op, values] of [
    ["in", cond.in],
    ["notIn", cond.notIn],
  ] as const) {
    if (values === undefined) continue;
    const set = new Set(values.map(String));
    const want = op === "in";
    out.push({
      name: `${name}.${op}`,
      test: (c) => {
        const s = readScalar(c, key);
        if (s === undefined || s === NOT_EVALUABLE) return s === undefined ? false : s;
        return set.has(s) === want;
      },
    });
  }
  if (cond.gt !== undefined || cond.gte !== undefined || cond.lt !== undefined || cond.lte !== undefined) {
    const cmp: NumCompare = {};
    if (cond.gt !== undefined) cmp.gt = cond.gt;
    if (cond.gte !== undefined) cmp.gte = cond.gte;
    if (cond.lt !== undefined) cmp.lt = cond.lt;
    if (cond.lte !== undefined) cmp.lte = cond.lte;
    out.push({
      name: `${name}.compare`,
      test: (c) => {
        const v = paramValue(c.params, key);
        if (v === undefined) return false;
        // Only a finite JSON number compares: never a numeric string, array, boolean or null.
        return typeof v === "number" && Number.isFinite(v) ? compare(cmp, v) : NOT_EVALUABLE;
      },
    });
  }
  if (cond.pattern !== undefined) {
    const re = compileSafeRegex(cond.pattern, `${where}.pattern`);
    out.push({
      name: `${name}.pattern`,
      test: (c) => {
        const s = readScalar(c, key);
        if (s === undefined || s === NOT_EVALUABLE) return s === undefined ? false : s;
        if (s.length > cap) return undefined;
        return re.test(s);
      },
    });
  }
  return out;
}
