// Public face of the Gate: the reference monitor that turns a structured proposal
// into one of five decisions, commits the decision record, and mints the execution
// tickets executors require. Tickets are exported as a type only: nothing outside
// the Gate can mint one.
export {
  type ApprovalQueue,
  type ApprovalQueueOptions,
  type ApprovalRequest,
  type Approvals,
  type ApprovalVerdict,
  type Approver,
  type ApproverVerdict,
  type DecideResult,
  type DecideVerdict,
  InProcessApprovals,
  localApprovalQueue,
} from "./approvals.js";
export type {
  CapabilityChecker,
  CapabilityFact,
  CapabilityVerdict,
  CeilingVerdict,
  GrantedCall,
  RunCeilings,
} from "./capability.js";
export {
  type GateConfig,
  GateConfigSchema,
  type LoadedGateConfig,
  loadGateConfig,
  parseGateConfig,
  parseWithGateSection,
  requireContractByDefault,
} from "./config.js";
export { dareRunId, runTraceId, toolCategory } from "./dare-mapping.js";
export {
  checkRelease,
  DEFER_NOT_FOUND,
  DeferQueue,
  type DeferResolution,
  type DeferredItem,
  type DeferredQueue,
  type DeferShare,
  type DeferVerdict,
  localDeferredQueue,
} from "./defer.js";
export {
  applyDrift,
  DEFAULT_CUMULATIVE_THRESHOLDS,
  DEFAULT_DRIFT_THRESHOLDS,
  DRIFT_FLAG_THRESHOLD,
  type DriftLevels,
  type DriftOptions,
  type DriftResult,
  type DriftScore,
  type DriftTier,
  DriftTracker,
} from "./drift.js";
export { GATE_DECISION, GATE_RESOLUTION, GATE_RESULT, registerGateEventTypes } from "./events.js";
export { Gate, type ReportedResult, type TraceOptions } from "./gate.js";
export type { ContractLookup, GateJournal, GateOptions, GatePolicy, PrincipalConfig } from "./options.js";
export {
  type ApprovalRecord,
  approvalOf,
  type DeferOutcome,
  type DeferTerms,
  type DeniedOutcome,
  faultOf,
  type GateFault,
  type GateOutcome,
  type GrantedOutcome,
  type Resolution,
  type StepUpOutcome,
  type StepUpTerms,
  termsOf,
  ticketOf,
} from "./outcome.js";
export { CONTEXT_REASON_CODES, GATE_REASON_CODES, type GateReasonCode } from "./reasons.js";
export type { RecordedOutput } from "./results.js";
export {
  RISK_WEIGHTS,
  type RiskFactors,
  riskFactorValues,
  riskScore,
  TAINT_FACTOR,
  TIER_FACTOR,
} from "./risk.js";
export {
  DEFAULT_OUTPUT_SCREENING,
  INSTRUCTIONS_TAINT,
  type OutputScreening,
  SCREENING_MODES,
  type ScreeningMode,
  type ScreeningResult,
  screenOutput,
  screenText,
  UNSCREENED_EXCESS,
} from "./screening.js";
export {
  SHADOW_QUEUE_DEFAULT,
  type ShadowOptions,
  ShadowPolicy,
  type ShadowStats,
  verdictOf,
} from "./shadow.js";
export {
  type ExecutionTicket,
  type RedeemExpectation,
  type RedeemResult,
  redeemTicket,
  type TicketApproval,
  type TicketFailureCode,
  type TicketObligation,
} from "./ticket.js";
export {
  contextFromTraceparent,
  formatTraceparent,
  parseTraceparent,
  SPAN,
  TRACER_NAME,
  withExecutionSpan,
} from "./tracing.js";
