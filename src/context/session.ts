// Session context (OATS §7.3, C4): per run, an append-only hash-chained log of what was proposed, decided,
// executed and observed, from which the structured facts the policy sees are derived; taint propagation and
// value provenance; the behavioural window; and quarantine, which never lifts within a run and also binds
// the run's principal. Budget units and rate-limit slots are held in a BudgetLedger by reservations. Plain
// data in and out, no I/O, deterministic under an injected clock. The Gate calls, per call:
//   prepare → reserve (synchronously, before any await) → (policy, journal)
//   → recordDecision → [recordResolution] → recordResult.
// A Gate that skips `reserve` still works (the unit is taken at recordDecision), but then
// concurrent calls can overrun a budget: reserve is what makes the check atomic.
import {
  ContextError,
  canonicalJson,
  type Decision,
  type GateRequest,
  type Sha256Hash,
  sha256Hex,
  sha256Of,
  type TaintLabel,
  type TaintSource,
} from "../contracts/index.js";
import { type Candidate, classify, evaluateRules, type WindowEvent } from "./behaviour.js";
import {
  type BudgetLimits,
  budgetFacts,
  exhaustedBudgets,
  NETWORK_TOOL_CLASSES,
  type ResourceUsage,
  RunMeter,
  runBudgetLimits,
  settleCallUsage,
} from "./budgets.js";
import {
  type ChainAnchor,
  countDecision,
  EventChain,
  newCounters,
  type QuarantineCause,
  type QuarantineTrigger,
  type SessionCounters,
  type SessionEvent,
} from "./chain.js";
import { type ContextConfig, matchesAction } from "./config.js";
import {
  BehaviourWindow,
  judgedValues,
  type Prepared,
  type PrepareOptions,
  type RecordedResult,
  type ResultInput,
  type SessionDeps,
  type SessionFacts,
  type SessionInit,
} from "./facts.js";
import { type ProvenanceHit, ProvenanceIndex } from "./provenance.js";
import { boundaryLabels, checkResult, classificationOf } from "./result.js";
import { NETWORK_REQUESTS_REFUSED, type ReserveResult, RunLedger } from "./run-ledger.js";
import { type CallState, callStateOf, checkRunSize, ToolCounts, trackCall } from "./session-calls.js";
import { callWindowEvent, decidedBody, quarantineTrigger, resultWindowEvent } from "./session-records.js";
import { boundTaint, mergeTaint, taintSources } from "./taint.js";
import { copyRequest, defined, finiteNonNegative } from "./util.js";

export class Session {
  readonly runId: string;
  readonly principalId: string;
  readonly parentRun: string | undefined;
  readonly #deps: SessionDeps;
  readonly #config: ContextConfig;
  readonly #clock: () => number;
  readonly #ledger: RunLedger;
  readonly #limits: BudgetLimits; // the configured budgets, lowered by the run's own
  readonly #meter = new RunMeter();
  readonly #chain: EventChain;
  readonly #window: BehaviourWindow;
  readonly #provenance: ProvenanceIndex;
  #bytes = 0; // canonical request bytes proposed (against limits.maxBytesPerRun)
  readonly #counters: SessionCounters = newCounters();
  readonly #perTool = new ToolCounts();
  readonly #levelsSeen = new Set<string>();
  readonly #startedAt: number;
  readonly #originalRequest: string | undefined;
  readonly #originalRequestHash: Sha256Hash | undefined;
  readonly #inherited: TaintLabel[];
  readonly #inheritedFrom: readonly string[] | undefined;
  #tokens = 0;
  #cost = 0;
  #calls = 0;
  #taintSeen: TaintLabel[];
  /** Derived from #taintSeen for snapshots; cleared whenever it changes. */
  #taintSeenCache: readonly TaintSource[] | undefined;
  #quarantine: QuarantineTrigger | undefined;
  #closed = false;

