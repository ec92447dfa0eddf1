// What the sidecar shows of the Gate's values. Each view is built field by field from an
// allow-list, so a field added to a Gate type never reaches a client by accident — in
// particular the model's free text (rationale) and the user's original request never
// reach an approver: approvers judge the structured action (tool, parameters, contract,
// risk, policy reason); the rationale stays in the journal (as its hash) for auditors.
import type { ApprovalRequest, DeferredItem, GateOutcome } from "../../gate/index.js";
import { faultOf, termsOf } from "../../gate/index.js";
import { TRUST_THRESHOLD_REASON } from "../../policy/index.js";
import { ApiError } from "../errors.js";

export function denialMessage(o: GateOutcome): string {
  const reasons = o.matchedRules.map((r) => r.reason).filter((r): r is string => r !== undefined);
  return reasons.length > 0 ? reasons.join("; ") : o.reasonCodes.join(", ");
}

/** The decision as answered; `journalChain` names the chain of `journalSeqs` (per-replica chains). */
export function decisionView(o: GateOutcome, journalChain?: string): Record<string, unknown> {
  return {
    decisionId: o.decisionId,
    decision: o.decision,
    policyDecision: o.policyDecision,
    reasonCodes: o.reasonCodes,
    matchedRules: o.matchedRules.map((r) => ({
      id: r.id,
      source: r.source,
      decision: r.decision,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    })),
    obligations: o.obligations,
    parameters: o.parameters,
    ...(o.originalParameters !== undefined ? { originalParameters: o.originalParameters } : {}),
    ...(o.changes !== undefined ? { changes: o.changes } : {}),
    ...termsOf(o),
    taint: o.taint,
    journalSeqs: o.journalSeqs,
    ...(journalChain !== undefined ? { journalChain } : {}),
    ...(o.policyBundleHash !== undefined ? { policyBundleHash: o.policyBundleHash } : {}),
  };
}

/** The coded 503 for a Gate outcome that is a fault, or undefined. */
export function faultError(o: GateOutcome): ApiError | undefined {
  const fault = faultOf(o);
  if (fault === "journal_unavailable") {
    return new ApiError(
      "ERR_SERVER_JOURNAL_UNAVAILABLE",
      "the decision could not be recorded; nothing was executed",
      { details: { decisionId: o.decisionId, mayHaveExecuted: false } },
    );
  }
  // The capability ledger could not count the token's use (a store failure, not a bad token).
  if (o.decision === "deny" && o.reasonCodes.includes("ERR_CAPABILITY_UNAVAILABLE")) {
    return new ApiError(
      "ERR_RUNTIME_STORE_UNAVAILABLE",
      "the capability token's use could not be counted; nothing was executed",
      { details: { decisionId: o.decisionId, mayHaveExecuted: false } },
    );
  }
  if (fault === "policy_error") {
    return new ApiError("ERR_SERVER_POLICY_ERROR", "policy could not be evaluated; nothing was executed", {
      details: { decisionId: o.decisionId },
    });
  }
  // APAE §Trust Thresholds as Policy: a request below threshold is denied with HTTP 403.
  if (o.decision === "deny" && o.reasonCodes.includes(TRUST_THRESHOLD_REASON)) {
    return new ApiError("ERR_TRUST_BELOW_THRESHOLD", "the agent's trust is below this action's threshold", {
      details: { decisionId: o.decisionId, reasonCodes: o.reasonCodes },
    });
  }
  return undefined;
}

/** A pending step-up as an approver sees it: the structured action only. */
export function stepUpView(p: ApprovalRequest): Record<string, unknown> {
  const r = p.request;
  return {
    kind: "step_up",
    id: p.id,
    decisionId: p.decisionId,
    runId: p.runId,
    principalId: p.principalId,
    approverRole: p.approverRole,
    action: {
      toolClass: r.toolClass,
      action: r.action,
      ...(r.tool !== undefined ? { tool: r.tool } : {}),
      parameters: r.parameters,
      taintLabels: r.taintLabels,
    },
    ...(p.tool !== undefined ? { tool: { ...p.tool } } : {}),
    reasonCodes: [...p.reasonCodes],
    matchedRules: [...p.matchedRules],
    createdAt: p.createdAt,
    expiresAt: p.expiresAt,
  };
}

/** A deferred action as an approver sees it. */
export function deferredView(d: DeferredItem): Record<string, unknown> {
  const s = d.summary;
  return {
    kind: "defer",
    id: d.id,
    decisionId: d.decisionId,
    runId: d.runId,
    ...(d.principalId !== undefined ? { principalId: d.principalId } : {}),
    approverRole: "approver",
    tool: { toolClass: s.toolClass, action: s.action, ...(s.tool !== undefined ? { tool: s.tool } : {}) },
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
  };
}
