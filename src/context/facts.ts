// The policy's view of a session (SessionFacts), how a run starts (SessionInit,
// SessionDeps) and the types of one call's passage through the context, plus the behavioural window: the last `windowSize` calls and
// results the sequence rules look at, and the recent decisions the facts list, kept in
// step as events arrive (bounded; never rebuilt per call).
import type { Decision, GateRequest, Sha256Hash, TaintLabel, TaintSource } from "../contracts/index.js";
import {
  ADMITTED,
  deniedRisk,
  type RuleMatch,
  untrustedOf,
  type WindowEvent,
  type WindowView,
} from "./behaviour.js";
import type { BudgetFacts, BudgetLimits, ResourceUsage } from "./budgets.js";
import type { SessionCounters, SessionEvent } from "./chain.js";
import type { ContextConfig } from "./config.js";
import type { Reservation, SyncBudgetLedger } from "./ledger.js";
import type { Principals } from "./principals.js";
import type { ProvenanceHit } from "./provenance.js";
import type { Session } from "./session.js";

/** What the policy sees of the session: plain JSON data, hashable. */
export interface SessionFacts {
  runId: string;
  counters: SessionCounters;
  /** Admitted calls (allow, modify, approved step_up/defer) by `tool`, or `toolClass:action` without one. */
  perToolCalls: Record<string, number>;
  /** Levels of data accessed, in configured order. Unlabelled data counts as the highest level. */
  dataClassificationsSeen: string[];
  highestClassification?: string;
  quarantined: boolean;
  quarantineReason?: string;
  /** OATS §9.2 budgets that are configured for the run, with their use (src/context/budgets.ts). */
  budgets: BudgetFacts;
  recentEvents: {
    seq: number;
    toolClass: string;
    action: string;
    tool?: string;
    decision: Decision;
    taint: TaintSource[];
  }[];
  /** The principal the run is bound to. */
  principalId?: string;
  /** Every taint source observed in the run (calls and outputs), inherited taint included. */
  taintSeen?: TaintSource[];
  /** The run this one was started from (its taint was carried in). */
  parentRun?: string;
  /** Sources of the taint carried in (from the parent run, a delegation, or the principal's runs). */
  inheritedTaint?: TaintSource[];
  /** The principal's runs whose taint was carried in at the start (`taint.carry: principal`). */
  inheritedFrom?: string[];
  /**
   * The run's value provenance holds its merged record: from the output with this sequence
   * number on, outputs are folded into one record that fails closed (any substantial argument
   * inherits their taint), because the run reached `provenance.maxOutputs` outputs or a host's
   * output could not be kept whole (hooks: the stored output's number, 0 when the store failed).
   */
  provenanceMergedFrom?: number;
}

/** Contract metadata the Gate knows about the called tool. */
export interface ToolFacts {
  /** DARE tool_category, e.g. `read_only`. */
  category?: string;
}

export interface PrepareOptions {
  now?: number;
  tool?: ToolFacts;
  /** The principal's rate limit from its configuration (capability constraint), if any. */
  maxCallsPerMinute?: number;
  /**
   * The parameter that holds the call's data values, when the other parameters are the call's
   * identity set by Warden's own caller, not by the agent's data (the hooks' MCP calls: `server`
   * and `tool` from the host's configuration, the tool's own arguments in `arguments`). Value
   * provenance and flow control then look at that parameter only. Absent: every parameter.
   */
  valuesIn?: string;
}

/** The parameters value provenance and flow control judge (`PrepareOptions.valuesIn`). */
export function judgedValues(parameters: Record<string, unknown> | undefined, valuesIn?: string) {
  const all = parameters ?? {};
  // A caller naming a parameter the call does not have gets every parameter judged (fail closed).
  if (valuesIn === undefined || !Object.hasOwn(all, valuesIn)) return all;
  return { [valuesIn]: all[valuesIn] };
}

/** The context's view of one proposed call, before the decision. */
export interface Prepared {
  readonly request: GateRequest;
  readonly at: number;
  /** Facts before this call. */
  readonly facts: SessionFacts;
  /** Request labels ∪ value provenance ∪ inherited taint ∪ (sticky mode) every label seen in the run. */
  readonly effectiveTaint: TaintLabel[];
  readonly provenance: ProvenanceHit[];
  /** The parameters value provenance and flow control judge (all, or `PrepareOptions.valuesIn`'s). */
  readonly values: Record<string, unknown>;
  readonly behaviour: RuleMatch[];
  /** Whether the call is read-only (allowed under quarantine). */
  readonly readOnly: boolean;
  /** Present when the context alone denies: budgets, rate limit, quarantine, behaviour, principal. */
  readonly preDecision?: { decision: "deny"; reasonCodes: string[] };
  /** Head of the session chain the facts were derived from (`context_hash`). */
  readonly contextHash: Sha256Hash;
  /** `sha256Of` the request as prepared (`request_hash`): hashed once, for the Gate and the chain. */
  readonly requestHash: Sha256Hash;
  /** Length of the request's canonical JSON text, counted against the run's byte cap. */
  readonly requestBytes: number;
  /**
   * The tool-call unit and rate-limit slot this call holds (absent when the context denies).
   * Committed by recordDecision/recordResolution when admitted, released when denied.
   */
  readonly reservation?: Reservation;
}

export interface ResultInput {
  /** Labels the executor attached at the boundary. */
  taintLabels?: readonly TaintLabel[];
  /** The observed output (indexed for provenance, hashed unless `outputHash` is given). */
  data?: unknown;
  /** Data classification level; missing or unknown counts as the highest configured level. */
  classification?: string;
  outputHash?: Sha256Hash;
  tokens?: number;
  cost?: number;
  /** What the execution used (network requests and bytes, filesystem writes): budgets.ts. */
  usage?: ResourceUsage;
}

