// The Gate: the reference monitor (OATS §7, Ari Kernel §5–§10). It takes a structured
// proposal, never natural language, and returns one of five decisions that no model
// output can negotiate. Order of work, each step fail-closed:
//   parse → principal (from configuration) → contract (typed parameters; anything the
//   contract cannot express is denied before policy) → session context (taint,
//   provenance, budgets, rate limits, quarantine, behavioural rules) → policy →
//   decision record committed to the journal → only then a ticket.
// step_up and defer block (in `authorize`) until resolved; their resolution is journaled.

import type { Prepared, Session, SessionEvent, SessionStore } from "../context/index.js";
import { createSessionStore } from "../context/index.js";
import {
  buildHitlDecision,
  type Decision,
  GateRequest,
  type HITLDecisionRecord,
  isParsedGateRequest,
  type Sha256Hash,
  sha256Of,
  type TaintLabel,
  uuidv7,
} from "../contracts/index.js";
import { type KeyPair, sign } from "../crypto/index.js";
import type { AppendInput, JournalEntry } from "../journal/index.js";
import type {
  Capability,
  MatchedRule,
  ModifyChange,
  Obligation,
  PolicyInput,
  PolicyOutcome,
  PolicyTool,
} from "../policy/index.js";
import {
  type CompiledTool,
  classifyContract,
  contractToCanonical,
  type ToolClassification,
  type ValidateOptions,
  validateArgs,
} from "../tools/index.js";
import type { Approvals, ApprovalVerdict, Approver } from "./approvals.js";
import { BoundedMap } from "./bounded-map.js";
import { buildDareDecision, dareRunId, runTraceId } from "./dare-mapping.js";
import { DeferQueue, type DeferResolution } from "./defer.js";
import { GATE_DECISION, GATE_RESOLUTION, GATE_RESULT } from "./events.js";
import { ExecutionTicket } from "./ticket.js";

/** What the Gate needs from a policy engine (src/policy's engine satisfies it). */
export interface GatePolicy {
  evaluate(input: PolicyInput): PolicyOutcome;
  readonly policyBundleHash: Sha256Hash;
  /** What the bundle is made of (src/policy's PolicyBundle has it); journaled on first use. */
  readonly summary?: { sources: readonly { name: string; kind: string; rules: number }[] };
}

export interface GateJournal {
  append(input: AppendInput): Promise<JournalEntry>;
}

export interface PrincipalConfig {
  id: string;
  roles: string[];
  capabilities?: Capability[];
  maxCallsPerMinute?: number;
}

export interface ContractLookup {
  get(name: string): CompiledTool | undefined;
}

export interface GateOptions {
  policy: GatePolicy;
  journal: GateJournal;
  /** Ed25519 key that signs HITL decision records (usually the journal key). */
  signer: KeyPair;
  /** Principals by id, from configuration. An unknown principal is denied. */
  principals: Readonly<Record<string, PrincipalConfig>> | ((id: string) => PrincipalConfig | undefined);
  contracts?: ContractLookup;
  /** Deny calls that name no contract (default false: Ari-style tool classes are allowed). */
  requireContract?: boolean;
  /**
   * The tool class and action a contract stands for (default: from its backend, see
   * `classifyContract`). A request naming a contract must carry exactly these, so a POST
   * contract cannot be presented to policy as a read.
   */
  classify?: (tool: CompiledTool) => ToolClassification;
  validateOptions?: ValidateOptions;
  sessions?: SessionStore;
  approvals?: Approvals;
  defer?: DeferQueue;
  tenantId?: string;
  environment?: "dev" | "test" | "prod";
  ticketTtlMs?: number;
  trustScore?: (principalId: string, runId: string) => number | undefined;
  clock?: () => number;
}

export type GateFault = "journal_unavailable" | "policy_error";

