// The YAML rule engine: rules are compiled once at load into small predicate lists
// (precompiled, safety-checked RegExps; Sets for in/notIn), sorted by priority with the
// layer and file order as tie-breakers, and indexed by tool class so a call only walks
// the rules that can apply to it. First match wins (Ari Kernel §7).
import { type Decision, PolicyError } from "../contracts/index.js";
import { DEFAULT_DEFER_TIMEOUT_MS, DEFAULT_STEP_UP } from "./combine.js";
import { type EvalContext, paramValue } from "./eval-context.js";
import { compileSafeRegex, MAX_PATTERN_INPUT_LENGTH } from "./regex-safety.js";
import type { RuleOutcome } from "./types.js";
import type { NumCompare, ParamCondition, PolicyFile, PolicyMatch, PolicyRule } from "./yaml-schema.js";

/** Policy layers and their priority ranges (Ari Kernel §7); 999 is the built-in deny-all. */
export const LAYERS = {
  project: { min: 0, max: 899 },
  override: { min: 900, max: 998 },
} as const;
export type Layer = keyof typeof LAYERS;

/** true / false, or undefined when a pattern could not be run (value over the length cap). */
type Tri = boolean | undefined;

interface Condition {
  /** What the condition checks, for `explain` (e.g. `parameters.url.pattern`). */
  name: string;
  test(ctx: EvalContext): Tri;
}

export interface CompiledRule {
  id: string;
  name: string;
  layer: Layer;
  source: string;
  priority: number;
  decision: Decision;
  reason: string;
  tags: readonly string[];
  conditions: readonly Condition[];
  toolClasses: ReadonlySet<string> | undefined;
  /** Whether an undetermined pattern (over-long value) counts as a match: fail toward the safer side. */
  unknownMatches: boolean;
  outcome: RuleOutcome;
}

export interface YamlSource {
  name: string;
  layer: Layer;
  file: PolicyFile;
}

export interface YamlEngineOptions {
  maxPatternInputLength?: number;
  classificationLevels: readonly string[];
}

export interface RuleTrace {
  id: string;
  source: string;
  layer: Layer;
  priority: number;
  decision: Decision;
  matched: boolean;
  /** The first condition that failed (or could not be determined). */
  failed?: string;
  undetermined?: boolean;
}

export class YamlEngine {
  readonly rules: readonly CompiledRule[];
  private readonly byClass = new Map<string, CompiledRule[]>();
  private readonly anyClass: CompiledRule[];

  constructor(sources: readonly YamlSource[], options: YamlEngineOptions) {
    const seen = new Map<string, string>();
    const compiled: CompiledRule[] = [];
    let order = 0;
    const ordered: (CompiledRule & { order: number; layerRank: number })[] = [];
    for (const src of sources) {
      for (const [i, rule] of src.file.rules.entries()) {
        const where = `${src.name}: rules[${i}] (${rule.id})`;
        const prev = seen.get(rule.id);
        if (prev !== undefined) {
          throw new PolicyError("ERR_POLICY_DUPLICATE_RULE", `${where}: rule id already defined in ${prev}`, {
            details: { ruleId: rule.id },
          });
        }
        seen.set(rule.id, src.name);
        const range = LAYERS[src.layer];
        if (rule.priority < range.min || rule.priority > range.max) {
          throw new PolicyError(
            "ERR_POLICY_PRIORITY_LAYER",
            `${where}: priority ${rule.priority} outside the ${src.layer} layer's ${range.min}-${range.max}`,
            { details: { ruleId: rule.id, priority: rule.priority, layer: src.layer } },
          );
        }
        const c = compileRule(rule, src, where, options);
        ordered.push({ ...c, order: order++, layerRank: src.layer === "project" ? 0 : 1 });
      }
    }
    ordered.sort((a, b) => a.priority - b.priority || a.layerRank - b.layerRank || a.order - b.order);
    for (const r of ordered) {
      const { order: _o, layerRank: _l, ...rule } = r;
      compiled.push(rule);
    }
    this.rules = compiled;
    this.anyClass = compiled.filter((r) => r.toolClasses === undefined);
    const classes = new Set<string>();
    for (const r of compiled) for (const c of r.toolClasses ?? []) classes.add(c);
    for (const c of classes) {
      this.byClass.set(
        c,
        compiled.filter((r) => r.toolClasses === undefined || r.toolClasses.has(c)),
      );
    }
  }

