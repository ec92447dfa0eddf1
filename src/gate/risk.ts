// The ORM risk score of one action (DARE `orm_risk_score`, in [0, 1]): computed by the Gate
// from five factors, each in [0, 1], combined as a noisy-OR
//
//     risk = 1 − Π (1 − wᵢ · fᵢ)
//
// so that every factor can only raise it (monotone), no single factor below weight 1 can
// reach 1 alone, and an absent factor (no trust engine, no original request) contributes
// nothing. Rounded to thousandths so a replay gives the same number. docs/policy.md#risk-score.

import type { TaintLabel, TaintSource } from "../contracts/index.js";
import { DEFAULT_CLASSIFICATION_LEVELS } from "../policy/index.js";

export interface RiskFactors {
  /** The contract's risk tier; undefined for a call without a contract (counts as medium). */
  riskTier?: string | undefined;
  /** Effective taint of the inputs. */
  taint: readonly TaintLabel[];
  /** The principal's APAE trust score in [0, 1], when a trust engine is configured. */
  trustScore?: number | undefined;
  /** Per-action semantic drift in [0, 1], when drift is scored. */
  drift?: number | undefined;
  /** The highest data classification the run has seen. */
  classification?: string | undefined;
}

export const RISK_WEIGHTS = { tier: 0.5, taint: 0.4, trust: 0.4, drift: 0.5, classification: 0.3 } as const;

/** The tier factor: an unknown tier counts as critical (fail closed), no contract as medium. */
export const TIER_FACTOR: Readonly<Record<string, number>> = {
  low: 0.1,
  medium: 0.4,
  high: 0.7,
  critical: 1,
};

/** How far each taint source is from the user's own word (the highest present counts). */
export const TAINT_FACTOR: Readonly<Record<TaintSource, number>> = {
  "user-provided": 0.2,
  "model-generated": 0.4,
  "tool-output": 0.5,
  rag: 0.6,
  "retrieved-doc": 0.6,
  mcp: 0.7,
  web: 1,
  email: 1,
  instructions: 1,
};

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : Number.isNaN(x) ? 1 : x);

/** Each factor in [0, 1], as the score combines them (absent ones are 0). */
export function riskFactorValues(f: RiskFactors): Record<keyof typeof RISK_WEIGHTS, number> {
  let taint = 0;
  for (const t of f.taint) taint = Math.max(taint, TAINT_FACTOR[t.source] ?? 1);
  let classification = 0;
  if (f.classification !== undefined) {
    const levels = DEFAULT_CLASSIFICATION_LEVELS as readonly string[];
    const i = levels.indexOf(f.classification);
    // A label outside the levels counts as the highest (OATS §7.3).
    classification = i === -1 ? 1 : i / (levels.length - 1);
  }
  return {
    tier: f.riskTier === undefined ? (TIER_FACTOR.medium as number) : (TIER_FACTOR[f.riskTier] ?? 1),
    taint,
    trust: f.trustScore === undefined ? 0 : clamp01(1 - f.trustScore),
    drift: f.drift === undefined ? 0 : clamp01(f.drift),
    classification,
  };
}

/** The risk score in [0, 1], rounded to thousandths. */
export function riskScore(f: RiskFactors): number {
  const v = riskFactorValues(f);
  let keep = 1;
  for (const k of Object.keys(RISK_WEIGHTS) as (keyof typeof RISK_WEIGHTS)[])
    keep *= 1 - RISK_WEIGHTS[k] * v[k];
  return Math.round((1 - keep) * 1000) / 1000;
}
