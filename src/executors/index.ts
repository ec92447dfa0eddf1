// Public face of the executors: the only code that touches the world, and only with
// a Gate-issued execution ticket. Each executor hardens its own medium (SSRF, paths,
// binaries, SQL, MCP rug pulls), sits behind a per-tool circuit breaker, and turns
// every execution into an evidence envelope plus a DARE ToolResponseEnvelope.
export {
  type AddressCategory,
  type AddressPolicy,
  type AddressVerdict,
  checkAddress,
  classifyAddress,
  embeddedIPv4,
  formatAddress,
  type ParsedAddress,
  parseAddress,
} from "./address.js";
export {
  type BreakerAdmission,
  type BreakerOptions,
  type BreakerPermit,
  BreakerRegistry,
  type BreakerState,
  type BreakerTransition,
  CircuitBreaker,
} from "./breaker.js";
export { bindingForContract, type ContractBinding, type ContractBindingOptions } from "./contract-binding.js";
export {
  type DatabaseBinding,
  type DatabaseExecutorOptions,
  type DatabaseOutput,
  DEFAULT_ACTION_CLASSES,
  PostgresExecutor,
  type PostgresExecutorOptions,
  SqliteExecutor,
  type SqliteExecutorOptions,
  type SqlParam,
  type SqlSpec,
} from "./database.js";
export {
  type DareDeployment,
  EVIDENCE_SCHEMA,
  EvidenceEnvelope,
  EXECUTION_STATUSES,
  EXECUTOR_EVENT_TYPES,
  type ExecutionStatus,
  type ExecutorEventType,
  type Invocation,
  InvocationSchema,
  rawOutputHash,
  registerExecutorEventTypes,
  toolResponseFor,
  uuidFor,
} from "./evidence.js";
export {
  checkPathText,
  type FileBinding,
  FileExecutor,
  type FileExecutorOptions,
  type FileOperation,
  type FileOutput,
} from "./file.js";
export {
  type HttpBinding,
  HttpExecutor,
  type HttpExecutorOptions,
  type HttpOutput,
  type HttpRequestSpec,
  hostMatches,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from "./http.js";
export {
  contractFromMcpTool,
  MCP_MAX_LIST_ENTRIES,
  type McpBinding,
  type McpCheck,
  McpConnection,
  McpExecutor,
  type McpExecutorOptions,
  type McpOutput,
  type McpPinFirst,
  McpPinStore,
  type McpPins,
  type McpPromptInfo,
  type McpRequest,
  type McpRequestBinding,
  type McpResourceInfo,
  type McpServerSpec,
  type McpToolInfo,
  McpUpstreams,
  mcpToolHash,
} from "./mcp.js";
export {
  type McpMetadataKind,
  metadataAsTool,
  metadataKey,
  parseMetadataKey,
} from "./mcp-metadata.js";
export { type McpFinding, type McpFindingKind, scanMcpTool } from "./mcp-scan.js";
export { visibleAgentText } from "./notice-render.js";
export {
  NOTIFY_DELIVERY_EVENT,
  type Notice,
  Notifier,
  type NotifierOptions,
  type NotifierTarget,
  NotifyDeliveryBody,
  signNotice,
} from "./notifier.js";
export {
  checkObligations,
  maskOutput,
  OBLIGATIONS_EVENT,
  type ObligationNotice,
  type ObligationPorts,
  type ObligationsBody,
  RateWindows,
} from "./obligations.js";
export {
  DEFAULT_TRUSTED_PREFIXES,
  type ProcessBinding,
  ProcessExecutor,
  type ProcessExecutorOptions,
  type ProcessOutput,
  type ProcessSpec,
  SECRET_ENV_PATTERN,
} from "./process.js";
export {
  type CallOptions,
  type ExecFailureCode,
  type ExecutionFailure,
  type ExecutionResult,
  type ExecutionSuccess,
  type ExecutorDeps,
  type ExecutorErrorCode,
  type ExecutorJournal,
  journalBreakerTransitions,
  type ResourceUsage as ExecutionUsage,
  type ResponseSnapshots,
  type ToolIdentity,
} from "./runtime.js";
export {
  bwrapPath,
  bwrapUnavailable,
  type ContainerOptions,
  containerUnavailable,
  mergeLimits,
  planSandbox,
  type ResourceLimits,
  SANDBOX_TIERS,
  type SandboxOptions,
  type SandboxPlan,
  type SandboxRequest,
  type SandboxTier,
  sandboxConfigProblem,
} from "./sandbox.js";
export { limitKilled, type SandboxCommand, sandboxCommand } from "./sandbox-argv.js";
export {
  defaultSecretProviders,
  EnvSecretProvider,
  FileSecretProvider,
  type SecretProvider,
  type SecretRequest,
} from "./secret-provider.js";
export { classifySql, type SqlClassification, type StatementClass } from "./sql-classify.js";
export { type SqlDialect, type SqlToken, type SqlTokens, tokenizeSql } from "./sql-tokenize.js";
