// Public face of the runtime layer: the one composition root. Entry points (the sidecar,
// the CLI, the ORGA loop, later hooks and gateways) build their runtime here and reach
// the layers below through it.

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
  type ApaeEctConfig,
  type ApaePeerConfig,
  ApaePeers,
  type PeerDelivery,
  type PeerReceipt,
} from "./apae-peers.js";
export { behaviorFacts, deploymentFacts, profileGaps, refuseUnmetProfile } from "./apae-profile.js";
export { composeRuntime, type Runtime } from "./compose.js";
export type {
  RuntimeConfig,
  RuntimeContractsConfig,
  RuntimeDeps,
  RuntimeGateConfig,
  RuntimeJournalConfig,
} from "./config.js";
export { MAX_CONFIG_BYTES, readConfigFile } from "./config-file.js";
export {
  evictedBody,
  journalContractEvents,
  RUN_EVICTED_EVENT,
  RunEvictedBodySchema,
  registerRuntimeEventTypes,
} from "./events.js";
export { composeExecutors, type RuntimeExecutors, type RuntimeExecutorsConfig } from "./executors.js";
export { SqlitePrincipalStateStore } from "./principal-store.js";
