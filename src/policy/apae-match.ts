// APAE trust thresholds as policy (APAE §Trust Thresholds as Policy): the `apae` match
// attribute of a YAML rule. The facts it reads (the requester's score and confidence in
// the deployment's trust table, `apae.peer_trust_score`) are set by the runtime only when
// APAE is on; a rule without `apae` never reads them, so evaluation cost is unchanged.
//
//   match: { apae: { min_trust: 0.7, min_confidence: medium } }   # the requester fails a threshold
//   match: { apae: { peer_trust_score: { lt: 0.5 } } }            # a comparison on the score
//
// Fail closed: with no score (APAE off, or no facts), a threshold is not met and an
// `lt`/`lte` comparison holds, so a deny or step_up written this way still applies.
import { z } from "zod";
import type { EvalContext } from "./eval-context.js";
import type { Condition } from "./yaml-match.js";

/** Confidence levels in order (APAE: low < 10 interactions, medium 10–99, high ≥ 100). */
export const TRUST_CONFIDENCE_LEVELS = ["low", "medium", "high"] as const;
export type TrustConfidence = (typeof TRUST_CONFIDENCE_LEVELS)[number];

/** The reason code a deny rule with an `apae` threshold gets unless it names its own. */
export const TRUST_THRESHOLD_REASON = "APAE_TRUST_BELOW_THRESHOLD";

const Unit = z.number().min(0).max(1);

const ScoreCompare = z
  .strictObject({ lt: Unit.optional(), lte: Unit.optional(), gt: Unit.optional(), gte: Unit.optional() })
  .refine((o) => Object.keys(o).length > 0, "at least one of lt, lte, gt, gte");

export const ApaeMatch = z
  .strictObject({
    /** Matches when the requester's score is below this (or unknown). */
    min_trust: Unit.optional(),
    /** Matches when the requester's confidence is below this level (or unknown). */
    min_confidence: z.enum(TRUST_CONFIDENCE_LEVELS).optional(),
    /** A comparison on the requester's score (`apae.peer_trust_score`). */
    peer_trust_score: ScoreCompare.optional(),
  })
  .refine((o) => Object.keys(o).length > 0, "at least one of min_trust, min_confidence, peer_trust_score")
  .refine(
    (o) => o.peer_trust_score === undefined || (o.min_trust === undefined && o.min_confidence === undefined),
    "peer_trust_score cannot be combined with min_trust/min_confidence in one rule",
  );
export type ApaeMatch = z.infer<typeof ApaeMatch>;

/** True when `m` states a threshold (min_trust / min_confidence): a deny there is a 403 in the sidecar. */
export function isThreshold(m: ApaeMatch | undefined): boolean {
  return m !== undefined && (m.min_trust !== undefined || m.min_confidence !== undefined);
}

function rank(c: TrustConfidence | undefined): number {
  return c === undefined ? -1 : TRUST_CONFIDENCE_LEVELS.indexOf(c);
}

function belowThreshold(m: ApaeMatch, c: EvalContext): boolean {
  const score = c.trustScore;
  if (m.min_trust !== undefined && (score === undefined || score < m.min_trust)) return true;
  return m.min_confidence !== undefined && rank(c.trustConfidence) < rank(m.min_confidence);
}

function compareScore(cmp: z.infer<typeof ScoreCompare>, score: number | undefined): boolean {
  // Unknown counts as the lowest score: "below" holds, "above" does not.
  if (score === undefined) return cmp.gt === undefined && cmp.gte === undefined;
  if (cmp.lt !== undefined && !(score < cmp.lt)) return false;
  if (cmp.lte !== undefined && !(score <= cmp.lte)) return false;
  if (cmp.gt !== undefined && !(score > cmp.gt)) return false;
  return !(cmp.gte !== undefined && !(score >= cmp.gte));
}

/** The `apae` attribute as one condition. */
export function compileApae(m: ApaeMatch | undefined, out: Condition[]): void {
  if (m === undefined) return;
  const cmp = m.peer_trust_score;
  if (cmp !== undefined) {
    out.push({ name: "apae.peer_trust_score", test: (c) => compareScore(cmp, c.trustScore) });
    return;
  }
  out.push({ name: "apae.threshold", test: (c) => belowThreshold(m, c) });
}
