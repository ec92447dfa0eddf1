// Public face of the policy layer: YAML rules (a superset of Ari Kernel's format) and
// Cedar, combined into one of the five decisions with reasons, obligations and payloads.
export {
  ApaeMatch,
  TRUST_CONFIDENCE_LEVELS,
  TRUST_THRESHOLD_REASON,
  type TrustConfidence,
} from "./apae-match.js";
export {
  BUNDLE_FORMAT,
  type BundleSummary,
  loadPolicyBundle,
  PolicyBundle,
  type PolicyBundleOptions,
  type PolicyBundleSources,
  type PolicyExplanation,
  readPolicyFile,
  type YamlInput,
} from "./bundle.js";
export { checkCapabilities, pathAllowed } from "./capabilities.js";
export {
  buildCedarRequest,
  CEDAR_ACTION_GROUPS,
  CEDAR_BUILTIN_ACTIONS,
  CedarEngine,
  type CedarSource,
  type CedarTraceEntry,
  cedarSchemaText,
} from "./cedar.js";
export {
  type CombinedOutcome,
  combineOutcomes,
  DEFAULT_DEFER_TIMEOUT_MS,
  DEFAULT_DENY_RULE,
  DEFAULT_STEP_UP,
  STRICTNESS,
} from "./combine.js";
export { buildEvalContext, DEFAULT_CLASSIFICATION_LEVELS, type EvalContext } from "./eval-context.js";
export { applyModify, type ModifyResult, REDACTED } from "./modify.js";
export {
  checkRegexSafety,
  compileSafeRegex,
  MAX_PATTERN_INPUT_LENGTH,
  MAX_PATTERN_LENGTH,
  type RegexCheck,
} from "./regex-safety.js";
export {
  type Capability,
  COUNTER_NAMES,
  type Counters,
  type MatchedRule,
  type ModifyChange,
  type ModifySpec,
  type Obligation,
  type PolicyFlow,
  type PolicyInput,
  type PolicyMessage,
  type PolicyOutcome,
  type PolicyPrincipal,
  type PolicySessionFacts,
  type PolicyTool,
  type RuleOutcome,
  type RuleSource,
  type StepUp,
} from "./types.js";
export {
  LAYERS,
  type Layer,
  NOT_EVALUABLE_REASON,
  type RuleTrace,
  YamlEngine,
  type YamlEngineOptions,
  type YamlSource,
} from "./yaml-engine.js";
export {
  MAX_POLICY_FILE_BYTES,
  PolicyFile,
  PolicyRule,
  parsePolicyYaml,
  validatePolicyData,
} from "./yaml-schema.js";
