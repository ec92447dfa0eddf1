// Combining verdicts across policy sources (YAML, Cedar, built-in checks). The rule is
// fixed and total so no source can "negotiate" another: any deny wins; otherwise the
// strictest of step_up > defer > modify > allow; no allow anywhere means deny.
import { canonicalJson, type Decision } from "../contracts/index.js";
import type { MatchedRule, ModifySpec, Obligation, RuleOutcome, StepUp } from "./types.js";

/** Strictness order used by the combination; higher wins. */
export const STRICTNESS: Readonly<Record<Decision, number>> = {
  allow: 0,
  modify: 1,
  defer: 2,
  step_up: 3,
  deny: 4,
};

/** Used when a step_up / defer rule names no payload (Ari's `require-approval` never does). */
export const DEFAULT_STEP_UP: Readonly<StepUp> = { approverRole: "approver", timeoutMs: 300_000 };
export const DEFAULT_DEFER_TIMEOUT_MS = 300_000;

export const DEFAULT_DENY_RULE: MatchedRule = {
  id: "builtin.default-deny",
  source: "builtin",
  decision: "deny",
  reason: "No matching policy (deny-by-default)",
};

export interface CombinedOutcome {
  decision: Decision;
  /** Reason codes of the outcomes that determined the decision, in order, without repeats. */
  reasonCodes: string[];
  /** Every rule that matched, in evaluation order (the default-deny rule when none did). */
  matchedRules: MatchedRule[];
  /** Obligations of every matched rule, deduplicated. */
  obligations: Obligation[];
  /** Modify payloads to apply in order; kept under step_up/defer so the approved action runs rewritten. */
  modifySpecs: ModifySpec[];
  stepUp?: StepUp;
  defer?: { timeoutMs: number };
}

/** Pure: combines rule outcomes from every source into one decision. */
export function combineOutcomes(outcomes: readonly RuleOutcome[]): CombinedOutcome {
  if (outcomes.length === 0) {
    return {
      decision: "deny",
      reasonCodes: ["DEFAULT_DENY"],
      matchedRules: [DEFAULT_DENY_RULE],
      obligations: [],
      modifySpecs: [],
    };
  }
  let decision: Decision = "allow";
  for (const o of outcomes)
    if (STRICTNESS[o.rule.decision] > STRICTNESS[decision]) decision = o.rule.decision;

  const reasonCodes: string[] = [];
  const obligations: Obligation[] = [];
  const seenObligations = new Set<string>();
  const modifySpecs: ModifySpec[] = [];
  let stepUp: StepUp | undefined;
  let deferMs: number | undefined;
  for (const o of outcomes) {
    if (o.rule.decision === decision && !reasonCodes.includes(o.reasonCode)) reasonCodes.push(o.reasonCode);
    for (const ob of o.obligations ?? []) {
      const key = canonicalJson(ob);
      if (!seenObligations.has(key)) {
        seenObligations.add(key);
        obligations.push(ob);
      }
    }
    if (o.modify !== undefined) modifySpecs.push(o.modify);
    if (o.stepUp !== undefined) {
      stepUp =
        stepUp === undefined
          ? { ...o.stepUp }
          : { approverRole: stepUp.approverRole, timeoutMs: Math.min(stepUp.timeoutMs, o.stepUp.timeoutMs) };
    }
    if (o.defer !== undefined) deferMs = Math.min(deferMs ?? o.defer.timeoutMs, o.defer.timeoutMs);
  }
  const out: CombinedOutcome = {
    decision,
    reasonCodes,
    matchedRules: outcomes.map((o) => o.rule),
    obligations,
    modifySpecs: decision === "deny" ? [] : modifySpecs,
  };
  if (decision === "step_up") out.stepUp = stepUp ?? { ...DEFAULT_STEP_UP };
  if (decision === "defer") out.defer = { timeoutMs: deferMs ?? DEFAULT_DEFER_TIMEOUT_MS };
  return out;
}