export interface GateOutcome {
  /** Null only when the request could not be parsed at all. */
  decisionId: string | null;
  /** Final decision: allow | modify | deny after resolution (`authorize`), or the policy's own (`evaluate`). */
  decision: Decision;
  /** What policy (or the pre-policy checks) decided before any approval or deferral. */
  policyDecision: Decision;
  reasonCodes: string[];
  matchedRules: MatchedRule[];
  obligations: Obligation[];
  /** The parameters that may be executed (rewritten ones for modify). */
  parameters: Record<string, unknown>;
  originalParameters?: Record<string, unknown>;
  changes?: ModifyChange[];
  taint: TaintLabel[];
  stepUp?: { approverRole: string; timeoutMs: number };
  defer?: { timeoutMs: number };
  approval?: { outcome: ApprovalVerdict["outcome"]; approver?: string; hitl?: HITLDecisionRecord };
  /** Present for allow and modify: the only thing an executor accepts. */
  ticket?: ExecutionTicket;
  /** Journal sequence numbers written for this decision. */
  journalSeqs: number[];
  policyBundleHash?: Sha256Hash;
  fault?: GateFault;
}

interface Pending {
  prepared: Prepared;
  session: Session;
  decisionId: string;
  traceId: string;
}

const APPROVAL_DEFAULT_MS = 300_000;
const MAX_PENDING_RESULTS = 10_000;

export class Gate {
  readonly #o: GateOptions;
  readonly #sessions: SessionStore;
  readonly #defer: DeferQueue;
  readonly #clock: () => number;
  /** Admitted calls awaiting recordResult; results never reported must not accumulate, keep the newest. */
  readonly #pending = new BoundedMap<string, Pending>(MAX_PENDING_RESULTS);
  #bundleLoaded: Promise<void> | undefined;

  constructor(options: GateOptions) {
    this.#o = options;
    this.#sessions = options.sessions ?? createSessionStore();
    this.#defer = options.defer ?? new DeferQueue();
    this.#clock = options.clock ?? Date.now;
  }

  get sessions(): SessionStore {
    return this.#sessions;
  }

  get deferQueue(): DeferQueue {
    return this.#defer;
  }

  /** Decision only (for hosts that execute themselves): step_up and defer are returned, not awaited. */
  evaluate(raw: unknown): Promise<GateOutcome> {
    return this.#decide(raw, false);
  }

  /** Decision plus resolution: blocks on step_up/defer; allow/modify carry an execution ticket. */
  authorize(raw: unknown, signal?: AbortSignal): Promise<GateOutcome> {
    return this.#decide(raw, true, signal);
  }