export interface RecordedResult {
  /** The output's taint: executor labels ∪ the call's taint ∪ boundary labels ∪ output provenance. */
  taint: TaintLabel[];
  classification: string;
  provenance: ProvenanceHit[];
  events: SessionEvent[];
  /**
   * Set on the first result folded because the run's outputs reached `provenance.maxOutputs`
   * (it and later ones are folded into the one fail-closed merged record).
   */
  provenanceMerged?: { maxOutputs: number };
}

/** How a run starts: its owner, its pinned original request, and what it inherits. */
export interface SessionInit {
  runId: string;
  principalId: string;
  originalRequest?: string | undefined;
  now: number;
  /** Budgets of this run, each at most the configured one (src/context/budgets.ts). */
  budgets?: Partial<BudgetLimits> | undefined;
  /** The run this one continues; its taint is carried in. */
  parentRun?: string | undefined;
  inheritedTaint?: readonly TaintLabel[] | undefined;
  /** The principal's runs the inherited taint came from (taint carried at the principal). */
  inheritedFrom?: readonly string[] | undefined;
  /** Data classifications a delegating run had seen (src/messaging). */
  inheritedClassifications?: readonly string[] | undefined;
}

/** What a session shares with the store. */
export interface SessionDeps {
  config: ContextConfig;
  clock: () => number;
  ledger: SyncBudgetLedger;
  principals: Principals;
  /** Told of every call's activity (for idle eviction). */
  onActivity?: (session: Session, now: number) => void;
  /** Told when a new taint source joins the run (taint carried at the principal). */
  onTaint?: (session: Session, now: number) => void;
}

type RecentEvent = SessionFacts["recentEvents"][number];

/**
 * The behavioural window and the recent decisions derived from it. It answers the
 * sequence rules' questions (WindowView) from the newest event of each kind, kept as
 * events arrive: events enter in sequence order and leave oldest first, so when the
 * newest fitting event has left the window, every older one has too.
 */
export class BehaviourWindow implements WindowView {
  readonly #size: number;
  readonly #recentMax: number;
  readonly #rules: ContextConfig["rules"];
  readonly events: WindowEvent[] = [];
  #untrusted: WindowEvent | undefined;
  #sensitiveRead: WindowEvent | undefined;
  #secretAccess: WindowEvent | undefined;
  /** The newest denied call per class risk (keys: the configured risks, so few). */
  readonly #denied = new Map<number, WindowEvent>();
  /**
   * The facts' recent decisions: the last `recentMax` calls still in the window, oldest
   * first. Entries are frozen: snapshots share them, each snapshot gets its own array.
   */
  readonly #recent: RecentEvent[] = [];

  constructor(size: number, recentMax: number, rules: ContextConfig["rules"]) {
    this.#size = size;
    this.#recentMax = recentMax;
    this.#rules = rules;
  }

  lastUntrusted(): WindowEvent | undefined {
    return this.#live(this.#untrusted);
  }

  lastAdmittedWith(signal: "sensitive_read" | "secret_access"): WindowEvent | undefined {
    return this.#live(signal === "sensitive_read" ? this.#sensitiveRead : this.#secretAccess);
  }

  lastDeniedBelow(risk: number): WindowEvent | undefined {
    let best: WindowEvent | undefined;
    // forEach: no iterator or entry pair allocated per call (this runs on every decision).
    this.#denied.forEach((e, r) => {
      if (r < risk && this.#live(e) !== undefined && (best === undefined || e.seq > best.seq)) best = e;
    });
    return best;
  }

  /** `e` if it is still in the window. */
  #live(e: WindowEvent | undefined): WindowEvent | undefined {
    const oldest = this.events[0];
    return e !== undefined && oldest !== undefined && e.seq >= oldest.seq ? e : undefined;
  }

  #index(e: WindowEvent): void {
    const untrusted = untrustedOf(this.#rules);
    if (e.taint.some((t) => untrusted.has(t))) this.#untrusted = e;
    if (ADMITTED.has(e.decision)) {
      if (e.signals.includes("sensitive_read")) this.#sensitiveRead = e;
      if (e.signals.includes("secret_access")) this.#secretAccess = e;
    }
    const r = deniedRisk(e, this.#rules);
    if (r !== undefined) this.#denied.set(r, e);
  }

  recent(): RecentEvent[] {
    return [...this.#recent];
  }

  find(seq: number): WindowEvent | undefined {
    return this.events.find((e) => e.seq === seq);
  }

  push(e: WindowEvent): void {
    this.events.push(e);
    this.#index(e);
    if (e.kind === "call" && this.#recentMax > 0) {
      const r: RecentEvent = {
        seq: e.seq,
        toolClass: e.toolClass,
        action: e.action,
        decision: e.decision!,
        taint: Object.freeze([...e.taint]) as TaintSource[],
      };
      if (e.tool !== undefined) r.tool = e.tool;
      this.#recent.push(Object.freeze(r));
      if (this.#recent.length > this.#recentMax) this.#recent.shift();
    }
    if (this.events.length > this.#size) {
      this.events.splice(0, this.events.length - this.#size);
      // Calls that left the window leave the facts too (sequence numbers only grow).
      const oldest = this.events[0]!.seq;
      while (this.#recent.length > 0 && this.#recent[0]!.seq < oldest) this.#recent.shift();
    }
  }
}
