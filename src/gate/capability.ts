// Admission's last steps, before the session context and policy: the run's delegated
// ceiling (a sub-agent's run may call only what its delegation chain grants) and a
// capability token presented with the call (`capability` in the GateRequest). The Gate
// only names the ports; src/identity implements them and the runtime wires them. A
// refusal becomes the call's one admission reason (ERR_DELEGATION_CEILING, or the token's
// ERR_CAPABILITY_* code), so judgement denies it and the refusal is journaled like any
// other; a valid token becomes a policy fact (`capability: { id, tool, usesLeft }`) that
// YAML rules can require. The Gate awaits here only when a ceiling or a token applies.
import type { Admission } from "./admission.js";
import type { GateDeps } from "./options.js";

/** What policy sees of a valid capability. */
export interface CapabilityFact {
  id: string;
  tool: string;
  usesLeft: number;
}

/** The call as the grant checks see it (typed parameters, after admission). */
export interface GrantedCall {
  runId: string;
  principalId: string;
  toolClass: string;
  action: string;
  tool?: string | undefined;
  parameters: Readonly<Record<string, unknown>>;
  now: number;
}

/** A capability's check against one call: the fact, or a coded refusal. */
export type CapabilityVerdict = { ok: true; capability: CapabilityFact } | { ok: false; code: string };

export interface CapabilityChecker {
  check(call: GrantedCall & { token: string }): CapabilityVerdict | Promise<CapabilityVerdict>;
}

export type CeilingVerdict = { ok: true } | { ok: false; code: "ERR_DELEGATION_CEILING" };

export interface RunCeilings {
  /** undefined: the run has no delegated ceiling. */
  check(call: GrantedCall): CeilingVerdict | Promise<CeilingVerdict> | undefined;
}

function callOf(a: Admission): GrantedCall {
  return {
    runId: a.request.runId,
    principalId: a.request.principalId,
    toolClass: a.checked.toolClass,
    action: a.checked.action,
    tool: a.checked.tool,
    parameters: a.checked.parameters,
    now: a.now,
  };
}

/**
 * Applies the ceiling and the token to an admission (recording the fact or the refusal on
 * it). Returns undefined when neither applies, so the common call does not await. Never rejects.
 */
export function admitGrants(deps: GateDeps, a: Admission): Promise<void> | undefined {
  if (a.refused !== undefined) return undefined;
  let ceiling: ReturnType<RunCeilings["check"]>;
  try {
    ceiling = deps.o.ceilings?.check(callOf(a));
  } catch {
    a.refused = "ERR_DELEGATION_CEILING";
    return undefined;
  }
  if (ceiling === undefined) return a.request.capability !== undefined ? admitCapability(deps, a) : undefined;
  return (async () => {
    try {
      if (!(await ceiling).ok) {
        a.refused = "ERR_DELEGATION_CEILING";
        return;
      }
    } catch {
      a.refused = "ERR_DELEGATION_CEILING";
      return;
    }
    await admitCapability(deps, a);
  })();
}

async function admitCapability(deps: GateDeps, a: Admission): Promise<void> {
  const token = a.request.capability;
  if (token === undefined) return;
  const checker = deps.o.capabilities;
  // Fail closed: a token nothing can verify is not ignored (the call may rely on it).
  if (checker === undefined) {
    a.refused = "ERR_CAPABILITY_INVALID";
    return;
  }
  try {
    const v = await checker.check({ ...callOf(a), token });
    if (v.ok) a.capability = v.capability;
    else
      a.refused = v.code.startsWith("ERR_CAPABILITY_")
        ? (v.code as `ERR_CAPABILITY_${string}`)
        : "ERR_CAPABILITY_INVALID";
  } catch {
    // The check itself failed (the use ledger's store did not answer): not an invalid token.
    a.refused = "ERR_CAPABILITY_UNAVAILABLE";
  }
}
