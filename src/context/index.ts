// Public face of the context layer: per-run session context (OATS §7.3), budgets and
// rate limits, taint and value-level provenance, behavioural rules and quarantine.
export {
  type Candidate,
  classify,
  evaluateRules,
  type RuleMatch,
  type Signal,
  type WindowEvent,
} from "./behaviour.js";
export {
  BEHAVIOURAL_RULE_IDS,
  type BehaviouralRuleId,
  type ContextConfig,
  type ContextConfigInput,
  ContextConfigSchema,
  matchesAction,
  parseContextConfig,
} from "./config.js";
export {
  extractTokens,
  type ProvenanceHit,
  ProvenanceIndex,
  type ProvenanceKind,
  type ProvenanceOptions,
} from "./provenance.js";
export {
  type BudgetUse,
  type ChainVerification,
  createSessionStore,
  GENESIS_HASH,
  type Prepared,
  type PrepareOptions,
  type QuarantineTrigger,
  type RecordedResult,
  type ResultInput,
  Session,
  type SessionCounters,
  type SessionEvent,
  type SessionFacts,
  SessionStore,
  type SessionStoreOptions,
  type ToolFacts,
  verifyContextChain,
} from "./session.js";
export { hasTaint, mergeTaint, taintIncludes, taintSources } from "./taint.js";
