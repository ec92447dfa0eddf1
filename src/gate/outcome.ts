// The Gate's answer: a union discriminated on `decision`. Fields that only one kind of
// decision can carry live on that member: the ticket on allow/modify, the approval terms
// on step_up, the hold on defer, the fault on deny. Outcomes of `authorize` that waited on
// a human carry `resolution`: what was asked and how it was answered.

import type { Decision, DecisionId, HITLDecisionRecord, Sha256Hash, TaintLabel } from "../contracts/index.js";
import type { MatchedRule, ModifyChange, Obligation } from "../policy/index.js";
import type { ApprovalVerdict } from "./approvals.js";
import type { DriftScore } from "./drift.js";
import { ExecutionTicket, type TicketApproval } from "./ticket.js";

export type GateFault = "journal_unavailable" | "policy_error";

export interface StepUpTerms {
  approverRole: string;
  timeoutMs: number;
}

export interface DeferTerms {
  timeoutMs: number;
}

export interface ApprovalRecord {
  /** The approver's answer, or why there was none (`no_approver`, `timeout`, `cancelled`). */
  outcome: ApprovalVerdict["outcome"] | "no_approver";
  approver?: string;
  /** The signed DARE HITL record, journaled as `dare.hitl.decision`. */
  hitl?: HITLDecisionRecord;
  /** The approver signed the verdict with their own key (not only the runtime key). */
  approverSigned?: boolean;
}

/** How a step_up or defer that `authorize` waited on was resolved. */
export type Resolution =
  | { via: "approval"; stepUp: StepUpTerms; approval: ApprovalRecord }
  | { via: "defer"; defer: DeferTerms };

interface OutcomeBase {
  decisionId: DecisionId;
  /** What policy (or the pre-policy checks) decided before any approval or deferral. */
  policyDecision: Decision;
  reasonCodes: string[];
  matchedRules: MatchedRule[];
  obligations: Obligation[];
  /** The parameters that may be executed (rewritten ones for modify). */
  parameters: Record<string, unknown>;
  /** Present when the parameters were rewritten (by policy or by an approver). */
  originalParameters?: Record<string, unknown>;
  /** The policy's rewrite, change by change. */
  changes?: ModifyChange[];
  taint: TaintLabel[];
  /** Journal sequence numbers written for this decision. */
  journalSeqs: number[];
  policyBundleHash: Sha256Hash;
  /** The W3C trace id the decision was journaled under (DARE records, OpenTelemetry). */
  traceId?: string;
  /** W3C `traceparent` of the action's OpenTelemetry span, when it has a valid one (parent of execution). */
  traceparent?: string;
  /** The Gate's ORM risk score of the action (src/gate/risk.ts). */
  riskScore?: number;
  /** Semantic drift from the run's original request, when scored. */
  drift?: DriftScore;
}

/** allow or modify: may run. `authorize` mints the ticket; `evaluate` never does. */
export interface GrantedOutcome extends OutcomeBase {
  decision: "allow" | "modify";
  /** The only thing an executor accepts (absent from `evaluate`). */
  ticket?: ExecutionTicket;
  resolution?: Resolution;
}

export interface DeniedOutcome extends Omit<OutcomeBase, "decisionId" | "policyBundleHash"> {
  decision: "deny";
  /** Null only when the request was refused unjournaled (`request_invalid`, `run_id_invalid`). */
  decisionId: DecisionId | null;
  /** Absent only with a null decisionId. */
  policyBundleHash?: Sha256Hash;
  /** Set when the Gate failed closed rather than decided. */
  fault?: GateFault;
  resolution?: Resolution;
}

/** Returned by `evaluate` only: `authorize` waits for the approval and answers allow/modify/deny. */
export interface StepUpOutcome extends OutcomeBase {
  decision: "step_up";
  stepUp: StepUpTerms;
}

/** Returned by `evaluate` only: `authorize` waits for the release and answers allow/deny. */
export interface DeferOutcome extends OutcomeBase {
  decision: "defer";
  defer: DeferTerms;
}

export type GateOutcome = GrantedOutcome | DeniedOutcome | StepUpOutcome | DeferOutcome;

/** The ticket of an outcome, when it has one (allow or modify from `authorize`). */
export function ticketOf(o: GateOutcome): ExecutionTicket | undefined {
  return o.decision === "allow" || o.decision === "modify" ? o.ticket : undefined;
}

