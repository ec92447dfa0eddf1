// Admission's last step: a capability token presented with the call (`capability` in the
// GateRequest) is checked before the session context and policy. The Gate only names the
// port; src/identity's CapabilityService implements it (the runtime wires it). A refused
// token makes the call's one admission reason its code (ERR_CAPABILITY_*), so judgement
// denies it and the refusal is journaled like any other; a valid one becomes a policy fact
// (`capability: { id, tool, usesLeft }`) that YAML rules can require.
import type { Admission } from "./admission.js";
import type { GateDeps } from "./options.js";

/** What policy sees of a valid capability. */
export interface CapabilityFact {
  id: string;
  tool: string;
  usesLeft: number;
}

/** A capability's check against one call: the fact, or a coded refusal. */
export type CapabilityVerdict = { ok: true; capability: CapabilityFact } | { ok: false; code: string };

export interface CapabilityChecker {
  check(call: {
    token: string;
    runId: string;
    principalId: string;
    toolClass: string;
    action: string;
    tool?: string | undefined;
    parameters: Readonly<Record<string, unknown>>;
    now: number;
  }): CapabilityVerdict | Promise<CapabilityVerdict>;
}

/** True when the admission carries a token still to be checked (the Gate awaits only then). */
export function presentsCapability(a: Admission): boolean {
  return a.refused === undefined && a.request.capability !== undefined;
}

/** Checks the presented token; records the fact or the refusal on the admission. Never throws. */
export async function admitCapability(deps: GateDeps, a: Admission): Promise<void> {
  const token = a.request.capability;
  if (token === undefined || a.refused !== undefined) return;
  const checker = deps.o.capabilities;
  // Fail closed: a token nothing can verify is not ignored (the call may rely on it).
  if (checker === undefined) {
    a.refused = "ERR_CAPABILITY_INVALID";
    return;
  }
  try {
    const v = await checker.check({
      token,
      runId: a.request.runId,
      principalId: a.request.principalId,
      toolClass: a.checked.toolClass,
      action: a.checked.action,
      tool: a.checked.tool,
      parameters: a.checked.parameters,
      now: a.now,
    });
    if (v.ok) a.capability = v.capability;
    else
      a.refused = v.code.startsWith("ERR_CAPABILITY_")
        ? (v.code as `ERR_CAPABILITY_${string}`)
        : "ERR_CAPABILITY_INVALID";
  } catch {
    a.refused = "ERR_CAPABILITY_INVALID";
  }
}
