// Public face of the evidence layer (docs/evidence.md): the replay recorder, the DARE
// records derived from a journal, the GATE export, replay and what-if.
export { type BundleSources, collectBundle, type DecisionBundle, type MaterializedBundle } from "./bundle.js";
export { EVIDENCE_BUNDLE_EVENT, type EvidenceBundleBody } from "./events.js";
export { type ExportOptions, exportGate, gateLines } from "./export-gate.js";
export { agentInstanceId, ledgerEventId, spiffeOf, traceIdOf } from "./ids.js";
export {
  type DecisionStep,
  type RunEvidence,
  readVerified,
  readVerifiedStore,
  type Selection,
  selectRuns,
} from "./journal-read.js";
export { openRecorder, pinBundle } from "./recorder.js";
export { ledgerEventsOf } from "./records-ledger.js";
export { toolRequestOf, toolResponseOf } from "./records-tool.js";
export { replayTraceOf } from "./records-trace.js";
export {
  type ReplayHost,
  type ReplayOptions,
  type RunReport,
  replayEntries,
  replayRuns,
  type StepReport,
  type Verdict,
} from "./replay.js";
export {
  SHADOW_REPORT_FORMAT,
  type ShadowExample,
  type ShadowGroup,
  type ShadowReport,
  type ShadowReportOptions,
  shadowReport,
} from "./shadow-report.js";
export { EvidenceStore, type EvidenceStoreOptions, evidenceDir, snapshotUri } from "./store.js";