  /** First matching rule's outcome, or undefined when no rule matches (the source abstains). */
  evaluate(ctx: EvalContext): RuleOutcome | undefined {
    const rules = this.byClass.get(ctx.toolClass) ?? this.anyClass;
    for (const rule of rules) {
      if (matches(rule, ctx)) return rule.outcome;
    }
    return undefined;
  }

  /** Every rule in evaluation order with whether it matched and, if not, why; stops at the first match. */
  explain(ctx: EvalContext): RuleTrace[] {
    const out: RuleTrace[] = [];
    for (const rule of this.rules) {
      const base = {
        id: rule.id,
        source: rule.source,
        layer: rule.layer,
        priority: rule.priority,
        decision: rule.decision,
      };
      let failed: string | undefined;
      let undetermined: string | undefined;
      if (rule.toolClasses !== undefined && !rule.toolClasses.has(ctx.toolClass)) failed = "toolClass";
      for (const cond of rule.conditions) {
        if (failed !== undefined) break;
        const r = cond.test(ctx);
        if (r === false) failed = cond.name;
        else if (r === undefined) undetermined ??= cond.name;
      }
      if (failed === undefined && undetermined !== undefined && !rule.unknownMatches) failed = undetermined;
      if (failed !== undefined) {
        out.push({
          ...base,
          matched: false,
          failed,
          ...(undetermined === failed ? { undetermined: true } : {}),
        });
        continue;
      }
      out.push({ ...base, matched: true, ...(undetermined !== undefined ? { undetermined: true } : {}) });
      break;
    }
    return out;
  }
}

function matches(rule: CompiledRule, ctx: EvalContext): boolean {
  let unknown = false;
  for (const cond of rule.conditions) {
    const r = cond.test(ctx);
    if (r === false) return false;
    if (r === undefined) unknown = true;
  }
  return !unknown || rule.unknownMatches;
}

function toDecision(d: PolicyRule["decision"]): Decision {
  return d === "require-approval" ? "step_up" : d;
}

function compileRule(
  rule: PolicyRule,
  src: YamlSource,
  where: string,
  options: YamlEngineOptions,
): CompiledRule {
  const decision = toDecision(rule.decision);
  const conditions = compileMatch(rule.match, where, options);
  const outcome: RuleOutcome = {
    rule: { id: rule.id, source: "yaml", decision, reason: rule.reason },
    reasonCode: rule.reasonCode ?? `RULE:${rule.id}`,
  };
  if (rule.obligations !== undefined) {
    outcome.obligations = rule.obligations.map((o) =>
      o.params === undefined
        ? { type: o.type }
        : { type: o.type, params: o.params as Record<string, unknown> },
    );
  }
  if (decision === "step_up") {
    outcome.stepUp = {
      approverRole: rule.stepUp?.approverRole ?? DEFAULT_STEP_UP.approverRole,
      timeoutMs: rule.stepUp?.timeout ?? DEFAULT_STEP_UP.timeoutMs,
    };
  }
  if (decision === "defer") outcome.defer = { timeoutMs: rule.defer?.timeout ?? DEFAULT_DEFER_TIMEOUT_MS };
  if (rule.modify !== undefined) {
    const m: NonNullable<RuleOutcome["modify"]> = {};
    if (rule.modify.set !== undefined) m.set = rule.modify.set;
    if (rule.modify.redact !== undefined) m.redact = rule.modify.redact;
    if (rule.modify.clamp !== undefined) {
      m.clamp = Object.fromEntries(
        Object.entries(rule.modify.clamp).map(([k, v]) => [
          k,
          {
            ...(v.min !== undefined ? { min: v.min } : {}),
            ...(v.max !== undefined ? { max: v.max } : {}),
            ...(v.maxLength !== undefined ? { maxLength: v.maxLength } : {}),
          },
        ]),
      );
    }
    outcome.modify = m;
  }
  const toolClasses = rule.match.toolClass === undefined ? undefined : new Set(list(rule.match.toolClass));
  return {
    id: rule.id,
    name: rule.name,
    layer: src.layer,
    source: src.name,
    priority: rule.priority,
    decision,
    reason: rule.reason,
    tags: rule.tags ?? [],
    conditions,
    toolClasses,
    unknownMatches: decision === "deny" || decision === "step_up" || decision === "defer",
    outcome,
  };
}

function list<T>(v: T | T[]): T[] {
  return Array.isArray(v) ? v : [v];
}

