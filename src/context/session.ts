// Session context (OATS §7.3, C4): per run, an append-only hash-chained log of what was
// proposed, decided, executed and observed, from which the structured facts the policy
// sees are derived; budgets and per-principal rate limits; taint propagation and value
// provenance; the behavioural window; and quarantine, which never lifts within a run.
// Plain data in and out, no I/O, deterministic under an injected clock. The Gate calls
// prepare → (policy) → recordDecision → [recordResolution] → recordResult per call.
import {
  ContextError,
  type Decision,
  GateRequest,
  type Sha256Hash,
  sha256Of,
  TaintLabel,
  type TaintSource,
} from "../contracts/index.js";
import { type Candidate, classify, evaluateRules, type RuleMatch, type WindowEvent } from "./behaviour.js";
import { type ContextConfig, type ContextConfigInput, matchesAction, parseContextConfig } from "./config.js";
import { type ProvenanceHit, ProvenanceIndex } from "./provenance.js";
import { mergeTaint, taintSources } from "./taint.js";

export interface SessionCounters {
  proposed: number;
  allowed: number;
  denied: number;
  deferred: number;
  executed: number;
  stepUps: number;
  modified: number;
}

export interface BudgetUse {
  used: number;
  limit: number;
}

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
  budgets: { toolCalls?: BudgetUse; tokens?: BudgetUse; wallTimeMs?: BudgetUse; cost?: BudgetUse };
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
  /** Every taint source observed in the run (calls and outputs). */
  taintSeen?: TaintSource[];
}

/** What triggered a quarantine, as journaled. */
export interface QuarantineTrigger {
  type: "behavioral_rule" | "denial_threshold" | "manual";
  ruleId?: string;
  reason: string;
  counters: SessionCounters;
  matchedEvents: WindowEvent[];
  at: string;
}

type EventBody =
  | { type: "session.opened"; runId: string; principalId: string; originalRequestHash?: Sha256Hash }
  | {
      type: "call.decided";
      call: number;
      toolClass: string;
      action: string;
      tool?: string;
      principalId: string;
      requestHash: Sha256Hash;
      decision: Decision;
      reasonCodes: string[];
      taint: TaintLabel[];
      provenance: { path: string; kind: string; outputs: number[] }[];
      behaviour: string[];
    }
  | { type: "call.resolved"; call: number; decision: "allow" | "deny"; reasonCodes: string[] }
  | {
      type: "call.result";
      call: number;
      outputHash?: Sha256Hash;
      classification: string;
      taint: TaintLabel[];
      tokens?: number;
      cost?: number;
    }
  | { type: "usage"; tokens?: number; cost?: number }
  | { type: "quarantine"; trigger: QuarantineTrigger };

/** One link of the session's hash chain. `hash` = sha256 of the canonical event without `hash`. */
export type SessionEvent = EventBody & { seq: number; at: string; prev: Sha256Hash; hash: Sha256Hash };

export const GENESIS_HASH: Sha256Hash = `sha256:${"0".repeat(64)}` as Sha256Hash;

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
}

/** The context's view of one proposed call, before the decision. */
export interface Prepared {
  readonly request: GateRequest;
  readonly at: number;
  /** Facts before this call. */
  readonly facts: SessionFacts;
  /** Request labels ∪ value provenance ∪ (sticky mode) every label seen in the run. */
  readonly effectiveTaint: TaintLabel[];
  readonly provenance: ProvenanceHit[];
  readonly behaviour: RuleMatch[];
  /** Whether the call is read-only (allowed under quarantine). */
  readonly readOnly: boolean;
  /** Present when the context alone denies: budgets, rate limit, quarantine, behaviour, principal. */
  readonly preDecision?: { decision: "deny"; reasonCodes: string[] };
  /** Head of the session chain the facts were derived from (`context_hash`). */
  readonly contextHash: Sha256Hash;
  /** `sha256Of` the request as prepared (`request_hash`): hashed once, for the Gate and the chain. */
  readonly requestHash: Sha256Hash;
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
}

export interface RecordedResult {
  /** The output's taint: executor labels ∪ the call's taint ∪ boundary labels ∪ output provenance. */
  taint: TaintLabel[];
  classification: string;
  provenance: ProvenanceHit[];
  events: SessionEvent[];
}

interface CallState {
  session: Session;
  call?: number;
  decision?: Decision;
  resolved?: boolean;
  admitted?: boolean;
  resulted?: boolean;
  signals: WindowEvent["signals"];
}

