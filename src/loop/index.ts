// Public face of the loop layer: the ORGA loop as a typestate (Observe → Reason → Gate →
// Act, where skipping the Gate does not compile), the ports it drives, and the model
// adapters (OpenAI-compatible chat completions, scripted turns).

export { agentErrorText } from "../contracts/index.js";
export {
  type AgentLoop,
  type LoopObserver,
  type Phase,
  type PhaseTypes,
  runLoop,
  startLoop,
} from "./driver.js";
export { canonicalOf } from "./hook-moments.js";
export type {
  ChatMessage,
  ModelAdapter,
  ModelCallOptions,
  ModelRequest,
  ModelResponse,
  ModelTool,
  ProposedArguments,
  ProposedToolCall,
  TokenUsage,
  ToolCallMessagePart,
} from "./model.js";
export { parseToolArguments } from "./model.js";
export {
  OpenAICompatibleAdapter,
  type OpenAICompatibleOptions,
  parseRetryAfter,
} from "./openai-adapter.js";
export { Dispatching, Observing, PolicyCheck, Reasoning } from "./phases.js";
export type {
  ExecutionOutcome,
  ExecutorPort,
  GatePort,
  GateVerdict,
  JournalPort,
  LoopEvent,
  LoopUsage,
  ObservedResult,
  ResolvedCall,
  RunRef,
  TicketLike,
  ToolCatalog,
} from "./ports.js";
export {
  loadScriptFile,
  parseScript,
  type Script,
  ScriptedAdapter,
  type ScriptedAdapterOptions,
  ScriptSchema,
  type ScriptTurn,
} from "./scripted-adapter.js";
export { runSubAgent, type SubAgentRun, type SubAgentSpec } from "./sub-agent.js";
export {
  DEFAULT_LIMITS,
  type DecisionCounts,
  type DecisionStage,
  type DecisionView,
  type HookSummary,
  type LoopComponents,
  type LoopLimits,
  type LoopOptions,
  type LoopResult,
  type ProposalView,
  type ResultStatus,
  type ResultView,
  type TerminationReason,
} from "./types.js";
export {
  type AuthorizeOutcome,
  type AuthorizingGate,
  type ContractCatalogOptions,
  type ContractSource,
  classifyContract,
  contractCatalog,
  type ExecutorRoute,
  executorPort,
  type GovernedResult,
  type GovernedRuntime,
  gatePort,
  type RuntimePorts,
  runtimePorts,
  type ToolClassification,
} from "./wiring.js";