  /** @internal use SessionStore.startRun (or the legacy SessionStore.open) */
  constructor(init: SessionInit, deps: SessionDeps) {
    this.runId = init.runId;
    this.principalId = init.principalId;
    this.parentRun = init.parentRun;
    this.#deps = deps;
    this.#config = deps.config;
    this.#clock = deps.clock;
    this.#limits = runBudgetLimits(deps.config.budgets, init.budgets);
    this.#ledger = new RunLedger(deps.ledger, init.runId, this.#limits.toolCalls);
    this.#chain = new EventChain(deps.config.limits.eventsRetained);
    this.#window = new BehaviourWindow(
      deps.config.rules.windowSize,
      deps.config.recentEventsInFacts,
      deps.config.rules,
    );
    this.#startedAt = init.now;
    this.#originalRequest = init.originalRequest;
    this.#originalRequestHash =
      init.originalRequest === undefined ? undefined : sha256Of(init.originalRequest);
    this.#inherited = mergeTaint(init.inheritedTaint ?? []);
    this.#inheritedFrom = init.inheritedFrom === undefined ? undefined : [...init.inheritedFrom];
    for (const c of init.inheritedClassifications ?? []) this.#levelsSeen.add(c);
    this.#taintSeen = this.#inherited;
    this.#provenance = new ProvenanceIndex(deps.config.provenance);
    if (init.originalRequest !== undefined) this.#provenance.setTrusted(init.originalRequest);
    this.#chain.append(
      defined({
        type: "session.opened" as const,
        runId: init.runId,
        principalId: init.principalId,
        originalRequestHash: this.#originalRequestHash,
        parentRun: init.parentRun,
      }),
      init.now,
    );
  }

  /** Whether the run is quarantined: by a trigger of its own or one of its principal's. */
  get quarantined(): boolean {
    return this.quarantineTrigger !== undefined;
  }

  get quarantineTrigger(): QuarantineTrigger | undefined {
    return this.#quarantine ?? this.#deps.principals.quarantineOf(this.principalId);
  }

  /** The original request pinned at the start of the run (later requests cannot change it). */
  get originalRequest(): string | undefined {
    return this.#originalRequest;
  }

  /** `sha256Of` the pinned original request (hashed once, when the run opened). */
  get originalRequestHash(): Sha256Hash | undefined {
    return this.#originalRequestHash;
  }

  /** Every label seen in the run, inherited ones included (copies): what a child run inherits. */
  taintSeen(): TaintLabel[] {
    return structuredClone(this.#taintSeen);
  }

  /** Whether the run has seen any taint label, inherited ones included. */
  get tainted(): boolean {
    return this.#taintSeen.length > 0;
  }

  /** The retained tail of the session's hash chain, oldest first (copies); see chainAnchor. */
  events(): SessionEvent[] {
    return structuredClone(this.#chain.since(0));
  }

  /** Where the retained tail of `events()` starts (older events were rolled out of memory). */
  chainAnchor(): ChainAnchor {
    return this.#chain.anchor();
  }

  /** Events held in memory (at most twice `limits.eventsRetained`). */
  get retainedEvents(): number {
    return this.#chain.held;
  }

  /** Every string leaf of `value` occurs in the run's original request (false without one). */
  fromRequest(value: unknown): boolean {
    return this.#provenance.fromRequest(value);
  }

  /** Provenance as `prepare` computes it, without record fields and designated outputs' vouched values. */
  vouchedProvenance(value: unknown): ProvenanceHit[] {
    return this.#config.provenance.enabled ? this.#provenance.scan(value, true, true) : [];
  }

  /** A number (an amount) an output's prose dictated (provenance.ts `dictatedNumber`). */
  dictatedNumber(value: number): boolean {
    return this.#config.provenance.enabled && this.#provenance.dictatedNumber(value);
  }

  /** Some leaf of a target has no source the run can name (provenance.ts `unsourced`). */
  unsourced(value: unknown): boolean {
    return this.#config.provenance.enabled && this.#provenance.unsourced(value);
  }

  /** The outputs holding the whole of `value` when the request does not (provenance.ts `wholeValue`). */
  wholeValue(path: string, value: unknown): ProvenanceHit | undefined {
    return this.#config.provenance.enabled ? this.#provenance.wholeValue(path, value) : undefined;
  }

  /** Whether the run recorded any output value provenance could trace a value to. */
  get hasOutputs(): boolean {
    return this.#config.provenance.enabled && this.#provenance.outputs > 0;
  }

  /** Hash of the chain head: what `context_hash` in a decision record refers to. */
  contextHash(): Sha256Hash {
    return this.#chain.head;
  }

  /** Computes everything the context knows about a proposed call. Changes nothing but the run's last activity. */
  prepare(input: GateRequest, opts: PrepareOptions = {}): Prepared {
    this.#open();
    if (this.#counters.proposed >= this.#config.limits.maxCallsPerRun) {
      throw new ContextError("ERR_RUN_FULL", "the run has reached its call limit; start a new run", {
        details: { limit: this.#config.limits.maxCallsPerRun },
      });
    }
    const request = copyRequest(input);
    if (request.runId !== this.runId) {
      throw new ContextError("ERR_CONTEXT_RUN_MISMATCH", "request belongs to another run", {
        details: { runId: this.runId },
      });
    }
    const canonical = canonicalJson(request);
    checkRunSize(this.#config.limits, this.#bytes + canonical.length, this.#perTool, request);
    const now = opts.now ?? this.#clock();
    const cfg = this.#config;
    const values = judgedValues(request.parameters, opts.valuesIn);
    const provenance = cfg.provenance.enabled ? this.#provenance.scan(values) : [];
    const effectiveTaint = boundTaint(
      mergeTaint(
        request.taintLabels,
        ...provenance.map((h) => h.labels),
        this.#inherited,
        cfg.taint.sticky ? this.#taintSeen : [],
      ),
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
    const rateLimit = this.#rateLimit(request.principalId, opts.maxCallsPerMinute);
    if (rateLimit !== undefined && this.#ledger.rateUsed(request.principalId, now) >= rateLimit)
      reasons.push("rate_limited");
    for (const m of behaviour) reasons.push(`behavior_${m.ruleId}`);

    const prepared: Prepared = {
      request,
      at: now,
      facts: this.snapshot(now),
      effectiveTaint,
      provenance,
      values,
      behaviour,
      readOnly,
      ...(reasons.length > 0 ? { preDecision: { decision: "deny" as const, reasonCodes: reasons } } : {}),
      contextHash: this.contextHash(),
      requestHash: sha256Hex(canonical),
      requestBytes: canonical.length,
    };
    trackCall(prepared, { session: this, signals, rateLimit });
    this.#deps.onActivity?.(this, now);
    return prepared;
  }

  /**
   * Takes the call's tool-call unit, its principal's rate-limit slot and, for a network call,
   * a network request (budgets.ts), atomically: call it right after prepare, before any
   * await. A refusal is final (deny it with the reason codes); a reservation is committed or
   * released by recordDecision / recordResolution, given back by the ledger if never settled.
   */
  reserve(prepared: Prepared): ReserveResult {
    const state = this.#state(prepared);
    if (state.reservation !== undefined || state.call !== undefined)
      throw new ContextError("ERR_CONTEXT_ALREADY_RECORDED", "this call already has a reservation");
    const out = this.#ledger.reserve(prepared.request.principalId, prepared.at, state.rateLimit);
    state.reservation = out.ok ? out.reservation : "refused";
    if (!out.ok || !NETWORK_TOOL_CLASSES.has(prepared.request.toolClass)) return out;
    if (this.#meter.holdRequest(this.#limits.networkRequests)) state.netHold = true;
    else this.#release(state, prepared.at);
    return state.netHold === true ? out : NETWORK_REQUESTS_REFUSED;
  }

  /**
   * What the run itself refuses at `now`, whatever the call: its (or its principal's)
   * quarantine unless the call is read-only, and its exhausted budgets, measured as
   * `snapshot` reports them. `prepare` applies it to a new call; the Gate asks again
   * before a call that waited for an approval or a release may run.
   */
  standingDenials(readOnly: boolean, now?: number): string[] {
    const reasons = this.quarantined && !readOnly ? ["quarantined"] : [];
    reasons.push(...exhaustedBudgets(this.#budgets(now ?? this.#clock())));
    return reasons;
  }

  /** Records a call's final decision, settles its reservation, quarantines if called for; returns the events. */
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
    const start = this.#chain.length;
    const { request } = prepared;
    const call = ++this.#calls;
    state.call = call;
    state.decision = decision;
    countDecision(this.#counters, decision);
    this.#bytes += prepared.requestBytes;
    if (state.reservation === undefined) {
      // A Gate that did not reserve: the unit (and, unless refused for its rate, the slot) is taken now.
      const rateLimited = prepared.preDecision?.reasonCodes.includes("rate_limited") ?? false;
      state.reservation = this.#ledger.hold(request.principalId, prepared.at, !rateLimited);
    }
    if (decision === "allow" || decision === "modify") this.#admit(state, request, at);
    else if (decision === "deny") this.#release(state, at);
    else state.reservation = this.#ledger.renew(state.reservation, at);
    // Merging no labels would only copy the set (and drop its cached sources).
    if (prepared.effectiveTaint.length > 0)
      this.#setTaintSeen(mergeTaint(this.#taintSeen, prepared.effectiveTaint), at);
    const event = this.#chain.append(decidedBody(call, prepared, decision, reasonCodes), at);
    this.#pushCall(event.seq, prepared, state, decision);
    const first = prepared.behaviour[0];
    if (first !== undefined) {
      const matched = first.matchedEvents.map((s) => this.#window.find(s)).filter((e) => e !== undefined);
      this.#enterQuarantine(at, { type: "behavioral_rule", reason: first.reason, ruleId: first.ruleId }, [
        ...matched,
        this.#window.events.at(-1)!,
      ]);
    }
    if (decision === "deny") this.#checkDenials(at);
    return this.#chain.since(start);
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
    const start = this.#chain.length;
    const { request } = prepared;
    if (decision === "allow") {
      this.#counters.allowed++;
      this.#admit(state, request, at);
    } else {
      this.#counters.denied++;
      this.#release(state, at);
    }
    const event = this.#chain.append(
      { type: "call.resolved", call: state.call!, decision, reasonCodes: [...reasonCodes] },
      at,
    );
    this.#pushCall(event.seq, prepared, state, decision);
    if (decision === "deny") this.#checkDenials(at);
    this.#deps.onActivity?.(this, at);
    return this.#chain.since(start);
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
    const { labels, outputHash } = checkResult(input);
    const resources = settleCallUsage(this.#meter, state.netHold === true, input.usage);
    state.netHold = false;
    state.resulted = true;
    const at = now ?? this.#clock();
    const start = this.#chain.length;
    const { request } = prepared;
    const cfg = this.#config;
    const classification = classificationOf(cfg.classificationLevels, input.classification);
    this.#levelsSeen.add(classification);
    this.#counters.executed++;
    this.#tokens += input.tokens ?? 0;
    this.#cost += input.cost ?? 0;

    const boundary = boundaryLabels(request, state.call!, cfg.taint.boundaries);
    // Data laundered through a store (written, then read back) keeps its taint.
    const provenance = cfg.provenance.enabled ? this.#provenance.scan(input.data, false) : [];
    const taint = boundTaint(
      mergeTaint(labels, prepared.effectiveTaint, boundary, ...provenance.map((h) => h.labels)),
    );
    const event = this.#chain.append(
      defined({
        type: "call.result" as const,
        call: state.call!,
        outputHash,
        classification,
        taint,
        tokens: input.tokens,
        cost: input.cost,
        resources,
      }),
      at,
    );
    const capped =
      cfg.provenance.enabled &&
      input.data !== undefined &&
      this.#provenance.addOutput(event.seq, input.data, taint, {
        designated: this.#provenance.designates(request.parameters),
      });
    this.#setTaintSeen(mergeTaint(this.#taintSeen, taint), at);
    this.#window.push(resultWindowEvent(event.seq, request, taint));
    this.#deps.onActivity?.(this, at);
    const out: RecordedResult = { taint, classification, provenance, events: this.#chain.since(start) };
    if (capped) out.provenanceMerged = { maxOutputs: cfg.provenance.maxOutputs };
    return out;
  }

  /**
   * Indexes for value provenance the output of a call the Gate did not admit itself: a host's
   * own tool, seen only by its hooks (src/hooks/flow-outputs.ts). `overflowed`: the output
   * could not be kept whole; its labels are folded into the run's merged record, which lends
   * them to any substantial value (fail closed) and sets the facts' `provenanceMergedFrom`.
   * Changes neither the run's taint nor its chain: the host's hooks send taint with each call.
   */
  observeOutput(
    seq: number,
    data: unknown,
    labels: readonly TaintLabel[],
    opts: { overflowed?: boolean; designated?: boolean } = {},
  ): void {
    this.#open();
    if (!this.#config.provenance.enabled) return;
    if (data !== undefined)
      this.#provenance.addOutput(seq, data, labels, { designated: opts.designated === true });
    if (opts.overflowed === true) this.#provenance.addOverflow(seq, labels);
  }

  /** Records usage outside a call's result: tokens, cost, and the §9.2 metered resources (budgets.ts). */
  recordUsage(usage: { tokens?: number; cost?: number } & ResourceUsage, now?: number): SessionEvent[] {
    this.#open();
    finiteNonNegative(usage.tokens, "tokens");
    finiteNonNegative(usage.cost, "cost");
    const { tokens, cost, ...res } = usage;
    this.#meter.add(res);
    this.#tokens += tokens ?? 0;
    this.#cost += cost ?? 0;
    const resources = Object.keys(res).length > 0 ? res : undefined;
    return [
      this.#chain.append(defined({ type: "usage" as const, tokens, cost, resources }), now ?? this.#clock()),
    ];
  }

  /** Quarantines the run and its principal: by hand (`manual`) or for a screened result (the Gate). Idempotent. */
  quarantine(reason: string, now?: number, cause: QuarantineCause = { type: "manual" }): SessionEvent[] {
    this.#open();
    const start = this.#chain.length;
    this.#enterQuarantine(now ?? this.#clock(), { ...cause, reason }, []);
    return this.#chain.since(start);
  }

  /** The facts the policy sees, derived from the log. */
  snapshot(now?: number): SessionFacts {
    const t = now ?? this.#clock();
    const cfg = this.#config;
    const quarantine = this.quarantineTrigger;
    const levels = cfg.classificationLevels.filter((l) => this.#levelsSeen.has(l));
    const budgets = this.#budgets(t);
    const facts: SessionFacts = {
      runId: this.runId,
      counters: { ...this.#counters },
      perToolCalls: this.#perTool.facts(),
      dataClassificationsSeen: levels,
      quarantined: quarantine !== undefined,
      budgets,
      recentEvents: this.#window.recent(),
      principalId: this.principalId,
      taintSeen: [...this.#taintSeenSources()],
    };
    if (this.parentRun !== undefined) facts.parentRun = this.parentRun;
    if (this.parentRun !== undefined || this.#inherited.length > 0)
      facts.inheritedTaint = taintSources(this.#inherited);
    if (this.#inheritedFrom !== undefined) facts.inheritedFrom = [...this.#inheritedFrom];
    const merged = this.#provenance.mergedFrom;
    if (merged !== undefined) facts.provenanceMergedFrom = merged;
    const highest = levels[levels.length - 1];
    if (highest !== undefined) facts.highestClassification = highest;
    if (quarantine !== undefined) facts.quarantineReason = quarantine.reason;
    return facts;
  }

  /** Sources of every label seen in the run, recomputed only when that set changes. */
  #taintSeenSources(): readonly TaintSource[] {
    this.#taintSeenCache ??= taintSources(this.#taintSeen);
    return this.#taintSeenCache;
  }

  #setTaintSeen(labels: TaintLabel[], now?: number): void {
    const before = this.#taintSeenSources().length;
    this.#taintSeen = boundTaint(labels);
    this.#taintSeenCache = undefined;
    // Sources only grow: a longer list is a new source, which the principal carries at once.
    if (this.#taintSeenSources().length !== before) this.#deps.onTaint?.(this, now ?? this.#clock());
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
    return callStateOf(this, prepared);
  }

  #budgets(now: number): SessionFacts["budgets"] {
    return budgetFacts(this.#limits, {
      toolCalls: this.#ledger.admitted(),
      tokens: this.#tokens,
      wallTimeMs: Math.max(0, now - this.#startedAt),
      cost: this.#cost,
      meter: this.#meter,
    });
  }

  #release(state: CallState, at: number): void {
    this.#ledger.release(state.reservation ?? "refused", at);
    state.reservation = "refused";
    if (state.netHold === true) this.#meter.releaseRequest();
    state.netHold = false;
  }

  #admit(state: CallState, request: GateRequest, at: number): void {
    state.admitted = true;
    this.#ledger.admit(state.reservation ?? "refused", request.principalId, at);
    this.#perTool.admit(request);
  }

  #rateLimit(principalId: string, override: number | undefined): number | undefined {
    const r = this.#config.rateLimits;
    return override ?? r.perPrincipal[principalId] ?? r.maxCallsPerMinute;
  }

  #checkDenials(at: number): void {
    const threshold = this.#config.quarantine.denialThreshold;
    if (this.#counters.denied >= threshold) {
      const denials = this.#window.events.filter((e) => e.kind === "call" && e.decision === "deny");
      const reason = `${this.#counters.denied} denials (threshold ${threshold})`;
      this.#enterQuarantine(at, { type: "denial_threshold", reason }, denials);
    }
  }

  #enterQuarantine(
    at: number,
    cause: Pick<QuarantineTrigger, "type" | "reason" | "ruleId">,
    matched: WindowEvent[],
  ): void {
    if (this.#quarantine !== undefined) return;
    const trigger = quarantineTrigger(cause, this.#counters, matched, at);
    this.#quarantine = trigger;
    this.#chain.append({ type: "quarantine", trigger }, at);
    this.#deps.principals.quarantine(this.principalId, this.runId, trigger);
  }

  /** The behavioural window's view of a call's decision (or its resolution). */
  #pushCall(seq: number, prepared: Prepared, state: CallState, decision: Decision): void {
    this.#window.push(callWindowEvent(seq, prepared, state.signals, decision));
  }
}
