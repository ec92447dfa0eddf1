// Public face of the sidecar server: configuration, runtime wiring, the HTTP server,
// credentials, the error table and the OpenAPI document.
export { Authenticator, type AuthResult, generateToken, hashToken, type Identity } from "./auth.js";
export {
  JOURNAL_SIGNATURE_MODES,
  type JournalSignatureMode,
  type LoadedSidecarConfig,
  loadSidecarConfig,
  parseSidecarConfig,
  type SidecarConfig,
  type SidecarConfigInput,
  SidecarConfigSchema,
} from "./config.js";
export { ApiError, type ApiErrorBody, type ApiErrorCode, ERROR_STATUS, toApiError } from "./errors.js";
export { type ExecutionView, ToolRunner, type ToolRunnerOptions } from "./execute.js";
export {
  type CreatedJournalKey,
  initJournalKey,
  loadJournalKey,
  missingKeyError,
} from "./journal-key.js";
export { DECISION_BUCKETS_S, SidecarMetrics } from "./metrics.js";
export { openApiDocument } from "./openapi.js";
export {
  type CheckProblem,
  type CheckReport,
  checkSidecarConfig,
  openSidecarRuntime,
  type RuntimeOverrides,
  type SidecarRuntime,
  sidecarRuntimeConfig,
} from "./runtime.js";
export {
  createSidecarServer,
  type SidecarServer,
  type SidecarServerOptions,
  startSidecar,
} from "./server.js";