  /**
   * Reports the observed output of an executed call: its taint propagates into the
   * session (and value-level provenance), and the result is journaled.
   */
  async recordResult(
    decisionId: string,
    result: {
      taintLabels?: TaintLabel[];
      data?: unknown;
      classification?: string;
      outputHash?: Sha256Hash;
      tokens?: number;
      cost?: number;
    },
  ): Promise<{ taint: TaintLabel[]; classification: string }> {
    const p = this.#pending.get(decisionId);
    if (!p) throw new Error("recordResult: unknown or already reported decision id");
    this.#pending.delete(decisionId);
    const input: Parameters<Session["recordResult"]>[1] = {};
    if (result.taintLabels !== undefined) input.taintLabels = result.taintLabels;
    if (result.data !== undefined) input.data = result.data;
    if (result.classification !== undefined) input.classification = result.classification;
    if (result.outputHash !== undefined) input.outputHash = result.outputHash;
    if (result.tokens !== undefined) input.tokens = result.tokens;
    if (result.cost !== undefined) input.cost = result.cost;
    const rec = p.session.recordResult(p.prepared, input, this.#clock());
    await this.#o.journal.append({
      type: GATE_RESULT,
      run_id: p.prepared.request.runId,
      trace_id: p.traceId,
      body: {
        decision_id: decisionId,
        ...(input.outputHash !== undefined ? { output_hash: input.outputHash } : {}),
        classification: rec.classification,
        taint: rec.taint,
      },
    });
    await this.#journalQuarantine(rec.events, p.prepared.request.runId, p.traceId);
    return { taint: rec.taint, classification: rec.classification };
  }

  /** The bundle load is a journal event, written once before the first decision that cites its hash. */
  #journalBundle(): Promise<void> {
    if (!this.#bundleLoaded) {
      const policy = this.#o.policy;
      this.#bundleLoaded = this.#o.journal
        .append({
          type: "warden.policy.bundle_loaded",
          body: {
            policy_bundle_hash: policy.policyBundleHash,
            ...(policy.summary
              ? {
                  sources: policy.summary.sources.map((x) => ({
                    name: x.name,
                    kind: x.kind,
                    rules: x.rules,
                  })),
                }
              : {}),
          },
        })
        .then(
          () => undefined,
          (err: unknown) => {
            this.#bundleLoaded = undefined; // try again on the next decision
            throw err;
          },
        );
    }
    return this.#bundleLoaded;
  }

  #principal(id: string): PrincipalConfig | undefined {
    const p = this.#o.principals;
    if (typeof p === "function") return p(id);
    return Object.hasOwn(p, id) ? p[id] : undefined;
  }

  async #decide(raw: unknown, wait: boolean, signal?: AbortSignal): Promise<GateOutcome> {
    // A request from parseGateRequest was parsed at the edge and cannot have changed since
    // (deep-frozen, unforgeable mark); anything else is parsed here.
    const parsed = isParsedGateRequest(raw)
      ? { success: true as const, data: raw }
      : GateRequest.safeParse(raw);
    if (!parsed.success) {
      return {
        decisionId: null,
        decision: "deny",
        policyDecision: "deny",
        reasonCodes: ["request_invalid"],
        matchedRules: [],
        obligations: [],
        parameters: {},
        taint: [],
        journalSeqs: [],
      };
    }
    const request = parsed.data;
    const decisionId = uuidv7();
    const traceId = request.traceId ?? runTraceId(request.runId);
    const now = this.#clock();
    const bundleHash = this.#o.policy.policyBundleHash;

    // Pre-policy checks that need no session: identity and the contract.
    const principal = this.#principal(request.principalId);
    let tool: CompiledTool | undefined;
    let early: string | undefined;
    let parameters: Record<string, unknown> = request.parameters;
    if (!principal || principal.id !== request.principalId) early = "principal_unknown";
    else if (request.tool !== undefined) {
      tool = this.#o.contracts?.get(request.tool);
      const cls = tool ? (this.#o.classify ?? classifyContract)(tool) : undefined;
      if (!tool) early = "tool_unknown";
      else if (cls && (cls.toolClass !== request.toolClass || cls.action !== request.action)) {
        early = "contract_class_mismatch";
      } else {
        const v = validateArgs(tool, request.parameters, this.#o.validateOptions ?? {});
        if (!v.ok) early = `contract_param_invalid:${v.arg ?? "*"}:${v.rule}`;
        else parameters = { ...v.args };
      }
    } else if (this.#o.requireContract) early = "contract_required";

    const policyTool: PolicyTool | undefined = tool ? toPolicyTool(tool) : undefined;
    const checked: GateRequest = { ...request, parameters: parameters as GateRequest["parameters"] };

    // A run belongs to the principal that opened it. Another principal's call is refused
    // here, before the session, so it cannot move that run's counters towards quarantine.
    const owner = this.#sessions.get(request.runId)?.principalId;
    if (early === undefined && owner !== undefined && owner !== request.principalId)
      early = "run_principal_mismatch";

    let session: Session | undefined;
    let prepared: Prepared | undefined;
    if (early === undefined) {
      try {
        session = this.#sessions.open(
          {
            runId: checked.runId,
            principalId: checked.principalId,
            ...(checked.originalRequest !== undefined ? { originalRequest: checked.originalRequest } : {}),
          },
          now,
        );
        prepared = session.prepare(checked, {
          now,
          ...(policyTool?.category !== undefined ? { tool: { category: policyTool.category } } : {}),
          ...(principal?.maxCallsPerMinute !== undefined
            ? { maxCallsPerMinute: principal.maxCallsPerMinute }
            : {}),
        });
      } catch {
        early = "session_unavailable";
      }
    }

    let outcome: PolicyOutcome;
    let fault: GateFault | undefined;
    if (early !== undefined) {
      outcome = denyOutcome([early], bundleHash);
    } else if (prepared!.preDecision) {
      outcome = denyOutcome(prepared!.preDecision.reasonCodes, bundleHash, "context");
    } else {
      const input: PolicyInput = {
        request: checked,
        principal: {
          id: principal!.id,
          roles: [...principal!.roles],
          ...(principal!.capabilities ? { capabilities: principal!.capabilities } : {}),
        },
        taint: prepared!.effectiveTaint,
        session: prepared!.facts,
        ...(policyTool ? { tool: policyTool } : {}),
      };
      const trust = this.#o.trustScore?.(request.principalId, request.runId);
      if (trust !== undefined) input.trustScore = trust;
      try {
        outcome = this.#o.policy.evaluate(input);
      } catch {
        fault = "policy_error";
        outcome = denyOutcome(["policy_error"], bundleHash);
      }
      // A policy rewrite is input to the contract like any other: a rewrite the contract
      // cannot express (a redaction marker in an integer, a `set` path outside the
      // pattern) is denied, never executed.
      if (tool && outcome.modify && outcome.decision !== "deny") {
        const v = validateArgs(tool, outcome.modify.parameters, this.#o.validateOptions ?? {});
        if (!v.ok) outcome = denyOutcome([`contract_modify_invalid:${v.arg ?? "*"}:${v.rule}`], bundleHash);
        else outcome = { ...outcome, modify: { ...outcome.modify, parameters: { ...v.args } } };
      }
      // A contract that demands human approval gets it, whatever the policy allowed.
      if (policyTool?.humanApproval && (outcome.decision === "allow" || outcome.decision === "modify")) {
        outcome = {
          ...outcome,
          decision: "step_up",
          reasonCodes: [...outcome.reasonCodes, "contract_requires_approval"],
          stepUp: outcome.stepUp ?? { approverRole: "approver", timeoutMs: APPROVAL_DEFAULT_MS },
        };
      }
    }

    const effectiveTaint = prepared?.effectiveTaint ?? request.taintLabels;
    const contextHash = prepared?.contextHash ?? sha256Of({ runId: request.runId, state: "no_session" });
    const requestHash = prepared?.requestHash ?? sha256Of(checked);
    // A rewrite applies to whatever may run: modify, and step_up/defer once approved or
    // released (a contract's human_approval must not shed the policy's redaction).
    const rewrite = outcome.decision !== "deny" ? outcome.modify : undefined;
    const base: GateOutcome = {
      decisionId,
      decision: outcome.decision,
      policyDecision: outcome.decision,
      reasonCodes: outcome.reasonCodes,
      matchedRules: outcome.matchedRules,
      obligations: outcome.obligations,
      parameters: rewrite ? rewrite.parameters : parameters,
      taint: effectiveTaint,
      journalSeqs: [],
      policyBundleHash: outcome.policyBundleHash,
    };
    if (rewrite) {
      base.originalParameters = parameters;
      base.changes = rewrite.changes;
    }
    if (outcome.stepUp) base.stepUp = outcome.stepUp;
    if (outcome.defer) base.defer = outcome.defer;
    if (fault) base.fault = fault;

    // Commit the decision before anything can run. No record, no ticket.
    const dare = buildDareDecision({
      decisionId,
      decision: outcome.decision,
      reasonCodes: outcome.reasonCodes,
      runId: request.runId,
      traceId,
      tenantId: this.#o.tenantId ?? "default",
      environment: this.#o.environment ?? "prod",
      principalId: request.principalId,
      toolName: request.tool ?? `${request.toolClass}.${request.action}`,
      toolClass: request.toolClass,
      action: request.action,
      ...(policyTool?.category !== undefined ? { category: policyTool.category } : {}),
      ...(policyTool?.riskTier !== undefined ? { riskTier: policyTool.riskTier } : {}),
      requestHash,
      contextHash,
      policyBundleHash: outcome.policyBundleHash,
      toolSchemaHash: tool ? toolSchemaHash(tool) : classSchemaHash(request.toolClass, request.action),
      time: isoTime(now),
    });
    const detail = {
      decision_id: decisionId,
      decision: outcome.decision,
      reason_codes: outcome.reasonCodes,
      matched_rules: outcome.matchedRules.map((r) => ({
        id: r.id,
        source: r.source,
        decision: r.decision,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      })),
      obligations: outcome.obligations,
      principal_id: request.principalId,
      tool_class: request.toolClass,
      action: request.action,
      ...(request.tool !== undefined ? { tool: request.tool } : {}),
      parameters,
      ...(base.changes ? { modified: { parameters: base.parameters, changes: base.changes } } : {}),
      ...(outcome.stepUp
        ? { step_up: { approver_role: outcome.stepUp.approverRole, timeout_ms: outcome.stepUp.timeoutMs } }
        : {}),
      ...(outcome.defer ? { defer: { timeout_ms: outcome.defer.timeoutMs } } : {}),
      taint: effectiveTaint,
      provenance: (prepared?.provenance ?? []).map((h) => ({
        path: h.path,
        kind: h.kind,
        outputs: h.outputs,
      })),
      request_hash: requestHash,
      context_hash: contextHash,
      policy_bundle_hash: outcome.policyBundleHash,
      ...(request.rationale !== undefined ? { rationale_hash: sha256Of(request.rationale) } : {}),
      ...(request.originalRequest !== undefined
        ? {
            // The run pins its original request and hashed it once; a request that repeats
            // it (the usual case) reuses that hash instead of re-hashing up to 1 MB per call.
            original_request_hash:
              session?.originalRequest === request.originalRequest && session.originalRequestHash
                ? session.originalRequestHash
                : sha256Of(request.originalRequest),
          }
        : {}),
      dare,
    };
    try {
      await this.#journalBundle();
      // One entry per decision: the detail, with the DARE record inside it (`dare`).
      const entry = await this.#o.journal.append({
        type: GATE_DECISION,
        run_id: request.runId,
        trace_id: traceId,
        body: detail,
      });
      base.journalSeqs.push(entry.seq);
    } catch {
      // Fail closed: an unrecorded decision never authorises anything.
      if (session && prepared) this.#safeRecord(session, prepared, "deny", ["journal_unavailable"]);
      return {
        ...base,
        decision: "deny",
        reasonCodes: ["journal_unavailable"],
        fault: "journal_unavailable",
      };
    }

    if (!session || !prepared) return base;
    const events = session.recordDecision(prepared, outcome.decision, outcome.reasonCodes, now);
    await this.#journalQuarantine(events, request.runId, traceId, base.journalSeqs);

    const pending: Pending = { prepared, session, decisionId, traceId };
    switch (outcome.decision) {
      case "allow":
      case "modify":
        return this.#grant(base, pending, principal!, wait);
      case "deny":
        return base;
      case "step_up":
        return wait ? this.#stepUp(base, pending, tool, signal) : base;
      case "defer":
        return wait ? this.#deferred(base, pending, signal) : base;
    }
  }

  /** Records the admitted call for recordResult; mints a ticket unless this is decision-only. */
  #grant(base: GateOutcome, p: Pending, principal: PrincipalConfig, mint = true): GateOutcome {
    const r = p.prepared.request;
    this.#pending.set(p.decisionId, p);
    if (!mint) return base;
    base.ticket = ExecutionTicket.mint({
      decisionId: p.decisionId,
      runId: r.runId,
      principalId: principal.id,
      toolClass: r.toolClass,
      action: r.action,
      ...(r.tool !== undefined ? { tool: r.tool } : {}),
      parameters: base.parameters,
      ...(this.#o.ticketTtlMs !== undefined ? { ttlMs: this.#o.ticketTtlMs } : {}),
    });
    return base;
  }

  async #stepUp(
    base: GateOutcome,
    p: Pending,
    tool: CompiledTool | undefined,
    signal?: AbortSignal,
  ): Promise<GateOutcome> {
    const r = p.prepared.request;
    const stepUp = base.stepUp ?? { approverRole: "approver", timeoutMs: APPROVAL_DEFAULT_MS };
    const approvals = this.#o.approvals;
    if (!approvals)
      return this.#resolve(base, p, "deny", "approval", "no_approver", ["no_approver_configured"]);
    const now = this.#clock();
    const verdict = await approvals.request(
      {
        id: p.decisionId,
        decisionId: p.decisionId,
        runId: r.runId,
        principalId: r.principalId,
        approverRole: stepUp.approverRole,
        request: { ...r, parameters: base.parameters as GateRequest["parameters"] },
        ...(tool ? { tool: toApprovalTool(tool) } : {}),
        reasonCodes: base.reasonCodes,
        matchedRules: base.matchedRules.map((m) => m.id),
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + stepUp.timeoutMs).toISOString(),
      },
      stepUp.timeoutMs,
      signal,
    );
    if (verdict.outcome === "timeout" || verdict.outcome === "cancelled") {
      return this.#resolve(base, p, "deny", "approval", verdict.outcome, [`approval_${verdict.outcome}`]);
    }
    const hitl = this.#hitl(p, stepUp.approverRole, verdict);
    base.approval = { outcome: verdict.outcome, approver: verdict.approver.id, hitl };
    try {
      const e = await this.#o.journal.append({
        type: "dare.hitl.decision",
        run_id: r.runId,
        trace_id: p.traceId,
        body: hitl,
      });
      base.journalSeqs.push(e.seq);
    } catch {
      return this.#resolve(
        base,
        p,
        "deny",
        "approval",
        verdict.outcome,
        ["journal_unavailable"],
        verdict.approver,
      );
    }
    if (verdict.outcome === "deny") {
      return this.#resolve(
        base,
        p,
        "deny",
        "approval",
        "deny",
        ["approval_denied"],
        verdict.approver,
        verdict.justification,
      );
    }
    if (verdict.outcome === "modify") {
      // An approver's rewrite is still untrusted input to the contract.
      let params: Record<string, unknown> = verdict.parameters;
      if (tool) {
        const v = validateArgs(tool, verdict.parameters, this.#o.validateOptions ?? {});
        if (!v.ok) {
          return this.#resolve(
            base,
            p,
            "deny",
            "approval",
            "invalid",
            [`contract_param_invalid:${v.arg ?? "*"}:${v.rule}`],
            verdict.approver,
          );
        }
        params = { ...v.args };
      }
      base.originalParameters ??= base.parameters;
      base.parameters = params;
      return this.#resolve(
        base,
        p,
        "modify",
        "approval",
        "modify",
        ["approval_modified"],
        verdict.approver,
        verdict.justification,
      );
    }
    return this.#resolve(
      base,
      p,
      "allow",
      "approval",
      "approve",
      ["approval_granted"],
      verdict.approver,
      verdict.justification,
    );
  }

  async #deferred(base: GateOutcome, p: Pending, signal?: AbortSignal): Promise<GateOutcome> {
    const r = p.prepared.request;
    const timeoutMs = base.defer?.timeoutMs ?? APPROVAL_DEFAULT_MS;
    const now = this.#clock();
    const held = this.#defer.hold(
      {
        id: p.decisionId,
        runId: r.runId,
        principalId: r.principalId,
        decisionId: p.decisionId,
        summary: {
          toolClass: r.toolClass,
          action: r.action,
          ...(r.tool !== undefined ? { tool: r.tool } : {}),
        },
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + timeoutMs).toISOString(),
      },
      timeoutMs,
      signal,
    );
    if (!held) return this.#resolve(base, p, "deny", "defer", "queue_full", ["defer_queue_full"]);
    const res: DeferResolution = await held;
    if (res.outcome === "timeout")
      return this.#resolve(base, p, "deny", "defer", "timeout", ["defer_timeout"]);
    if (res.outcome === "cancelled")
      return this.#resolve(base, p, "deny", "defer", "cancelled", ["defer_cancelled"]);
    const by = { id: res.by, roles: [] };
    return res.outcome === "allow"
      ? this.#resolve(base, p, "allow", "defer", "approve", ["defer_released"], by, res.note)
      : this.#resolve(base, p, "deny", "defer", "deny", ["defer_denied"], by, res.note);
  }

  async #resolve(
    base: GateOutcome,
    p: Pending,
    decided: "allow" | "deny" | "modify",
    via: "approval" | "defer",
    outcome: string,
    reasons: string[],
    by?: Approver,
    justification?: string,
  ): Promise<GateOutcome> {
    const r = p.prepared.request;
    let resolved = decided;
    let reasonCodes = reasons;
    // The run may have changed while a human looked at the call: a quarantine, an
    // exhausted budget or an ended run since the decision turns an approval into a deny.
    if (resolved !== "deny") {
      const late = this.#lateDenial(p);
      if (late.length > 0) {
        resolved = "deny";
        reasonCodes = [...reasonCodes, ...late];
      }
    }
    const out: GateOutcome = {
      ...base,
      decision: resolved,
      reasonCodes: [...base.reasonCodes, ...reasonCodes],
    };
    if (!out.approval && via === "approval")
      out.approval = { outcome: outcome as ApprovalVerdict["outcome"] };
    try {
      const e = await this.#o.journal.append({
        type: GATE_RESOLUTION,
        run_id: r.runId,
        trace_id: p.traceId,
        body: {
          decision_id: p.decisionId,
          resolved,
          via,
          outcome,
          ...(by ? { by: by.id } : {}),
          ...(justification !== undefined ? { justification } : {}),
          ...(resolved === "modify" ? { parameters: out.parameters } : {}),
          reason_codes: reasonCodes,
        },
      });
      out.journalSeqs = [...out.journalSeqs, e.seq];
    } catch {
      this.#safeResolve(p, "deny", ["journal_unavailable"]);
      return {
        ...out,
        decision: "deny",
        reasonCodes: [...out.reasonCodes, "journal_unavailable"],
        fault: "journal_unavailable",
      };
    }
    let events: SessionEvent[] = [];
    try {
      events = p.session.recordResolution(
        p.prepared,
        resolved === "deny" ? "deny" : "allow",
        reasonCodes,
        this.#clock(),
      );
    } catch {
      // The run ended while the call waited: nothing more may run in it.
      if (resolved !== "deny")
        return { ...out, decision: "deny", reasonCodes: [...out.reasonCodes, "session_unavailable"] };
    }
    await this.#journalQuarantine(events, r.runId, p.traceId, out.journalSeqs);
    if (resolved === "deny") return out;
    const principal = this.#principal(r.principalId);
    if (!principal)
      return { ...out, decision: "deny", reasonCodes: [...out.reasonCodes, "principal_unknown"] };
    return this.#grant(out, p, principal);
  }

  /** Why an approved or released call may no longer run (empty when it still may). */
  #lateDenial(p: Pending): string[] {
    const r = p.prepared.request;
    if (this.#sessions.get(r.runId) !== p.session) return ["session_unavailable"];
    if (this.#principal(r.principalId) === undefined) return ["principal_unknown"];
    return p.session.standingDenials(p.prepared.readOnly, this.#clock());
  }

  #hitl(
    p: Pending,
    approverRole: string,
    verdict: Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }>,
  ): HITLDecisionRecord {
    const r = p.prepared.request;
    const signer = this.#o.signer;
    return buildHitlDecision({
      run_id: dareRunId(r.runId),
      trace_id: p.traceId,
      tenant_id: this.#o.tenantId ?? "default",
      environment: this.#o.environment ?? "prod",
      request: { tool_name: r.tool ?? `${r.toolClass}.${r.action}`, request_hash: sha256Of(r) },
      context: {
        orm_risk_score: 0,
        policy_decision_id: p.decisionId,
        run_tool_call_count: p.prepared.facts.counters.proposed,
      },
      decision: {
        approver_id: verdict.approver.id,
        approver_role: approverRole,
        action: verdict.outcome,
        justification: verdict.justification,
      },
      evidence: { ledger_event_id: uuidv7() },
      signer: {
        signing_key_id: signer.keyId,
        sign: (message) => sign(signer.privateKey, message).toString("base64url"),
      },
    });
  }

  async #journalQuarantine(
    events: SessionEvent[],
    runId: string,
    traceId: string,
    seqs?: number[],
  ): Promise<void> {
    for (const ev of events) {
      if (ev.type !== "quarantine") continue;
      const t = ev.trigger;
      const e = await this.#o.journal.append({
        type: "warden.system.quarantine",
        run_id: runId,
        trace_id: traceId,
        body: {
          subject: runId,
          trigger: t.type === "denial_threshold" ? "threshold" : t.type,
          reason: t.reason,
          ...(t.ruleId !== undefined ? { rule_id: t.ruleId } : {}),
          counters: { ...t.counters },
          matched_events: t.matchedEvents.map((m) => ({ ...m })),
          at: t.at,
        },
      });
      seqs?.push(e.seq);
    }
  }

  #safeRecord(session: Session, prepared: Prepared, decision: Decision, reasons: string[]): void {
    try {
      session.recordDecision(prepared, decision, reasons, this.#clock());
    } catch {
      // already recorded: nothing more to do
    }
  }

  #safeResolve(p: Pending, decision: "allow" | "deny", reasons: string[]): void {
    try {
      p.session.recordResolution(p.prepared, decision, reasons, this.#clock());
    } catch {
      // already resolved
    }
  }
}

