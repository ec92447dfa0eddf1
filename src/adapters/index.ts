// Public face of the adapters layer (`warden-runtime/adapters`): the framework-neutral core every
// framework adapter is built on. A governed tool is a Warden contract called through the
// Gate in library mode (a runtime from `composeRuntime`) or HTTP mode (a sidecar), with one
// outcome union back. The framework adapters are their own entry points
// (`warden-runtime/adapters/langchain`, `…/ai-sdk`, `…/openai-agents`) so that none of the
// frameworks, all optional peer dependencies, is loaded unless it is used.

export {
  contractModelTool,
  type GovernedTool,
  type GovernedToolsOptions,
  governedTarget,
  governedTools,
  type OutcomeListener,
  type TargetOptions,
  taintSources,
} from "./governed-tool.js";
export { type HttpOptions, HttpTarget, outcomeOf } from "./http.js";
export { type LibraryOptions, LibraryTarget } from "./library.js";
export {
  type GovernedOutcome,
  modelTextOf,
  modelValueOf,
  reasonCodesOnly,
  type ToolErrorView,
  toolErrorOf,
} from "./outcome.js";
export { withoutNulls, type ZodOfToolOptions, zodOfArgument, zodOfTool } from "./schema.js";
export type { CallOptions, GovernedTarget } from "./target.js";
