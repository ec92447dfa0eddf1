// How a Warden decision becomes a DARE PolicyDecisionRecord. DARE has two outcomes
// (allow | deny, plus invariant_halt); Warden has five. The mapping is documented in
// docs/policy.md: modify → allow with a redact_fields obligation; step_up and defer →
// deny (nothing may run on this record) with HITL_REQUIRED and an hitl_approval or
// alert_operator obligation; their resolution is a separate journal entry. The record
// is journaled as the `dare` member of the decision's warden.gate.decision entry.
import { createHash } from "node:crypto";
import {
  type Decision,
  dareOutcome,
  type PolicyDecisionRecord,
  SCHEMA_VERSION,
  type Sha256Hash,
  UUID_PATTERN,
} from "../contracts/index.js";

export { dareOutcome };

export type DareReasonCode = PolicyDecisionRecord["result"]["reason_codes"][number];
export type DareObligation = PolicyDecisionRecord["result"]["obligations"][number];
export type ToolCategory = PolicyDecisionRecord["action"]["tool_category"];

// Both ids below are pure functions of the run id, asked for on every decision of the
// run: remembered per run id (a bounded memo, cleared when full) instead of re-hashed.
const MEMO_MAX = 4096;
function memo(f: (runId: string) => string): (runId: string) => string {
  const seen = new Map<string, string>();
  return (runId) => {
    let v = seen.get(runId);
    if (v === undefined) {
      v = f(runId);
      if (seen.size >= MEMO_MAX) seen.clear();
      seen.set(runId, v);
    }
    return v;
  };
}

/** DARE run ids are UUIDs; a non-UUID run id maps to a stable UUIDv8 derived from it. */
export const dareRunId: (runId: string) => string = memo((runId) => {
  if (UUID_PATTERN.test(runId)) return runId;
  const h = createHash("sha256").update(`warden:run:${runId}`).digest();
  h[6] = 0x80 | (h[6]! & 0x0f);
  h[8] = 0x80 | (h[8]! & 0x3f);
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
});

/** A stable W3C trace id for a run that did not bring one. */
export const runTraceId: (runId: string) => string = memo((runId) =>
  createHash("sha256").update(`warden:trace:${runId}`).digest("hex").slice(0, 32),
);

const READ_ACTIONS = /^(get|head|read|list|query|search|fetch|retrieve|lookup|stat|describe|options)$/;

/** The DARE tool category: the contract's, else a conservative guess from class and action. */
export function toolCategory(toolClass: string, action: string, declared?: string): ToolCategory {
  if (declared !== undefined) return declared as ToolCategory;
  if (toolClass === "delegate" || toolClass === "message") return "multi_agent";
  if (READ_ACTIONS.test(action) || toolClass === "retrieval") return "read_only";
  if (toolClass === "shell") return "infrastructure";
  return "irreversible_write";
}

function reasonCode(code: string, decision: Decision): DareReasonCode {
  if (code.startsWith("budget_")) return "BUDGET_EXCEEDED";
  if (code === "rate_limited") return "RUN_LIMIT_EXCEEDED";
  if (
    code === "principal_unknown" ||
    code === "run_principal_mismatch" ||
    code === "run_unknown" ||
    code === "no_capability"
  )
    return "IDENTITY_INVALID";
  if (code.startsWith("contract_") || code === "request_invalid" || code === "tool_unknown")
    return "SCHEMA_INVALID";
  if (code.startsWith("behavior_") || code === "quarantined" || code.startsWith("drift_"))
    return "INVARIANT_VIOLATED";
  if (code.startsWith("constraint_") && code.includes("host")) return "DESTINATION_NOT_ALLOWLISTED";
  if (decision === "step_up" || decision === "defer") return "HITL_REQUIRED";
  if (decision === "allow" || decision === "modify") return "ALLOWLIST_MATCH";
  if (code === "no_matching_allow" || code === "default_deny") return "UNKNOWN";
  return "DENYLIST_MATCH";
}

export interface DareDecisionInput {
  decisionId: string;
  decision: Decision;
  reasonCodes: readonly string[];
  runId: string;
  traceId: string;
  tenantId: string;
  environment: PolicyDecisionRecord["environment"];
  principalId: string;
  toolName: string;
  toolClass: string;
  action: string;
  category?: string;
  riskTier?: string;
  requestHash: Sha256Hash;
  contextHash: Sha256Hash;
  policyBundleHash: Sha256Hash;
  toolSchemaHash: Sha256Hash;
  time: string;
  /** The Gate's risk score (src/gate/risk.ts), when it got that far. */
  riskScore?: number;
}

export function buildDareDecision(i: DareDecisionInput): PolicyDecisionRecord {
  const codes = [...new Set(i.reasonCodes.map((c) => reasonCode(c, i.decision)))];
  const obligations: DareObligation[] = [{ type: "audit_log", required: true }];
  if (i.decision === "modify") obligations.push({ type: "redact_fields", required: true });
  if (i.decision === "step_up") obligations.push({ type: "hitl_approval", required: true });
  if (i.decision === "defer") obligations.push({ type: "alert_operator", required: true });
  const type =
    i.toolClass === "memory" ? (READ_ACTIONS.test(i.action) ? "memory.read" : "memory.write") : "tool.invoke";
  // Built as a typed literal rather than through buildPolicyDecision: the record is the
  // `dare` member of a warden.gate.decision entry, whose body schema checks it against
  // PolicyDecisionRecordSchema on append. The journal append is the one authoritative
  // check; validating here too would double the cost for nothing.
  return {
    schema_version: SCHEMA_VERSION,
    event_type: "dare.policy.decision",
    decision_id: i.decisionId,
    time: i.time,
    run_id: dareRunId(i.runId),
    trace_id: i.traceId,
    tenant_id: i.tenantId,
    environment: i.environment,
    subject: { agent_instance_id: i.principalId, subject_id: i.principalId, attested: false },
    action: {
      type,
      tool_name: i.toolName,
      tool_category: toolCategory(i.toolClass, i.action, i.category),
      ...(i.riskTier !== undefined
        ? { risk_tier: i.riskTier as NonNullable<PolicyDecisionRecord["action"]["risk_tier"]> }
        : {}),
    },
    inputs: {
      request_hash: i.requestHash,
      context_hash: i.contextHash,
      ...(i.riskScore !== undefined ? { orm_risk_score: i.riskScore } : {}),
    },
    bundles: { policy_bundle_hash: i.policyBundleHash, tool_schema_hash: i.toolSchemaHash },
    result: {
      decision: dareOutcome(i.decision),
      reason_codes: codes.length > 0 ? codes : ["UNKNOWN"],
      obligations,
    },
  };
}
