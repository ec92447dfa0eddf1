// Stage 2, judgement: the session context (taint, provenance, budgets, rate limits,
// quarantine, behavioural rules), the trust score and the policy turn an admission into
// a verdict. A policy rewrite is checked against the contract again, and a contract that
// demands human approval gets it whatever the policy allowed. Every failure is a denial.

import type { Prepared, ReserveResult, Session } from "../context/index.js";
import type { Sha256Hash } from "../contracts/index.js";
import type { PolicyInput, PolicyOutcome } from "../policy/index.js";
import { validateArgs } from "../tools/index.js";
import type { Admission } from "./admission.js";
import { applyDrift, type DriftResult, type DriftScore } from "./drift.js";
import { flowFacts } from "./flow.js";
import { APPROVAL_DEFAULT_MS, type GateDeps } from "./options.js";
import type { GateFault } from "./outcome.js";
import { contractViolation } from "./reasons.js";
import { riskScore } from "./risk.js";

/** The verdict on an admission, with the session it was judged in (absent when refused before it). */
export interface Judgement {
  outcome: PolicyOutcome;
  fault?: GateFault;
  session?: Session;
  prepared?: Prepared;
  /** The ORM risk score (src/gate/risk.ts); absent when refused before the session. */
  riskScore?: number;
  drift?: DriftScore;
}

export function judge(deps: GateDeps, a: Admission, drift: DriftResult = NOT_SCORED): Judgement {
  const bundleHash = deps.o.policy.policyBundleHash;
  if (a.refused !== undefined) return { outcome: denyOutcome([a.refused], bundleHash) };
  // Fail closed: a drift that could not be scored is not a small drift.
  if (drift.kind === "failed") return { outcome: denyOutcome(["drift_unavailable"], bundleHash) };
  let session: Session;
  let prepared: Prepared;
  try {
    session =
      a.session ??
      deps.sessions.open(
        {
          runId: a.checked.runId,
          principalId: a.checked.principalId,
          ...(a.checked.originalRequest !== undefined ? { originalRequest: a.checked.originalRequest } : {}),
        },
        a.now,
      );
    prepared = session.prepare(a.checked, {
      now: a.now,
      ...(a.policyTool?.category !== undefined ? { tool: { category: a.policyTool.category } } : {}),
      ...(a.principal?.maxCallsPerMinute !== undefined
        ? { maxCallsPerMinute: a.principal.maxCallsPerMinute }
        : {}),
      ...(a.valuesIn !== undefined ? { valuesIn: a.valuesIn } : {}),
    });
  } catch {
    return { outcome: denyOutcome(["session_unavailable"], bundleHash) };
  }
  if (prepared.preDecision) {
    return {
      outcome: denyOutcome(prepared.preDecision.reasonCodes, bundleHash, "context"),
      session,
      prepared,
    };
  }
  // The budget unit and the rate slot are taken here, synchronously, before the first
  // await (the journal write): concurrent calls cannot all pass a check made earlier.
  // recordDecision / recordResolution commit or release what is taken.
  let held: ReserveResult;
  try {
    held = session.reserve(prepared);
  } catch {
    return { outcome: denyOutcome(["session_unavailable"], bundleHash), session, prepared };
  }
  if (!held.ok) {
    return { outcome: denyOutcome([...held.reasonCodes], bundleHash, "context"), session, prepared };
  }
  const input = policyInput(deps, a, prepared);
  input.flow = flowFacts(session, prepared, a.targets);
  const score = drift.kind === "scored" ? drift.score : undefined;
  input.riskScore = riskScore({
    riskTier: a.policyTool?.riskTier,
    taint: prepared.effectiveTaint,
    trustScore: input.trustScore,
    drift: score?.action,
    classification: prepared.facts.highestClassification,
  });
  if (score !== undefined) input.drift = { action: score.action, cumulative: score.cumulative };
  const scored = { session, prepared, riskScore: input.riskScore, ...(score ? { drift: score } : {}) };
  let outcome: PolicyOutcome;
  try {
    outcome = deps.o.policy.evaluate(input);
  } catch {
    const failed = denyOutcome(["policy_error"], bundleHash);
    deps.o.shadow?.offer(a, input, failed);
    return { outcome: failed, fault: "policy_error", ...scored };
  }
  // A shadow bundle judges the same input later, off this path (shadow.ts).
  deps.o.shadow?.offer(a, input, outcome);
  const verdict = score !== undefined ? deps.o.drift?.verdict(score, a.policyTool?.riskTier) : undefined;
  if (verdict !== undefined) outcome = applyDrift(outcome, verdict, APPROVAL_DEFAULT_MS);
  return { outcome: contractChecks(deps, a, outcome), ...scored };
}

const NOT_SCORED: DriftResult = { kind: "none" };

function policyInput(deps: GateDeps, a: Admission, prepared: Prepared): PolicyInput {
  const principal = a.principal!;
  // The model's free text (rationale) is hashed into the record, never handed to a policy
  // backend (OATS C6: the Gate decides on structured input only; `warden conformance` C6).
  const { rationale: _modelText, ...request } = a.checked;
  const input: PolicyInput = {
    request,
    principal: {
      id: principal.id,
      roles: [...principal.roles],
      ...(principal.capabilities ? { capabilities: principal.capabilities } : {}),
    },
    taint: prepared.effectiveTaint,
    session: prepared.facts,
    ...(a.policyTool ? { tool: a.policyTool } : {}),
    ...(a.capability ? { capability: a.capability } : {}),
  };
  const trust = deps.o.trustScore?.(a.principalId, a.runId);
  if (trust !== undefined) input.trustScore = trust;
  return input;
}

/** What the contract adds to the policy's verdict: its rewrite must validate, its human_approval holds. */
function contractChecks(deps: GateDeps, a: Admission, policy: PolicyOutcome): PolicyOutcome {
  let outcome = policy;
  // A policy rewrite is input to the contract like any other: a rewrite the contract
  // cannot express (a redaction marker in an integer, a `set` path outside the
  // pattern) is denied, never executed.
  if (a.tool && outcome.modify && outcome.decision !== "deny") {
    const v = validateArgs(a.tool, outcome.modify.parameters, deps.o.validateOptions ?? {});
    if (!v.ok)
      return denyOutcome([contractViolation("contract_modify_invalid", v)], deps.o.policy.policyBundleHash);
    outcome = { ...outcome, modify: { ...outcome.modify, parameters: { ...v.args } } };
  }
  // A contract that demands human approval gets it, whatever the policy allowed.
  if (a.policyTool?.humanApproval && (outcome.decision === "allow" || outcome.decision === "modify")) {
    outcome = {
      ...outcome,
      decision: "step_up",
      reasonCodes: [...outcome.reasonCodes, "contract_requires_approval"],
      stepUp: outcome.stepUp ?? { approverRole: "approver", timeoutMs: APPROVAL_DEFAULT_MS },
    };
  }
  return outcome;
}

/** A denial decided before policy: by the Gate's own checks or by the session context. */
export function denyOutcome(
  reasonCodes: string[],
  policyBundleHash: Sha256Hash,
  by: "gate" | "context" = "gate",
): PolicyOutcome {
  return {
    decision: "deny",
    reasonCodes,
    matchedRules: [{ id: by, source: "builtin", decision: "deny", reason: reasonCodes.join(", ") }],
    obligations: [],
    policyBundleHash,
  };
}
