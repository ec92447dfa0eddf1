// Public face of the hooks layer: Warden as an AARTS security engine for agent hosts
// (the AARTS 0.1 specification). An entry point like the sidecar: it builds its runtime with
// composeRuntime and reaches the layers below through their index. docs/hooks.md.

export { artifactValues, pipesToShell, toolArtifacts } from "./artifacts.js";
export {
  CLAUDE_CODE_EVENTS,
  CLAUDE_CODE_HOST_ID,
  type ClaudeAnswer,
  type ClaudeCodeEvent,
  claudeCodeAdapter,
  claudeEventName,
  isClaudeCodeEvent,
  renderClaudeCode,
  translateClaudeCode,
} from "./claude-code.js";
export {
  CODEX_EVENTS,
  CODEX_HOST_ID,
  CODEX_TOOLS,
  type CodexEvent,
  codexAdapter,
  codexTool,
  isCodexEvent,
  renderCodex,
  translateCodex,
} from "./codex.js";
export {
  type CodingProfile,
  type CodingProfileConfig,
  CodingProfileConfigSchema,
  codingProfile,
  DEFAULT_EGRESS_HOSTS,
  egressAllowed,
  HOME_CREDENTIALS,
  HOME_PROTECTED,
  isCredentialName,
  isCredentialPath,
  isProtectedPath,
  isWithin,
  WORKSPACE_PROTECTED,
} from "./coding-profile.js";
export {
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceRow,
  formatReport,
  type Level,
  runConformance,
} from "./conformance.js";
export {
  FAKE_TOKEN,
  HOOK_CASES,
  type HookCase,
  type HostileExpectation,
  LEVEL_TOOLS,
  TOOL_CASES,
  type ToolCase,
} from "./conformance-cases.js";
export { hostConformance } from "./conformance-host.js";
export {
  type CallNames,
  type ContainmentConfig,
  containCommand,
  containmentUnavailable,
  containSpec,
  containVerdict,
  runnerFiles,
  sessionKeyOf,
  workspaceCredentials,
} from "./contain.js";
export { drainEgress, type EgressEntry } from "./contain-journal.js";
export {
  type EgressProxy,
  type EgressProxyOptions,
  type EgressRecord,
  isInternalAddress,
  judgeDestination,
  startEgressProxy,
} from "./contain-proxy.js";
export { gitRemoteHosts } from "./contain-remotes.js";
export { type ContainSpec, decodeSpec, encodeSpec } from "./contain-spec.js";
export {
  COPILOT_EVENTS,
  COPILOT_HOST_ID,
  COPILOT_TOOLS,
  type CopilotEvent,
  type CopilotOptions,
  copilotAdapter,
  copilotAdapterFor,
  copilotEventName,
  copilotTool,
  isCopilotEvent,
  renderCopilot,
  translateCopilotEvent,
} from "./copilot.js";
export {
  CURSOR_EVENTS,
  CURSOR_HOST_ID,
  type CursorEvent,
  cursorAdapter,
  cursorEventName,
  isCursorEvent,
  renderCursor,
  translateCursor,
} from "./cursor.js";
export { type DaemonOptions, type RunningDaemon, startDaemon } from "./daemon.js";
export { EnginePool, MAX_DAEMON_ENGINES } from "./daemon-engines.js";
export {
  type DaemonInfo,
  type DaemonPaths,
  daemonPaths,
  isDaemonPid,
  readInfo,
  readPid,
  readToken,
} from "./daemon-files.js";
export { DAEMON_HOSTS, type DaemonHost, daemonHost } from "./daemon-hosts.js";
export { MAX_EVENT_BYTES } from "./daemon-http.js";
export { INJECTION_RULES, scanText, type TextFindings } from "./detect.js";
export { hostPrincipal, sessionPrincipal } from "./dispatch.js";
export {
  createEngine,
  ENGINE_ID,
  ENGINE_VERSION,
  type Engine,
  type EngineConfig,
  hostToolsPolicyPath,
  supportsVersion,
} from "./engine.js";
export {
  HOOK_CLEAR_EVENT,
  HOOK_EGRESS_EVENT,
  HOOK_HANDSHAKE_EVENT,
  HOOK_VERDICT_EVENT,
  HookEgressBodySchema,
  HookVerdictBodySchema,
  registerHookEventTypes,
} from "./events.js";
export { type FailurePolicy, failureVerdict } from "./failure.js";
export {
  GEMINI_EVENTS,
  GEMINI_HOST_ID,
  GEMINI_TOOLS,
  type GeminiEvent,
  geminiAdapter,
  geminiTool,
  isGeminiEvent,
  renderGemini,
  translateGemini,
} from "./gemini.js";
export {
  type AskPort,
  type AskRequest,
  type DecidedBy,
  type Handshake,
  HookHost,
  type HookHostConfig,
  type HostFailure,
  type HostOutcome,
  type HostRecord,
} from "./host.js";
export {
  answerHostEvent,
  type HostAdapter,
  type HostAnswer,
  type HostInput,
  verdictReason,
} from "./host-adapter-common.js";
export { answerHostEventRemote, type RemoteEngine } from "./host-adapter-common-remote.js";
export { type ApprovalAskOptions, approvalQueueAsk } from "./host-ask.js";
export {
  argsObject,
  firstUrl,
  hookEventName,
  patchFields,
  patchFiles,
  type ToolFields,
  type ToolName,
  type ToolNameMap,
  toolFields,
} from "./host-tools.js";
export {
  codeOf,
  type EngineTransport,
  httpTransport,
  inProcessTransport,
  MAX_ANSWER_BYTES,
  splitCommand,
  stdioTransport,
  type TransportKind,
} from "./host-transport.js";
export { remember, similarKey } from "./memory.js";
export { POISONED_SESSION } from "./poisoned.js";
export * from "./schema-base.js";
export { isHookPoint, type ParsedEvent, parseHookEvent, parseHookEventText } from "./schema-parse.js";
export {
  type BlockingMode,
  type ConformanceLevel,
  HOOK_EVENT_SCHEMAS,
  HOOK_POINTS,
  HOOK_TABLE,
  type HookEvent,
  type HookEventOf,
  HookEventSchema,
  type HookPoint,
  SESSION_LEVEL_HOOKS,
} from "./schema-points.js";
export { hostSecretPath, secretFile } from "./secret-file.js";
export { type ShellWrites, shellWrites } from "./shell-writes.js";
export {
  SOURCE_KINDS,
  type SourceJudgement,
  type SourceKind,
  type SourceLoad,
  SourceTrust,
  type SourceTrustConfig,
  SourceTrustConfigSchema,
  signSourceManifest,
  sourceManifest,
  type TrustedSource,
} from "./source-trust.js";
export {
  adoptClears,
  type Cleared,
  clearSession,
  type EngineState,
  emptyState,
  isProtected,
  loadState,
  mergeState,
  pruneSessions,
  refreshState,
  type SessionState,
  STATE_LIMITS,
  saveState,
} from "./state.js";
export {
  answerLine,
  DEFAULT_MAX_LINE_BYTES,
  HOST_ONLY_POINTS,
  type JsonLinesOptions,
  serveJsonLines,
} from "./stdio.js";
export { resultSource, TRUST_LEVELS, trustOf } from "./taint-trust.js";
export { canonicalToolName, gateShape, placePath, refineShell } from "./taxonomy.js";
export { resultText } from "./tool-result.js";
export { fromSignal, merge } from "./verdicts.js";
