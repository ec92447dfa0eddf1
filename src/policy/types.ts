// The policy layer's input and output shapes, agreed with src/context and src/gate.
// Policy sees only structured facts: the parsed request, the principal from
// configuration, the tool contract's metadata, effective taint and session facts.
// SessionFacts is owned by src/context; policy declares the structural view it reads
// so the two layers stay decoupled (context's type must be assignable to it).
import type { Decision, GateRequest, Sha256Hash, TaintLabel, TaintSource } from "../contracts/index.js";

/** Ari Kernel capability grant (from configuration). Checked before any rule. */
export interface Capability {
  toolClass: string;
  /** Allowed actions; missing or empty means every action of the class. */
  actions?: string[];
  constraints?: {
    /** file: exact paths or `dir/**` prefixes (not general globs). */
    allowedPaths?: string[];
    /** http: hostname allow-list (exact, case-insensitive). */
    allowedHosts?: string[];
    /** shell: allowed command names (first word of `command`, or `command` parameter). */
    allowedCommands?: string[];
    /** database: allowed database names (`database` parameter). */
    allowedDatabases?: string[];
    /** Enforced by src/context (rate limits), carried here for one configuration shape. */
    maxCallsPerMinute?: number;
  };
}

export interface PolicyPrincipal {
  id: string;
  roles: string[];
  /** When present, Ari's capability check runs before the rules; absent means not configured. */
  capabilities?: Capability[];
}

export interface PolicyTool {
  name: string;
  version?: string;
  riskTier?: string;
  category?: string;
  humanApproval?: boolean;
  cedarResource?: string;
  cedarAction?: string;
}

export interface Counters {
  proposed: number;
  allowed: number;
  denied: number;
  deferred: number;
  executed: number;
  stepUps: number;
  modified: number;
}

export const COUNTER_NAMES = [
  "proposed",
  "allowed",
  "denied",
  "deferred",
  "executed",
  "stepUps",
  "modified",
] as const satisfies readonly (keyof Counters)[];

/** The part of src/context's SessionFacts that policy reads. */
export interface PolicySessionFacts {
  runId: string;
  counters: Counters;
  perToolCalls: Record<string, number>;
  dataClassificationsSeen: string[];
  highestClassification?: string;
  quarantined: boolean;
  /** Every taint source observed in the run. */
  taintSeen?: readonly TaintSource[];
  recentEvents?: readonly {
    seq: number;
    toolClass: string;
    action: string;
    tool?: string;
    decision: Decision;
    taint: TaintSource[];
  }[];
}

export interface PolicyInput {
  request: GateRequest;
  principal: PolicyPrincipal;
  tool?: PolicyTool;
  /** Effective taint: request labels ∪ session-propagated ∪ value provenance. */
  taint: TaintLabel[];
  session: PolicySessionFacts;
  /** 0..1, from the trust layer when configured. */
  trustScore?: number;
  /** A valid capability token presented with the call (checked by the Gate before policy). */
  capability?: { id: string; tool: string; usesLeft: number };

  /** Present only when the communication gate asks about an inter-agent message. */
  message?: PolicyMessage;
  /** The trust table's confidence in `trustScore` (APAE: low < 10 interactions, medium < 100, high). */
  trustConfidence?: "low" | "medium" | "high";
  /** The Gate's ORM risk score of this action, 0..1 (src/gate/risk.ts). */
  riskScore?: number;
  /** Semantic drift from the run's original request, 0..1 (src/gate/drift.ts), when scored. */
  drift?: { action: number; cumulative: number };
  /** Where the values that direct the call's effect came from (src/gate/flow.ts); rules match it with `flow:`. */
  flow?: PolicyFlow;
}

/** Flow facts of one call (docs/threat-model.md#flow-control). */
export interface PolicyFlow {
  /** The call's target arguments that carry a value (the classification names them). */
  targets: string[];
  /**
   * Arguments copied from tool output and not from the user's request: a target with a
   * token or substring provenance hit, or any argument holding an address (URL, host,
   * e-mail, IBAN) that came from output.
   */
  copied: string[];
  /** Taint sources of the copied values. */
  copiedSources: TaintSource[];
  /** Taint sources of the outputs that hold an argument's whole value (short names included). */
  namedSources: TaintSource[];
  /** Every target's value occurs in the user's request (false when there is no target or no request). */
  fromRequest: boolean;
  /** No target argument carries a value: nothing for flow control to judge. */
  untargeted: boolean;
  /**
   * Every copied value occurs in the output of a call the user's request designated (its
   * arguments named in the request or vouched for); true when nothing was copied. A link in a
   * channel the user named was designated; one in a listing nobody asked for was not.
   */
  designated: boolean;
  /**
   * Taint sources of every output holding a target's value, nothing vouched for (a page the
   * user named still counts as the web): where the destination was found at all.
   */
  foundIn: TaintSource[];
  /** The user's request holds a URL or host, or asks for links, URLs, websites, sites or pages. */
  webRequested: boolean;
  /**
   * Targets with no source the run can name (src/context/provenance-source.ts): not in the
   * user's request, not a record a tool returned, not vouched for or held by a document the
   * user designated — written by the model from a context that holds untrusted output (an
   * address spelled out of the matchers' reach). Empty when the run has read no output.
   */
  unsourced: string[];
  /**
   * Numeric arguments that are not targets (an amount) whose value an output's prose writes
   * out and neither the request nor a designated document holds: the output chose how much.
   */
  dictatedNumbers: string[];
  /**
   * Arguments holding a value of a secret class (a payment card number: issuer digit, 13–19
   * digits, Luhn check) that the user's request does not hold.
   */
  sensitive: string[];
}

/** An inter-agent message as policy sees it (src/messaging; rules match it with `message:`). */
export interface PolicyMessage {
  from: string;
  to: string;
  primitive: "ask" | "delegate" | "send" | "parallel" | "race";
  payloadType: "delegate_task" | "return_result" | "status_update" | "escalation";
  depth: number;
}

export interface Obligation {
  type: string;
  params?: Record<string, unknown>;
}

export type RuleSource = "yaml" | "cedar" | "builtin";

export interface MatchedRule {
  id: string;
  source: RuleSource;
  decision: Decision;
  reason?: string;
}

export interface ModifyChange {
  path: string;
  op: "set" | "redact" | "clamp";
  from?: unknown;
  to?: unknown;
}

/** A modify payload as written in a rule: applied to the request parameters in order. */
export interface ModifySpec {
  set?: Record<string, unknown>;
  redact?: string[];
  clamp?: Record<string, { min?: number; max?: number; maxLength?: number }>;
}

export interface StepUp {
  approverRole: string;
  timeoutMs: number;
}

export interface PolicyOutcome {
  decision: Decision;
  reasonCodes: string[];
  matchedRules: MatchedRule[];
  obligations: Obligation[];
  modify?: { parameters: Record<string, unknown>; changes: ModifyChange[] };
  stepUp?: StepUp;
  defer?: { timeoutMs: number };
  policyBundleHash: Sha256Hash;
}

/**
 * One source's verdict on one rule (a YAML rule's first match, a satisfied Cedar policy,
 * a built-in check). The unit `combineOutcomes` works on.
 */
export interface RuleOutcome {
  rule: MatchedRule;
  reasonCode: string;
  obligations?: Obligation[];
  modify?: ModifySpec;
  stepUp?: StepUp;
  defer?: { timeoutMs: number };
}
