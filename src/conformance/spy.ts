// A recording wrapper around the deployment's own policy engine: scenarios that must see what
// the policy is given (OATS C4 context, C6 structured input only) compose the runtime with it.
// It decides nothing itself: every call goes to the deployment's policy unchanged.
import type { GatePolicy } from "../gate/index.js";
import { loadPolicyBundle, type PolicyInput } from "../policy/index.js";
import type { RuntimeDeps } from "../runtime/index.js";
import type { LibraryTarget } from "./types.js";

export interface PolicySpy {
  readonly inputs: PolicyInput[];
  readonly deps: RuntimeDeps;
}

export function spyDeps(t: LibraryTarget): PolicySpy {
  const c = t.config.policy;
  const inner: GatePolicy = Array.isArray(c) ? loadPolicyBundle(c as readonly string[]) : (c as GatePolicy);
  const inputs: PolicyInput[] = [];
  const policy: GatePolicy = {
    evaluate(input) {
      inputs.push(structuredClone(input));
      return inner.evaluate(input);
    },
    policyBundleHash: inner.policyBundleHash,
    ...(inner.summary !== undefined ? { summary: inner.summary } : {}),
  };
  return { inputs, deps: { policy } };
}