/** Why the Gate failed closed, when it did. */
export function faultOf(o: GateOutcome): GateFault | undefined {
  return o.decision === "deny" ? o.fault : undefined;
}

/** The outcome for a request refused before it has a run to be journaled under. */
export function rejectedOutcome(reason: "request_invalid" | "run_id_invalid"): DeniedOutcome {
  return {
    decisionId: null,
    decision: "deny",
    policyDecision: "deny",
    reasonCodes: [reason],
    matchedRules: [],
    obligations: [],
    parameters: {},
    taint: [],
    journalSeqs: [],
  };
}

/** The fields every kind of outcome has (no ticket, no terms, no fault). */
export type OutcomeCommon = Omit<DeniedOutcome, "decision" | "fault">;

export function commonOf(o: GateOutcome): OutcomeCommon {
  const c: OutcomeCommon = {
    decisionId: o.decisionId,
    policyDecision: o.policyDecision,
    reasonCodes: o.reasonCodes,
    matchedRules: o.matchedRules,
    obligations: o.obligations,
    parameters: o.parameters,
    taint: o.taint,
    journalSeqs: o.journalSeqs,
  };
  if (o.originalParameters !== undefined) c.originalParameters = o.originalParameters;
  if (o.changes !== undefined) c.changes = o.changes;
  if (o.policyBundleHash !== undefined) c.policyBundleHash = o.policyBundleHash;
  if (o.traceId !== undefined) c.traceId = o.traceId;
  if (o.traceparent !== undefined) c.traceparent = o.traceparent;
  if (o.riskScore !== undefined) c.riskScore = o.riskScore;
  if (o.drift !== undefined) c.drift = o.drift;
  if ((o.decision === "allow" || o.decision === "modify" || o.decision === "deny") && o.resolution)
    c.resolution = o.resolution;
  return c;
}

/** The same outcome turned into a denial (reasons appended, ticket and terms dropped). */
export function denied(o: GateOutcome, reasons: readonly string[], fault?: GateFault): DeniedOutcome {
  return {
    ...commonOf(o),
    decision: "deny",
    reasonCodes: [...o.reasonCodes, ...reasons],
    ...(fault !== undefined ? { fault } : {}),
  };
}

/** What a ticket is minted for. */
export interface Grant {
  decisionId: DecisionId;
  request: { runId: string; toolClass: string; action: string; tool?: string | undefined };
  principalId: string;
  ttlMs?: number | undefined;
}

/** The signed HITL record of the approval that released this outcome, as the ticket carries it. */
function approvalGrant(o: GrantedOutcome): { approval?: TicketApproval } {
  const a = approvalOf(o);
  const h = a?.hitl;
  if (a === undefined || h === undefined || (a.outcome !== "approve" && a.outcome !== "modify")) return {};
  return {
    approval: {
      approvalId: h.approval_id,
      approver: h.decision.approver_id,
      signingKeyId: h.evidence.signing_key_id ?? "",
      signature: h.evidence.signature,
      approverSigned: a.approverSigned === true,
    },
  };
}

/** The granted outcome with its ticket: the last step of `authorize` for allow and modify. */
export function withTicket(o: GrantedOutcome, g: Grant): GrantedOutcome {
  const r = g.request;
  o.ticket = ExecutionTicket.mint({
    decisionId: g.decisionId,
    runId: r.runId,
    principalId: g.principalId,
    toolClass: r.toolClass,
    action: r.action,
    ...(r.tool !== undefined ? { tool: r.tool } : {}),
    parameters: o.parameters,
    ...(g.ttlMs !== undefined ? { ttlMs: g.ttlMs } : {}),
    obligations: o.obligations,
    ...approvalGrant(o),
  });
  return o;
}

/** The step_up or defer terms of an outcome: its own, or those of the hold it was resolved from. */
export function termsOf(o: GateOutcome): { stepUp?: StepUpTerms; defer?: DeferTerms } {
  if (o.decision === "step_up") return { stepUp: o.stepUp };
  if (o.decision === "defer") return { defer: o.defer };
  const r = o.resolution;
  if (r === undefined) return {};
  return r.via === "approval" ? { stepUp: r.stepUp } : { defer: r.defer };
}

/** The approver's answer that resolved a step_up, when there was one. */
export function approvalOf(o: GateOutcome): ApprovalRecord | undefined {
  if (o.decision === "step_up" || o.decision === "defer") return undefined;
  return o.resolution?.via === "approval" ? o.resolution.approval : undefined;
}
