// Public face of the trust layer (APAE): trust tables and the engine, the quarantine
// protocol, Execution Context Tokens at L1/L2/L3, early quarantine lifts, and the offline
// simulation. Imports contracts, crypto and journal only.

export {
  applyViolations,
  COMPLIANCE_ACT,
  type ComplianceResult,
  type ComplianceRule,
  complianceInput,
  type Violation,
  verifyBehavior,
} from "./behavior.js";
export {
  BEHAVIOR_SPEC_ACT,
  type BehaviorSpec,
  BehaviorSpecSchema,
  CHECKPOINT_ACT,
  globMatch,
  type SignedBehaviorSpec,
  SignedBehaviorSpecSchema,
  type SpecOutcome,
  signBehaviorSpec,
  specChangeInput,
  verifyBehaviorSpec,
} from "./behavior-spec.js";
export { BehaviorVerifier, type BehaviorVerifierOptions, type CheckReport } from "./behavior-verifier.js";
export {
  DEFAULT_TRUST_CONFIG,
  parseTrustConfig,
  type TrustConfig,
  type TrustConfigInput,
  TrustConfigSchema,
} from "./config.js";
export {
  type Agreement,
  AgreementSchema,
  CROSS_DOMAIN_ACT,
  crossDomainTruster,
  type DelegationOutcome,
  type DelegationRequest,
  type TrustAnchor,
  TrustAnchorSchema,
  TrustDomains,
} from "./domains.js";
export {
  ECT_LEVELS,
  ECT_TYP,
  type EctClaims,
  EctClaimsSchema,
  EctEmitter,
  type EctEmitterOptions,
  type EctFailureCode,
  type EctInput,
  type EctLevel,
  type EctSigningKey,
  type EctVerification,
  type EctVerifyOptions,
  ectClaims,
  ectHash,
  encodeEct,
  MAX_ECT_BYTES,
  verifyEct,
} from "./ect.js";
export {
  type TrustChange,
  TrustEngine,
  type TrustEngineOptions,
  type TrustEventInput,
  type TrustView,
  viewOf,
} from "./engine.js";
export {
  type Derivation,
  explainTrust,
  journalTrustChange,
  registerTrustEventTypes,
  TRUST_DELIVERY_FAILED_EVENT,
  TRUST_EMITTED_EVENT,
  TRUST_STEP_EVENT,
  type TrustDeliveryFailedBody,
  TrustDeliveryFailedBodySchema,
  type TrustStepBody,
  TrustStepBodySchema,
  trustChangeBodies,
} from "./journal-events.js";
export {
  type DagCheck,
  type DagCode,
  type DagNode,
  ECT_LEDGER_EVENT,
  type EctIndex,
  EctLedger,
  type EctLedgerBody,
  EctLedgerBodySchema,
  type LedgerAppend,
  ledgerToken,
  registerEctLedgerEventType,
  validateDag,
} from "./ledger.js";
export {
  approverKeyMap,
  LIFT_SCOPE,
  type LiftCode,
  type LiftOutcome,
  liftQuarantine,
  type QuarantineLift,
  QuarantineLiftSchema,
  type SignedLift,
  SignedLiftSchema,
  signLift,
} from "./lift.js";
export {
  applyNotice,
  type NoticeOutcome,
  QUARANTINE_ACT,
  receiveQuarantineNotice,
} from "./notice.js";
export {
  type AssuranceProfile,
  type ContractFacts,
  checkProfile,
  contractGaps,
  type DeploymentFacts,
  PROFILE_MECHANISMS,
  PROFILES,
  type ProfileGap,
  type ProfileMechanisms,
  ProfileSchema,
  profileFor,
  weakerOverrides,
} from "./profiles.js";
export {
  type AssertionOutcome,
  applyAssertion,
  assertionExt,
  type ReceivedAssertion,
  receiveAssertion,
  TRUST_ASSERTION,
} from "./propagation.js";
export { emissionInput, emitChange, receiveEct } from "./protocol.js";
export {
  missingProvenance,
  PROVENANCE_KEYS,
  type ProvenanceAnswer,
  type ProvenanceExt,
  ProvenanceExtSchema,
  type ProvenanceNode,
  provenanceOf,
} from "./provenance.js";
export {
  parseEventLines,
  type SimulatedEmission,
  type SimulatedRow,
  type SimulationOptions,
  type SimulationResult,
  simulateTrust,
} from "./simulate.js";
export { SqliteTrustStore } from "./sqlite-store.js";
export { MemoryTrustStore, parseTrustRow, type RowUpdate, TrustRowSchema, type TrustStore } from "./store.js";
export {
  applyEvent,
  type Confidence,
  confidenceOf,
  DAY_MS,
  decayedScore,
  type EmittedAct,
  freshRow,
  HOUR_MS,
  quarantineHours,
  round12,
  settle,
  TRUST_EVENTS,
  type Transition,
  type TrustEmission,
  type TrustEventKind,
  type TrustRow,
  type TrustStatus,
  type TrustStep,
  type TrustStepKind,
} from "./table.js";
export { parseIsoTime } from "./time.js";
