// Public face of the runtime layer: the one composition root. Entry points (the sidecar,
// the CLI, the ORGA loop, later hooks and gateways) build their runtime here and reach
// the layers below through it.

export {
  AGENTPIN_PIN_REFUSED_EVENT,
  AGENTPIN_PINNED_EVENT,
  type AgentPinAuth,
  AgentPinAuthenticator,
  type RuntimeAgentPinConfig,
} from "./agentpin.js";
export { type AgentPinFetchOptions, agentPinFetcher } from "./agentpin-fetch.js";
export {
  type CrossDomainResult,
  openApae,
  type RuntimeApae,
  type RuntimeApaeConfig,
  type TrustRevocation,
} from "./apae.js";
export {
  type ApaeSection,
  ApaeSectionSchema,
  type ApaeSummary,
  parseApaeSection,
  summarizeApae,
} from "./apae-config.js";
export {
  APAE_LIFT_EVENT,
  type ApaeLiftBody,
  ApaeLiftBodySchema,
  type EarlyLift,
  type LiftOptions,
} from "./apae-lift.js";
export {
  type ApaeEctConfig,
  type ApaePeerConfig,
  ApaePeers,
  type PeerDelivery,
  type PeerReceipt,
} from "./apae-peers.js";
export {
  behaviorFacts,
  contractProfileGaps,
  deploymentFacts,
  profileGaps,
  refuseUnmetProfile,
} from "./apae-profile.js";
export {
  CAPABILITY_GRANTED_EVENT,
  CapabilityGrantedBodySchema,
  type RuntimeGrant,
} from "./capabilities.js";
export { composeRuntime, type Runtime } from "./compose.js";
export type {
  RuntimeConfig,
  RuntimeContractsConfig,
  RuntimeDelegationConfig,
  RuntimeDeps,
  RuntimeGateConfig,
  RuntimeJournalConfig,
  RuntimeMessagingConfig,
} from "./config.js";
export { MAX_CONFIG_BYTES, readConfigFile } from "./config-file.js";
export {
  DELEGATION_ACCEPTED_EVENT,
  DELEGATION_REFUSED_EVENT,
  type DelegatedRunRequest,
} from "./delegation.js";
export {
  EXECUTE_REPLAYED_EVENT,
  evictedBody,
  journalContractEvents,
  RUN_ADOPTED_EVENT,
  RUN_EVICTED_EVENT,
  RunEvictedBodySchema,
  registerRuntimeEventTypes,
} from "./events.js";
export {
  composeExecutors,
  type DatabaseExecutor,
  type RuntimeDatabaseConfig,
  type RuntimeExecutors,
  type RuntimeExecutorsConfig,
  type RuntimeMcpConfig,
} from "./executors.js";
export { type FairOutcome, FairQueue, type FairQueueOptions, type FairRefusal } from "./fair-queue.js";
export type { RuntimeMessaging } from "./messages.js";
export {
  ApprovalLinks,
  openNotifications,
  type RuntimeNotifications,
  type RuntimeNotificationsConfig,
} from "./notifications.js";
export {
  checkPrincipalLift,
  PRINCIPAL_LIFT_EVENT,
  PRINCIPAL_LIFT_SCOPE,
  type PrincipalLift,
  type PrincipalLiftBody,
  PrincipalLiftBodySchema,
  type PrincipalLiftOutcome,
  quarantineIdOf,
  type SignedPrincipalLift,
  SignedPrincipalLiftSchema,
  signPrincipalLift,
} from "./principal-lift.js";
export { SqlitePrincipalStateStore } from "./principal-store.js";
export { type QuarantineEntry, QuarantineEntrySchema, type RuntimeQuarantines } from "./quarantines.js";
export { openShadow, type RuntimeShadowConfig } from "./shadow.js";
