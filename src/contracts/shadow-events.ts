// The bodies of the journal entries a shadow policy bundle produces (docs/policy.md#shadow-policies):
// one `warden.policy.shadow_diff` per decision on which the shadow bundle disagrees with the
// enforcing one, one `warden.policy.shadow_dropped` when the bounded evaluation queue shed
// load, and one `warden.policy.shadow_promoted` when an operator made the shadow bundle the
// enforcing one. In the bottom layer so that any verifier checks them.
import { z } from "zod";
import { DECISIONS } from "./gate-request.js";
import { Sha256HashSchema } from "./records/common.js";

export const POLICY_SHADOW_DIFF = "warden.policy.shadow_diff";
export const POLICY_SHADOW_DROPPED = "warden.policy.shadow_dropped";
export const POLICY_SHADOW_PROMOTED = "warden.policy.shadow_promoted";

const Str = z.string().min(1).max(4096);

/** One bundle's verdict on a call: the decision, its reason codes and the rules that matched. */
export const ShadowVerdict = z.strictObject({
  decision: z.enum(DECISIONS),
  reason_codes: z.array(Str).max(64),
  rule_ids: z.array(Str).max(64),
  policy_bundle_hash: Sha256HashSchema,
});
export type ShadowVerdict = z.infer<typeof ShadowVerdict>;

/** A decision on which the shadow bundle would have decided otherwise. */
export const ShadowDiffBody = z.strictObject({
  decision_id: Str,
  principal_id: Str,
  tool_class: Str,
  action: Str,
  tool: Str.optional(),
  enforced: ShadowVerdict,
  shadow: ShadowVerdict,
});

/** Decisions the shadow bundle never saw because its bounded queue was full. */
export const ShadowDroppedBody = z.strictObject({
  dropped: z.number().int().min(1),
  policy_bundle_hash: Sha256HashSchema,
});

/** An operator made the shadow bundle the enforcing one, having seen the named diff report. */
export const ShadowPromotedBody = z.strictObject({
  by: Str,
  from_bundle_hash: Sha256HashSchema,
  to_bundle_hash: Sha256HashSchema,
  report_sha256: Sha256HashSchema,
  report_diffs: z.number().int().min(0),
  sources: z.array(Str).max(256),
});

export const SHADOW_EVENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  [POLICY_SHADOW_DIFF]: ShadowDiffBody,
  [POLICY_SHADOW_DROPPED]: ShadowDroppedBody,
  [POLICY_SHADOW_PROMOTED]: ShadowPromotedBody,
};