/** A denial decided before policy: by the Gate's own checks or by the session context. */
function denyOutcome(
  reasonCodes: string[],
  policyBundleHash: Sha256Hash,
  by: "gate" | "context" = "gate",
): PolicyOutcome {
  return {
    decision: "deny",
    reasonCodes,
    matchedRules: [{ id: by, source: "builtin", decision: "deny", reason: reasonCodes.join(", ") }],
    obligations: [],
    policyBundleHash,
  };
}

// A compiled contract does not change, so its schema hash is computed once, not on every
// decision (canonicalising a whole contract costs tens of microseconds).
const schemaHashes = new WeakMap<CompiledTool, Sha256Hash>();

function toolSchemaHash(tool: CompiledTool): Sha256Hash {
  let h = schemaHashes.get(tool);
  if (h === undefined) {
    h = sha256Of(contractToCanonical(tool.contract));
    schemaHashes.set(tool, h);
  }
  return h;
}

// Decisions arrive many to a millisecond: the record's timestamp text is reused.
let isoMs = Number.NaN;
let isoText = "";
function isoTime(ms: number): string {
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

// A call that names no contract stands for its class and action; the hash of that pair
// never changes, so it is remembered (bounded: class and action come from requests).
const classHashes = new Map<string, Sha256Hash>();
const CLASS_HASHES_MAX = 4096;

function classSchemaHash(toolClass: string, action: string): Sha256Hash {
  const key = `${toolClass}\n${action}`; // names cannot hold a newline
  let h = classHashes.get(key);
  if (h === undefined) {
    h = sha256Of({ toolClass, action });
    if (classHashes.size >= CLASS_HASHES_MAX) classHashes.clear();
    classHashes.set(key, h);
  }
  return h;
}

function toPolicyTool(tool: CompiledTool): PolicyTool {
  const t = tool.contract.tool;
  const out: PolicyTool = {
    name: tool.name,
    version: t.version,
    riskTier: t.risk_tier,
    humanApproval: t.human_approval,
  };
  if (t.category !== undefined) out.category = t.category;
  if (t.cedar !== undefined) {
    out.cedarResource = t.cedar.resource;
    out.cedarAction = t.cedar.action;
  }
  return out;
}

function toApprovalTool(tool: CompiledTool): { name: string; riskTier?: string; category?: string } {
  const t = tool.contract.tool;
  return {
    name: tool.name,
    riskTier: t.risk_tier,
    ...(t.category !== undefined ? { category: t.category } : {}),
  };
}
