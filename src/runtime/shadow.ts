// A shadow policy bundle beside the enforcing one (docs/policy.md#shadow-policies): loaded
// like the enforcing bundle, its load journaled (`warden.policy.bundle_loaded`, `source:
// "shadow"`) so a report can say what it compared over, and handed to the Gate, which
// offers it every decision off the decision path.
import { type GatePolicy, ShadowPolicy } from "../gate/index.js";
import type { Journal } from "../journal/index.js";
import { loadPolicyBundle } from "../policy/index.js";

export interface RuntimeShadowConfig {
  /** Policy files of the shadow bundle (.yaml/.yml/.json rules, .cedar), or a bundle already built. */
  policy: readonly string[] | GatePolicy;
  /** Decisions kept waiting for the shadow evaluation (default 4096); beyond it they are dropped and journaled. */
  maxQueue?: number;
}

export async function openShadow(
  config: RuntimeShadowConfig | undefined,
  journal: Journal,
): Promise<ShadowPolicy | undefined> {
  if (config === undefined) return undefined;
  // A shadow bundle that does not load stops the start with the policy's own coded error.
  const policy: GatePolicy = Array.isArray(config.policy)
    ? loadPolicyBundle(config.policy as readonly string[])
    : (config.policy as GatePolicy);
  const sources = policy.summary?.sources.map((x) => ({ name: x.name, kind: x.kind, rules: x.rules }));
  await journal.appendBuilt({
    type: "warden.policy.bundle_loaded",
    body: { policy_bundle_hash: policy.policyBundleHash, source: "shadow", ...(sources ? { sources } : {}) },
  });
  return new ShadowPolicy(policy, journal, {
    ...(config.maxQueue !== undefined ? { maxQueue: config.maxQueue } : {}),
  });
}