function oneOf(
  name: string,
  values: string | string[],
  get: (ctx: EvalContext) => string | undefined,
): Condition {
  const arr = list(values);
  if (arr.length === 1) {
    const only = arr[0];
    return { name, test: (ctx) => get(ctx) === only };
  }
  const set = new Set(arr);
  return {
    name,
    test: (ctx) => {
      const v = get(ctx);
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

function compileMatch(m: PolicyMatch, where: string, options: YamlEngineOptions): Condition[] {
  const out: Condition[] = [];
  // toolClass is enforced by the index (and by explain); the cheapest checks go first.
  if (m.action !== undefined) out.push(oneOf("action", m.action, (c) => c.action));
  if (m.tool !== undefined) out.push(oneOf("tool", m.tool, (c) => c.tool));
  if (m.principalId !== undefined) out.push(oneOf("principalId", m.principalId, (c) => c.principalId));
  if (m.roles !== undefined) {
    const roles = list(m.roles);
    out.push({ name: "roles", test: (c) => roles.some((r) => c.roles.has(r)) });
  }
  if (m.riskTier !== undefined) out.push(oneOf("riskTier", m.riskTier, (c) => c.riskTier));
  if (m.category !== undefined) out.push(oneOf("category", m.category, (c) => c.category));
  if (m.humanApproval !== undefined) {
    const want = m.humanApproval;
    out.push({ name: "humanApproval", test: (c) => c.humanApproval === want });
  }
  if (m.quarantined !== undefined) {
    const want = m.quarantined;
    out.push({ name: "quarantined", test: (c) => c.quarantined === want });
  }
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
  if (m.counters !== undefined) {
    for (const [k, cmp] of Object.entries(m.counters)) {
      if (cmp === undefined) continue;
      const key = k as keyof EvalContext["counters"];
      out.push({ name: `counters.${k}`, test: (c) => compare(cmp, c.counters[key]) });
    }
  }
  if (m.perToolCalls !== undefined) {
    for (const [k, cmp] of Object.entries(m.perToolCalls)) {
      out.push({
        name: `perToolCalls.${k}`,
        test: (c) => compare(cmp, Object.hasOwn(c.perToolCalls, k) ? (c.perToolCalls[k] ?? 0) : 0),
      });
    }
  }
  if (m.trustScoreBelow !== undefined) {
    const t = m.trustScoreBelow;
    // Fail closed: with no score configured, "below" holds (a restriction applies).
    out.push({ name: "trustScoreBelow", test: (c) => c.trustScore === undefined || c.trustScore < t });
  }
  if (m.trustScoreAtLeast !== undefined) {
    const t = m.trustScoreAtLeast;
    out.push({ name: "trustScoreAtLeast", test: (c) => c.trustScore !== undefined && c.trustScore >= t });
  }
  for (const [key, cond] of Object.entries(m.parameters ?? {})) {
    out.push(...compileParam(key, cond, `${where}: match.parameters.${key}`, options));
  }
  return out;
}

/** Ari reads parameter values as strings: strings as-is, numbers and booleans stringified, others never match. */
function scalarString(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

function numeric(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string" && /^-?\d{1,15}(\.\d{1,15})?$/.test(v)) return Number(v);
  return undefined;
}

function compileParam(
  key: string,
  cond: ParamCondition,
  where: string,
  options: YamlEngineOptions,
): Condition[] {
  const out: Condition[] = [];
  const name = `parameters.${key}`;
  const cap = options.maxPatternInputLength ?? MAX_PATTERN_INPUT_LENGTH;
  if (cond.exists !== undefined) {
    const want = cond.exists;
    out.push({ name: `${name}.exists`, test: (c) => (paramValue(c.params, key) !== undefined) === want });
  }
  if (cond.in !== undefined) {
    const set = new Set(cond.in.map(String));
    out.push({
      name: `${name}.in`,
      test: (c) => {
        const s = scalarString(paramValue(c.params, key));
        return s !== undefined && set.has(s);
      },
    });
  }
  if (cond.notIn !== undefined) {
    const set = new Set(cond.notIn.map(String));
    out.push({
      name: `${name}.notIn`,
      test: (c) => {
        const s = scalarString(paramValue(c.params, key));
        return s !== undefined && !set.has(s);
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
        const n = numeric(paramValue(c.params, key));
        return n !== undefined && compare(cmp, n);
      },
    });
  }
  if (cond.pattern !== undefined) {
    const re = compileSafeRegex(cond.pattern, `${where}.pattern`);
    out.push({
      name: `${name}.pattern`,
      test: (c) => {
        const s = scalarString(paramValue(c.params, key));
        if (s === undefined) return false;
        if (s.length > cap) return undefined;
        return re.test(s);
      },
    });
  }
  return out;
}
