// The YAML rule engine: rules are compiled once at load into small predicate lists
// (precompiled, safety-checked RegExps; Sets for in/notIn; yaml-match.ts), sorted by
// priority with the layer and file order as tie-breakers, and indexed by tool, action
// and tool class (rule-index.ts) so a call only walks the rules that can apply to it.
// First match wins (Ari Kernel §7). A rule whose conditions hold except one that cannot
// be evaluated on the value given (a comparison on a non-number, ...) stops the walk
// with a deny (reason code RULE_NOT_EVALUABLE), whatever the rule's own decision.
import { type Decision, PolicyError } from "../contracts/index.js";
import { isThreshold, TRUST_THRESHOLD_REASON } from "./apae-match.js";
import { DEFAULT_DEFER_TIMEOUT_MS, DEFAULT_STEP_UP } from "./combine.js";
import type { EvalContext } from "./eval-context.js";
import { type IndexKey, RuleIndex } from "./rule-index.js";
import type { RuleOutcome } from "./types.js";
import { type Condition, compileMatch, list, NOT_EVALUABLE } from "./yaml-match.js";
import type { PolicyFile, PolicyRule } from "./yaml-schema.js";

/** Policy layers and their priority ranges (Ari Kernel §7); 999 is the built-in deny-all. */
export const LAYERS = {
  project: { min: 0, max: 899 },
  override: { min: 900, max: 998 },
} as const;
export type Layer = keyof typeof LAYERS;

/** The reason code of a deny caused by a rule (or a modify payload) that cannot be evaluated. */
export const NOT_EVALUABLE_REASON = "RULE_NOT_EVALUABLE";

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
  /** The deny this rule yields when a condition cannot be evaluated. */
  notEvaluable: RuleOutcome;
  /** Where the index files the rule. */
  indexKey: IndexKey;
}

export interface YamlSource {
  name: string;
  layer: Layer;
  file: PolicyFile;
}

export interface YamlEngineOptions {
  maxPatternInputLength?: number;
  classificationLevels: readonly string[];
  /** false walks every rule in order (the reference the index is tested against); default true. */
  indexed?: boolean;
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
  /** The condition that could not be evaluated on the value given; the walk stopped here with a deny. */
  notEvaluable?: string;
}

const MISS = 0;
const MATCH = 1;
const UNEVALUABLE = 2;
type Verdict = typeof MISS | typeof MATCH | typeof UNEVALUABLE;

export class YamlEngine {
  readonly rules: readonly CompiledRule[];
  private readonly index: RuleIndex<CompiledRule> | undefined;

  constructor(sources: readonly YamlSource[], options: YamlEngineOptions) {
    const seen = new Map<string, string>();
    let order = 0;
    const ordered: { rule: CompiledRule; order: number; layerRank: number }[] = [];
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
        ordered.push({ rule: c, order: order++, layerRank: src.layer === "project" ? 0 : 1 });
      }
    }
    ordered.sort(
      (a, b) => a.rule.priority - b.rule.priority || a.layerRank - b.layerRank || a.order - b.order,
    );
    // The compiled objects themselves (not rest-spread copies, which V8 may leave in slow
    // dictionary mode: that made every rule visit ~20× slower).
    this.rules = ordered.map((o) => o.rule);
    this.index = options.indexed === false ? undefined : new RuleIndex(this.rules, (r) => r.indexKey);
  }

  /** First matching rule's outcome, or undefined when no rule matches (the source abstains). */
  evaluate(ctx: EvalContext): RuleOutcome | undefined {
    const rules =
      this.index === undefined ? this.rules : this.index.candidates(ctx.toolClass, ctx.action, ctx.tool);
    for (const rule of rules) {
      const v = verdict(rule, ctx);
      if (v === MATCH) return rule.outcome;
      if (v === UNEVALUABLE) return rule.notEvaluable;
    }
    return undefined;
  }

  /** Every rule in evaluation order with whether it matched and, if not, why; stops at the first match. */
  explain(ctx: EvalContext): RuleTrace[] {
    const out: RuleTrace[] = [];
    for (const rule of this.rules) {
      const trace = traceRule(rule, ctx);
      out.push(trace);
      if (trace.matched) break;
    }
    return out;
  }
}

function verdict(rule: CompiledRule, ctx: EvalContext): Verdict {
  let unknown = false;
  let unevaluable = false;
  for (const cond of rule.conditions) {
    const r = cond.test(ctx);
    if (r === false) return MISS;
    if (r === undefined) unknown = true;
    else if (r === NOT_EVALUABLE) unevaluable = true;
  }
  if (unevaluable) return UNEVALUABLE;
  return !unknown || rule.unknownMatches ? MATCH : MISS;
}

/** The same judgement as `verdict`, naming the condition that decided it. */
function traceRule(rule: CompiledRule, ctx: EvalContext): RuleTrace {
  const base = {
    id: rule.id,
    source: rule.source,
    layer: rule.layer,
    priority: rule.priority,
    decision: rule.decision,
  };
  let undetermined: string | undefined;
  let notEvaluable: string | undefined;
  for (const cond of rule.conditions) {
    const r = cond.test(ctx);
    if (r === false) return { ...base, matched: false, failed: cond.name };
    if (r === undefined) undetermined ??= cond.name;
    else if (r === NOT_EVALUABLE) notEvaluable ??= cond.name;
  }
  if (notEvaluable !== undefined) return { ...base, matched: true, notEvaluable };
  if (undetermined !== undefined && !rule.unknownMatches) {
    return { ...base, matched: false, failed: undetermined, undetermined: true };
  }
  return { ...base, matched: true, ...(undetermined !== undefined ? { undetermined: true } : {}) };
}

const MAX_INDEX_PAIRS = 256;

function indexKeyOf(m: PolicyRule["match"]): IndexKey {
  if (m.tool !== undefined) return { dim: "tool", names: list(m.tool) };
  if (m.action !== undefined && m.toolClass !== undefined) {
    const classes = list(m.toolClass);
    const actions = list(m.action);
    // Pairs are the tightest bucket; a huge cross product is filed by action instead.
    if (classes.length * actions.length <= MAX_INDEX_PAIRS) return { dim: "classAction", classes, actions };
  }
  if (m.action !== undefined) return { dim: "action", names: list(m.action) };
  if (m.toolClass !== undefined) return { dim: "toolClass", names: list(m.toolClass) };
  return undefined;
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
    reasonCode:
      rule.reasonCode ??
      (decision === "deny" && isThreshold(rule.match.apae) ? TRUST_THRESHOLD_REASON : `RULE:${rule.id}`),
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
    notEvaluable: {
      rule: {
        id: rule.id,
        source: "yaml",
        decision: "deny",
        reason: "the rule cannot be evaluated: a parameter it reads has a type its condition cannot read",
      },
      reasonCode: NOT_EVALUABLE_REASON,
    },
    indexKey: indexKeyOf(rule.match),
  };
}