const calls = new WeakMap<Prepared, CallState>();

// Events of one decision share a millisecond: the last conversion is remembered.
let isoMs = Number.NaN;
let isoText = "";
const iso = (ms: number): string => {
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
};

type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drops undefined members so the value is canonical-JSON ready (and exact-optional typed). */
function defined<T extends object>(o: T): Defined<T> {
  // A plain loop: this runs for every event and every snapshot, on the decision path.
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const v = (o as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
  return out as Defined<T>;
}

/**
 * A private copy of a request: what structuredClone gives for JSON data (own enumerable
 * members, plain objects and arrays), at a fraction of its cost on the decision path.
 * Anything else — a non-plain object, or nesting deep enough to be a cycle — is left to
 * structuredClone itself.
 */
function copyRequest<T>(v: T): T {
  try {
    return copyData(v, 0) as T;
  } catch {
    return structuredClone(v);
  }
}

const NOT_DATA = new Error("not plain data");

function copyData(v: unknown, depth: number): unknown {
  if (typeof v !== "object" || v === null) {
    if (typeof v === "function" || typeof v === "symbol") throw NOT_DATA;
    return v;
  }
  if (depth > 256) throw NOT_DATA;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyData(v[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw NOT_DATA;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = copyData((v as Record<string, unknown>)[k], depth + 1);
    // An own "__proto__" member stays a member (assignment would set the prototype).
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}

const finiteNonNegative = (n: number | undefined, what: string) => {
  if (n !== undefined && !(Number.isFinite(n) && n >= 0)) {
    throw new ContextError("ERR_CONTEXT_INPUT_INVALID", `${what} must be a finite non-negative number`);
  }
};

/** Per-principal sliding one-minute windows, shared by every run of a store. */
class RateLimiter {
  readonly #log = new Map<string, number[]>();

  count(principalId: string, now: number): number {
    const log = this.#log.get(principalId);
    if (log === undefined) return 0;
    while (log.length > 0 && log[0]! <= now - 60_000) log.shift();
    return log.length;
  }

  note(principalId: string, now: number, limit: number | undefined): void {
    const log = this.#log.get(principalId) ?? [];
    log.push(now);
    // Only the newest `limit` entries can matter; keep memory bounded.
    const keep = Math.max(limit ?? 0, 1);
    if (log.length > keep) log.splice(0, log.length - keep);
    this.#log.set(principalId, log);
  }
}

export class Session {
  readonly runId: string;
  readonly principalId: string;
  readonly #config: ContextConfig;
  readonly #clock: () => number;
  readonly #limiter: RateLimiter;
  readonly #events: SessionEvent[] = [];
  readonly #window: WindowEvent[] = [];
  readonly #provenance: ProvenanceIndex;
  readonly #counters: SessionCounters = {
    proposed: 0,
    allowed: 0,
    denied: 0,
    deferred: 0,
    executed: 0,
    stepUps: 0,
    modified: 0,
  };
  /** Admissions per tool key. A Map: a key may be any tool name, `__proto__` included. */
  readonly #perTool = new Map<string, number>();
  readonly #levelsSeen = new Set<string>();
  readonly #startedAt: number;
  readonly #originalRequest: string | undefined;
  readonly #originalRequestHash: Sha256Hash | undefined;
  #admitted = 0;
  #tokens = 0;
  #cost = 0;
  #calls = 0;
  #taintSeen: TaintLabel[] = [];
  /**
   * The facts' recent decisions: the last `recentEventsInFacts` calls still in #window,
   * oldest first, kept in step with #window by #push rather than rebuilt per snapshot
   * (every call takes one). Entries are frozen: snapshots share them, each snapshot gets
   * its own array.
   */
  readonly #recent: SessionFacts["recentEvents"][number][] = [];
  /** Derived from #taintSeen for snapshots; cleared whenever it changes. */
  #taintSeenCache: readonly TaintSource[] | undefined;
  #quarantine: QuarantineTrigger | undefined;
  #closed = false;

  /** @internal use SessionStore.open */
  constructor(
    init: { runId: string; principalId: string; originalRequest?: string | undefined; now: number },
    config: ContextConfig,
    clock: () => number,
    limiter: RateLimiter,
  ) {
    this.runId = init.runId;
    this.principalId = init.principalId;
    this.#config = config;
    this.#clock = clock;
    this.#limiter = limiter;
    this.#startedAt = init.now;
    this.#originalRequest = init.originalRequest;
    this.#originalRequestHash =
      init.originalRequest === undefined ? undefined : sha256Of(init.originalRequest);
    this.#provenance = new ProvenanceIndex(config.provenance);
    if (init.originalRequest !== undefined) this.#provenance.setTrusted(init.originalRequest);
    this.#append(
      defined({
        type: "session.opened" as const,
        runId: init.runId,
        principalId: init.principalId,
        originalRequestHash: this.#originalRequestHash,
      }),
      init.now,
    );
  }

  get quarantined(): boolean {
    return this.#quarantine !== undefined;
  }

  get quarantineTrigger(): QuarantineTrigger | undefined {
    return this.#quarantine;
  }

  /** The original request pinned at the start of the run (later requests cannot change it). */
  get originalRequest(): string | undefined {
    return this.#originalRequest;
  }

  /** `sha256Of` the pinned original request (hashed once, when the run opened). */
  get originalRequestHash(): Sha256Hash | undefined {
    return this.#originalRequestHash;
  }

  /** The session's hash chain, oldest first (copies). */
  events(): SessionEvent[] {
    return structuredClone(this.#events);
  }

  /** Hash of the chain head: what `context_hash` in a decision record refers to. */
  contextHash(): Sha256Hash {
    return this.#events[this.#events.length - 1]!.hash;
  }

  /** Computes everything the context knows about a proposed call. Changes nothing. */
  prepare(input: GateRequest, opts: PrepareOptions = {}): Prepared {
    this.#open();
    const request = copyRequest(input);
    if (request.runId !== this.runId) {
      throw new ContextError("ERR_CONTEXT_RUN_MISMATCH", "request belongs to another run", {
        details: { runId: this.runId },
      });
    }
    const now = opts.now ?? this.#clock();
    const cfg = this.#config;
    const provenance = cfg.provenance.enabled ? this.#provenance.scan(request.parameters) : [];
    const effectiveTaint = mergeTaint(
      request.taintLabels,
      ...provenance.map((h) => h.labels),
      cfg.taint.sticky ? this.#taintSeen : [],
    );
    const readOnly =
      matchesAction(cfg.quarantine.readOnly, request.toolClass, request.action) ||
      (opts.tool?.category !== undefined && cfg.quarantine.readOnlyCategories.includes(opts.tool.category));
    const signals = classify(request, cfg.rules);
    const candidate: Candidate = {
      toolClass: request.toolClass,
      action: request.action,
      taint: taintSources(effectiveTaint),
      signals,
    };
    const behaviour = evaluateRules(this.#window, candidate, cfg.rules);

    const reasons: string[] = [];
    if (request.principalId !== this.principalId) reasons.push("run_principal_mismatch");
    reasons.push(...this.standingDenials(readOnly, now));
    const limit = this.#rateLimit(request.principalId, opts.maxCallsPerMinute);
    if (limit !== undefined && this.#limiter.count(request.principalId, now) >= limit)
      reasons.push("rate_limited");
    for (const m of behaviour) reasons.push(`behavior_${m.ruleId}`);

    const prepared: Prepared = {
      request,
      at: now,
      facts: this.snapshot(now),
      effectiveTaint,
      provenance,
      behaviour,
      readOnly,
      ...(reasons.length > 0 ? { preDecision: { decision: "deny" as const, reasonCodes: reasons } } : {}),
      contextHash: this.contextHash(),
      requestHash: sha256Of(request),
    };
    calls.set(prepared, { session: this, signals });
    return prepared;
  }

  /**
   * What the run itself refuses at `now`, whatever the call: its quarantine (unless the
   * call is read-only) and its exhausted budgets, measured as `snapshot` reports them.
   * `prepare` applies it to a new call; the Gate asks again before a call that waited
   * for an approval or a release may run.
   */
  standingDenials(readOnly: boolean, now?: number): string[] {
    const t = now ?? this.#clock();
    const reasons: string[] = [];
    if (this.#quarantine !== undefined && !readOnly) reasons.push("quarantined");
    const b = this.#config.budgets;
    if (b.toolCalls !== undefined && this.#admitted >= b.toolCalls)
      reasons.push("budget_tool_calls_exhausted");
    if (b.tokens !== undefined && this.#tokens >= b.tokens) reasons.push("budget_tokens_exhausted");
    if (b.wallTimeMs !== undefined && Math.max(0, t - this.#startedAt) >= b.wallTimeMs)
      reasons.push("budget_wall_time_exhausted");
    if (b.cost !== undefined && this.#cost >= b.cost) reasons.push("budget_cost_exhausted");
    return reasons;
  }

  /**
   * Records the Gate's final decision for a prepared call; applies the quarantine a
   * behavioural match or the denial threshold calls for. Returns the appended events
   * (the Gate journals quarantine events).
   */
  recordDecision(
    prepared: Prepared,
    decision: Decision,
    reasonCodes: readonly string[],
    now?: number,
  ): SessionEvent[] {
    const state = this.#state(prepared);
    if (state.call !== undefined) {
      throw new ContextError("ERR_CONTEXT_ALREADY_RECORDED", "this call's decision is already recorded");
    }
    const at = now ?? prepared.at;
    const start = this.#events.length;
    const { request } = prepared;
    const call = ++this.#calls;
    state.call = call;
    state.decision = decision;
    this.#counters.proposed++;
    if (decision === "allow") this.#counters.allowed++;
    else if (decision === "deny") this.#counters.denied++;
    else if (decision === "defer") this.#counters.deferred++;
    else if (decision === "step_up") this.#counters.stepUps++;
    else this.#counters.modified++;
    if (decision === "allow" || decision === "modify") this.#admit(state, request);
    const rateLimited = prepared.preDecision?.reasonCodes.includes("rate_limited") ?? false;
    if (!rateLimited) {
      this.#limiter.note(request.principalId, prepared.at, this.#rateLimit(request.principalId, undefined));
    }
    this.#setTaintSeen(mergeTaint(this.#taintSeen, prepared.effectiveTaint));
    const event = this.#append(
      defined({
        type: "call.decided" as const,
        call,
        toolClass: request.toolClass,
        action: request.action,
        tool: request.tool,
        principalId: request.principalId,
        requestHash: prepared.requestHash,
        decision,
        reasonCodes: [...reasonCodes],
        taint: prepared.effectiveTaint,
        provenance: prepared.provenance.map((h) => ({ path: h.path, kind: h.kind, outputs: h.outputs })),
        behaviour: prepared.behaviour.map((m) => m.ruleId),
      }),
      at,
    );
    this.#pushCall(event.seq, prepared, state, decision);
    const first = prepared.behaviour[0];
    if (first !== undefined) {
      const matched = first.matchedEvents.map((s) => this.#windowEvent(s)).filter((e) => e !== undefined);
      this.#enterQuarantine(
        "behavioral_rule",
        first.reason,
        at,
        [...matched, this.#window.at(-1)!],
        first.ruleId,
      );
    }
    if (decision === "deny") this.#checkDenials(at);
    return this.#events.slice(start);
  }

  /** Records how a step_up or defer ended: approved (allow) or denied (including timeouts). */
  recordResolution(
    prepared: Prepared,
    decision: "allow" | "deny",
    reasonCodes: readonly string[],
    now?: number,
  ): SessionEvent[] {
    const state = this.#state(prepared);
    if (state.decision !== "step_up" && state.decision !== "defer") {
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "only a step_up or defer decision can be resolved");
    }
    if (state.resolved)
      throw new ContextError("ERR_CONTEXT_ALREADY_RECORDED", "this call is already resolved");
    state.resolved = true;
    const at = now ?? this.#clock();
    const start = this.#events.length;
    const { request } = prepared;
    if (decision === "allow") {
      this.#counters.allowed++;
      this.#admit(state, request);
    } else {
      this.#counters.denied++;
    }
    const event = this.#append(
      { type: "call.resolved", call: state.call!, decision, reasonCodes: [...reasonCodes] },
      at,
    );
    this.#pushCall(event.seq, prepared, state, decision);
    if (decision === "deny") this.#checkDenials(at);
    return this.#events.slice(start);
  }

  /**
   * Records the observed output of an admitted call: its taint (Ari PROPAGATE: the call's
   * taint plus the boundary's own), classification, hash, usage; indexes it for provenance.
   */
  recordResult(prepared: Prepared, input: ResultInput, now?: number): RecordedResult {
    const state = this.#state(prepared);
    if (!state.admitted) {
      throw new ContextError(
        "ERR_CONTEXT_NOT_ADMITTED",
        "a result was reported for a call that was not admitted",
      );
    }
    if (state.resulted)
      throw new ContextError("ERR_CONTEXT_ALREADY_RECORDED", "this call's result is already recorded");
    const labels = TaintLabel.array()
      .max(256)
      .safeParse(input.taintLabels ?? []);
    if (!labels.success)
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "result taint labels are invalid");
    finiteNonNegative(input.tokens, "tokens");
    finiteNonNegative(input.cost, "cost");
    let outputHash = input.outputHash;
    if (outputHash === undefined && input.data !== undefined) {
      try {
        outputHash = sha256Of(input.data);
      } catch (err) {
        throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "result data is not JSON data", { cause: err });
      }
    }
    state.resulted = true;
    const at = now ?? this.#clock();
    const start = this.#events.length;
    const { request } = prepared;
    const cfg = this.#config;
    const levels = cfg.classificationLevels;
    const classification =
      input.classification !== undefined && levels.includes(input.classification)
        ? input.classification
        : levels[levels.length - 1]!;
    this.#levelsSeen.add(classification);
    this.#counters.executed++;
    this.#tokens += input.tokens ?? 0;
    this.#cost += input.cost ?? 0;

    const origin = request.tool ?? `${request.toolClass}:${request.action}`;
    const boundary: TaintLabel[] = [{ source: "tool-output", origin, propagatedFrom: `call:${state.call}` }];
    const source = cfg.taint.boundaries[request.toolClass];
    if (source !== undefined) {
      boundary.push({
        source,
        origin: hostOf(request.parameters) ?? origin,
        propagatedFrom: `call:${state.call}`,
      });
    }
    // Data laundered through a store (written, then read back) keeps its taint.
    const provenance = cfg.provenance.enabled ? this.#provenance.scan(input.data, false) : [];
    const taint = mergeTaint(
      labels.data,
      prepared.effectiveTaint,
      boundary,
      ...provenance.map((h) => h.labels),
    );
    const event = this.#append(
      defined({
        type: "call.result" as const,
        call: state.call!,
        outputHash,
        classification,
        taint,
        tokens: input.tokens,
        cost: input.cost,
      }),
      at,
    );
    if (cfg.provenance.enabled && input.data !== undefined)
      this.#provenance.addOutput(event.seq, input.data, taint);
    this.#setTaintSeen(mergeTaint(this.#taintSeen, taint));
    this.#push(
      defined({
        seq: event.seq,
        kind: "result" as const,
        toolClass: request.toolClass,
        action: request.action,
        tool: request.tool,
        taint: taintSources(taint),
        signals: [],
      }),
    );
    return { taint, classification, provenance, events: this.#events.slice(start) };
  }

  /** Records model usage (tokens, cost) that is not tied to a tool call. */
  recordUsage(usage: { tokens?: number; cost?: number }, now?: number): SessionEvent[] {
    this.#open();
    finiteNonNegative(usage.tokens, "tokens");
    finiteNonNegative(usage.cost, "cost");
    this.#tokens += usage.tokens ?? 0;
    this.#cost += usage.cost ?? 0;
    return [
      this.#append(
        defined({ type: "usage" as const, tokens: usage.tokens, cost: usage.cost }),
        now ?? this.#clock(),
      ),
    ];
  }

  /** Quarantines the run by hand (an operator, the trust layer). Idempotent; never lifted. */
  quarantine(reason: string, now?: number): SessionEvent[] {
    this.#open();
    const start = this.#events.length;
    this.#enterQuarantine("manual", reason, now ?? this.#clock(), []);
    return this.#events.slice(start);
  }

  /** The facts the policy sees, derived from the log. */
  snapshot(now?: number): SessionFacts {
    const t = now ?? this.#clock();
    const cfg = this.#config;
    const levels = cfg.classificationLevels.filter((l) => this.#levelsSeen.has(l));
    const b = cfg.budgets;
    const budgets: SessionFacts["budgets"] = {};
    if (b.toolCalls !== undefined) budgets.toolCalls = { used: this.#admitted, limit: b.toolCalls };
    if (b.tokens !== undefined) budgets.tokens = { used: this.#tokens, limit: b.tokens };
    if (b.wallTimeMs !== undefined)
      budgets.wallTimeMs = { used: Math.max(0, t - this.#startedAt), limit: b.wallTimeMs };
    if (b.cost !== undefined) budgets.cost = { used: this.#cost, limit: b.cost };
    const facts: SessionFacts = {
      runId: this.runId,
      counters: { ...this.#counters },
      // fromEntries defines members (never sets a prototype) and, unlike spreading a
      // null-prototype dictionary, is cheap: this runs on every call.
      perToolCalls: Object.fromEntries(this.#perTool),
      dataClassificationsSeen: levels,
      quarantined: this.#quarantine !== undefined,
      budgets,
      recentEvents: [...this.#recent],
      principalId: this.principalId,
      taintSeen: [...this.#taintSeenSources()],
    };
    const highest = levels[levels.length - 1];
    if (highest !== undefined) facts.highestClassification = highest;
    if (this.#quarantine !== undefined) facts.quarantineReason = this.#quarantine.reason;
    return facts;
  }

  /** Sources of every label seen in the run, recomputed only when that set changes. */
  #taintSeenSources(): readonly TaintSource[] {
    this.#taintSeenCache ??= taintSources(this.#taintSeen);
    return this.#taintSeenCache;
  }

  #setTaintSeen(labels: TaintLabel[]): void {
    this.#taintSeen = labels;
    this.#taintSeenCache = undefined;
  }

  /** @internal */
  close(): void {
    this.#closed = true;
  }

  #open(): void {
    if (this.#closed) throw new ContextError("ERR_CONTEXT_SESSION_CLOSED", "the run has ended");
  }

  #state(prepared: Prepared): CallState {
    this.#open();
    const state = calls.get(prepared);
    if (state === undefined || state.session !== this) {
      throw new ContextError("ERR_CONTEXT_FOREIGN_PREPARATION", "the call was not prepared by this session");
    }
    return state;
  }

  #admit(state: CallState, request: GateRequest): void {
    state.admitted = true;
    this.#admitted++;
    const key = request.tool ?? `${request.toolClass}:${request.action}`;
    this.#perTool.set(key, (this.#perTool.get(key) ?? 0) + 1);
  }

  #rateLimit(principalId: string, override: number | undefined): number | undefined {
    const r = this.#config.rateLimits;
    return override ?? r.perPrincipal[principalId] ?? r.maxCallsPerMinute;
  }

  #checkDenials(at: number): void {
    const threshold = this.#config.quarantine.denialThreshold;
    if (this.#counters.denied >= threshold) {
      const denials = this.#window.filter((e) => e.kind === "call" && e.decision === "deny");
      this.#enterQuarantine(
        "denial_threshold",
        `${this.#counters.denied} denials (threshold ${threshold})`,
        at,
        denials,
      );
    }
  }

  #enterQuarantine(
    type: QuarantineTrigger["type"],
    reason: string,
    at: number,
    matched: WindowEvent[],
    ruleId?: string,
  ): void {
    if (this.#quarantine !== undefined) return;
    const trigger: QuarantineTrigger = defined({
      type,
      ruleId,
      reason,
      counters: { ...this.#counters },
      matchedEvents: structuredClone(matched),
      at: iso(at),
    });
    this.#quarantine = trigger;
    this.#append({ type: "quarantine", trigger }, at);
  }

  #windowEvent(seq: number): WindowEvent | undefined {
    return this.#window.find((e) => e.seq === seq);
  }

  #push(e: WindowEvent): void {
    this.#window.push(e);
    const n = this.#config.recentEventsInFacts;
    if (e.kind === "call" && n > 0) {
      this.#recent.push(
        Object.freeze(
          defined({
            seq: e.seq,
            toolClass: e.toolClass,
            action: e.action,
            tool: e.tool,
            decision: e.decision!,
            taint: Object.freeze([...e.taint]) as TaintSource[],
          }),
        ),
      );
      if (this.#recent.length > n) this.#recent.shift();
    }
    const size = this.#config.rules.windowSize;
    if (this.#window.length > size) {
      this.#window.splice(0, this.#window.length - size);
      // Calls that left the window leave the facts too (sequence numbers only grow).
      const oldest = this.#window[0]!.seq;
      while (this.#recent.length > 0 && this.#recent[0]!.seq < oldest) this.#recent.shift();
    }
  }

  /** The behavioural window's view of a call's decision (or its resolution). */
  #pushCall(seq: number, prepared: Prepared, state: CallState, decision: Decision): void {
    const { request } = prepared;
    this.#push(
      defined({
        seq,
        kind: "call" as const,
        toolClass: request.toolClass,
        action: request.action,
        tool: request.tool,
        decision,
        taint: taintSources(prepared.effectiveTaint),
        signals: state.signals,
      }),
    );
  }

  #append(body: EventBody, at: number): SessionEvent {
    const prev = this.#events.length === 0 ? GENESIS_HASH : this.#events[this.#events.length - 1]!.hash;
    // `body` is always a fresh literal of this class's own: it becomes the event in place
    // instead of being copied twice (once without the hash, once with it).
    const unsigned = Object.assign(body, { seq: this.#events.length, at: iso(at), prev });
    const event = Object.assign(unsigned, { hash: sha256Of(unsigned) }) as SessionEvent;
    this.#events.push(event);
    return event;
  }
}

function hostOf(parameters: GateRequest["parameters"]): string | undefined {
  const url = parameters.url;
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).hostname || undefined;
  } catch {
    return undefined;
  }
}

export type ChainVerification =
  | { ok: true; head: Sha256Hash; length: number }
  | { ok: false; code: "seq_gap" | "prev_mismatch" | "hash_mismatch"; seq: number; message: string };

/** Recomputes a session chain (e.g. from the journal): every event hashes its predecessor. */
export function verifyContextChain(events: readonly SessionEvent[]): ChainVerification {
  let prev = GENESIS_HASH;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.seq !== i)
      return { ok: false, code: "seq_gap", seq: i, message: `expected seq ${i}, found ${e.seq}` };
    if (e.prev !== prev)
      return { ok: false, code: "prev_mismatch", seq: i, message: `event ${i} does not link to ${i - 1}` };
    const { hash, ...unsigned } = e;
    let actual: string;
    try {
      actual = sha256Of(unsigned);
    } catch {
      return { ok: false, code: "hash_mismatch", seq: i, message: `event ${i} is not canonical JSON` };
    }
    if (actual !== hash)
      return { ok: false, code: "hash_mismatch", seq: i, message: `event ${i} was altered` };
    prev = hash;
  }
  return { ok: true, head: prev, length: events.length };
}

export interface SessionStoreOptions {
  /** Milliseconds since the epoch; injectable for tests. Default Date.now. */
  clock?: () => number;
}

/** All runs of one Gate: sessions by run id, and the per-principal rate limiter they share. */
export class SessionStore {
  readonly config: ContextConfig;
  readonly #clock: () => number;
  readonly #limiter = new RateLimiter();
  readonly #sessions = new Map<string, Session>();
  /** Ended runs: a run id is never reused, so an ended run's quarantine cannot be shed. */
  readonly #ended = new Set<string>();

  constructor(config: ContextConfigInput | ContextConfig = {}, opts: SessionStoreOptions = {}) {
    this.config = parseContextConfig(config);
    this.#clock = opts.clock ?? Date.now;
  }

  /**
   * The session of the request's run, opened on first use bound to its principal and
   * original request. Later requests cannot rebind either.
   */
  open(request: Pick<GateRequest, "runId" | "principalId" | "originalRequest">, now?: number): Session {
    const existing = this.#sessions.get(request.runId);
    if (existing !== undefined) return existing;
    if (this.#ended.has(request.runId)) {
      throw new ContextError("ERR_CONTEXT_SESSION_CLOSED", "the run has ended", {
        details: { runId: request.runId },
      });
    }
    const parsed = GateRequest.pick({ runId: true, principalId: true, originalRequest: true }).safeParse(
      request,
    );
    if (!parsed.success)
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "invalid run id, principal or original request");
    const session = new Session(
      {
        runId: parsed.data.runId,
        principalId: parsed.data.principalId,
        originalRequest: parsed.data.originalRequest,
        now: now ?? this.#clock(),
      },
      this.config,
      this.#clock,
      this.#limiter,
    );
    this.#sessions.set(request.runId, session);
    return session;
  }

  get(runId: string): Session | undefined {
    return this.#sessions.get(runId);
  }

  /** Ends a run: its session is dropped and the run id cannot be opened again. */
  end(runId: string): void {
    const s = this.#sessions.get(runId);
    if (s !== undefined) s.close();
    this.#sessions.delete(runId);
    this.#ended.add(runId);
  }
}

export function createSessionStore(
  config?: ContextConfigInput | ContextConfig,
  opts?: SessionStoreOptions,
): SessionStore {
  return new SessionStore(config, opts);
}
