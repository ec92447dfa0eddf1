// Public face of the context layer: per-run session context (OATS §7.3), budgets and
// rate limits (reservations in a budget ledger), taint and value-level provenance,
// behavioural rules, and principal-level quarantine; runs created by the store; the
// instruction detector (instructions.ts) the Gate's output screening, memory and hooks share.
export {
  type Candidate,
  classify,
  evaluateRules,
  type RuleMatch,
  type Signal,
  type WindowEvent,
} from "./behaviour.js";
export {
  BUDGET_REASONS,
  type BudgetFacts,
  type BudgetLimits,
  type BudgetName,
  type BudgetUse,
  METERED_RESOURCES,
  type MeteredResource,
  type ResourceUsage,
  RunMeter,
  runBudgetLimits,
} from "./budgets.js";
export {
  type CarriedTaint,
  type CarrySource,
  carriedEntries,
  type Inheritance,
  MemoryPrincipalTaintStore,
  type PrincipalTaintStore,
  parseCarried,
  TaintCarry,
} from "./carry.js";
export {
  type ChainAnchor,
  type ChainVerification,
  EventChain,
  GENESIS_ANCHOR,
  GENESIS_HASH,
  type QuarantineCause,
  type QuarantineTrigger,
  type SessionCounters,
  type SessionEvent,
  verifyContextChain,
} from "./chain.js";
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
  ACTION_TEXT_MAX,
  type ActionTextInput,
  actionText,
  cosine,
  distance,
  type Embedder,
  LEXICAL_DIMENSIONS,
  lexicalEmbedder,
  lexicalVector,
  words,
} from "./embedding.js";
export type {
  Prepared,
  PrepareOptions,
  RecordedResult,
  ResultInput,
  SessionDeps,
  SessionFacts,
  SessionInit,
  ToolFacts,
} from "./facts.js";
export { instructionSpans, type TextSpan } from "./instruction-spans.js";
export {
  AGENT_DIRECTED_RULES,
  boundedTextOf,
  INJECTION_RULES,
  INSTRUCTION_RULES,
  type InstructionRule,
  instructionFindings,
  LANGUAGE_RULES,
  MAX_SCAN_CHARS,
  normaliseForScan,
  textOf,
} from "./instructions.js";
export {
  LANGUAGE_PHRASES,
  LANGUAGE_STRUCTURES,
  SCREENED_LANGUAGES,
  type ScreenedLanguage,
} from "./instructions-lang.js";
export {
  type BudgetLedger,
  type MaybePromise,
  MemoryBudgetLedger,
  type MemoryLedgerOptions,
  type Reservation,
  type ReserveOutcome,
  type ReserveRefusal,
  type ReserveRequest,
  type RunUsage,
  type Settlement,
  type SyncBudgetLedger,
} from "./ledger.js";
export { foldCharacters } from "./normalise.js";
export {
  MAX_LISTED_QUARANTINES,
  MemoryPrincipalStateStore,
  type PrincipalRecord,
  type PrincipalStateStore,
  Principals,
} from "./principals.js";
export {
  extractTokens,
  type ProvenanceHit,
  ProvenanceIndex,
  type ProvenanceKind,
  type ProvenanceOptions,
} from "./provenance.js";
export { isDateValue } from "./provenance-dates.js";
export { asksForWeb } from "./provenance-vouch.js";
export type { HoldSlot, ReserveResult } from "./run-ledger.js";
export { cardArguments, luhnValid, paymentCards } from "./sensitive.js";
export { Session } from "./session.js";
export {
  type AdoptedRun,
  createSessionStore,
  type EvictedRun,
  SessionStore,
  type SessionStoreOptions,
  type StartRunOptions,
} from "./store.js";
export { hasTaint, mergeTaint, taintIncludes, taintSources } from "./taint.js";
