// Stage 4, resolution (`authorize` only): a step_up waits for an approver, a defer for a
// release, each bounded by its timeout and by the caller's abort signal. The human
// answer is journaled (`dare.hitl.decision`, then `warden.gate.resolution`) before it
// takes effect, and an approval given while the run changed (quarantine, exhausted
// budget, ended run) is turned into a denial.

import type { SessionEvent } from "../context/index.js";
import {
  buildHitlDecision,
  type GateRequest,
  type HITLDecisionRecord,
  isoTime,
  type PrincipalId,
  sha256Of,
  uuidv7,
} from "../contracts/index.js";
import { sign } from "../crypto/index.js";
import { type BuiltinBodies, PARAMETERS_CONDITION } from "../journal/index.js";
import { type CompiledTool, validateArgs } from "../tools/index.js";
import type { Approver, ApproverVerdict } from "./approvals.js";
import { dareRunId } from "./dare-mapping.js";
import { journaledParameters } from "./elide.js";
import { GATE_RESOLUTION } from "./events.js";
import type { GateDeps, Pending } from "./options.js";
import {
  type ApprovalRecord,
  commonOf,
  type DeferOutcome,
  type DeniedOutcome,
  denied,
  type GateOutcome,
  type GrantedOutcome,
  type Resolution,
  type StepUpOutcome,
  withTicket,
} from "./outcome.js";
import { contractViolation, type GateReasonCode } from "./reasons.js";
import { journalQuarantine } from "./record.js";

/** A step_up or defer being resolved: the outcome as decided, what may change, and the call. */
export interface Hold {
  o: StepUpOutcome | DeferOutcome;
  p: Pending;
  tool?: CompiledTool | undefined;
  approval?: ApprovalRecord;
  /** Parameters an approver rewrote. */
  rewritten?: Record<string, unknown>;
}

type Answered = ApproverVerdict;

interface Settle {
  decided: "allow" | "deny" | "modify";
  /** The resolution's outcome word as journaled (approve, deny, modify, timeout, queue_full, …). */
  outcome: BuiltinBodies[typeof GATE_RESOLUTION]["outcome"];
  reasons: GateReasonCode[];
  by?: Approver;
  justification?: string;
}

export async function awaitApproval(deps: GateDeps, h: Hold & { o: StepUpOutcome }, signal?: AbortSignal) {
  const r = h.p.prepared.request;
  const stepUp = h.o.stepUp;
  const approvals = deps.o.approvals;
  if (!approvals)
    return settle(deps, h, { decided: "deny", outcome: "no_approver", reasons: ["no_approver_configured"] });
  const now = deps.clock();
  const verdict = await approvals.request(
    {
      id: h.p.decisionId,
      decisionId: h.p.decisionId,
      runId: r.runId,
      principalId: r.principalId,
      approverRole: stepUp.approverRole,
      request: { ...r, parameters: h.o.parameters as GateRequest["parameters"] },
      ...(h.tool ? { tool: toApprovalTool(h.tool) } : {}),
      reasonCodes: h.o.reasonCodes,
      matchedRules: h.o.matchedRules.map((m) => m.id),
      createdAt: isoTime(now),
      expiresAt: isoTime(now + stepUp.timeoutMs),
    },
    stepUp.timeoutMs,
    signal,
  );
  if (verdict.outcome === "timeout" || verdict.outcome === "cancelled" || verdict.outcome === "queue_full") {
    return settle(deps, h, {
      decided: "deny",
      outcome: verdict.outcome,
      reasons: [`approval_${verdict.outcome}`],
    });
  }
  return applyVerdict(deps, h, verdict);
}

async function applyVerdict(deps: GateDeps, h: Hold & { o: StepUpOutcome }, verdict: Answered) {
  const hitl = hitlRecord(deps, h, verdict);
  h.approval = {
    outcome: verdict.outcome,
    approver: verdict.approver.id,
    hitl,
    approverSigned: verdict.signed !== undefined,
  };
  const by = verdict.approver;
  const justification = verdict.justification;
  try {
    const r = h.p.prepared.request;
    const e = await deps.o.journal.append({
      type: "dare.hitl.decision",
      run_id: r.runId,
      trace_id: h.p.traceId,
      body: hitl,
    });
    h.o.journalSeqs.push(e.seq);
  } catch {
    return settle(deps, h, {
      decided: "deny",
      outcome: verdict.outcome,
      reasons: ["journal_unavailable"],
      by,
    });
  }
  if (verdict.outcome === "deny") {
    return settle(deps, h, {
      decided: "deny",
      outcome: "deny",
      reasons: ["approval_denied"],
      by,
      justification,
    });
  }
  if (verdict.outcome === "approve") {
    return settle(deps, h, {
      decided: "allow",
      outcome: "approve",
      reasons: ["approval_granted"],
      by,
      justification,
    });
  }
  // An approver's rewrite is still untrusted input to the contract.
  let params: Record<string, unknown> = verdict.parameters;
  if (h.tool) {
    const v = validateArgs(h.tool, verdict.parameters, deps.o.validateOptions ?? {});
    if (!v.ok) {
      const reasons = [contractViolation("contract_param_invalid", v)];
      return settle(deps, h, { decided: "deny", outcome: "invalid", reasons, by });
    }
    params = { ...v.args };
  }
  h.rewritten = params;
  return settle(deps, h, {
    decided: "modify",
    outcome: "modify",
    reasons: ["approval_modified"],
    by,
    justification,
  });
}

export async function awaitRelease(deps: GateDeps, h: Hold & { o: DeferOutcome }, signal?: AbortSignal) {
  const r = h.p.prepared.request;
  const timeoutMs = h.o.defer.timeoutMs;
  const now = deps.clock();
  const held = deps.defer.hold(
    {
      id: h.p.decisionId,
      runId: r.runId,
      principalId: r.principalId,
      decisionId: h.p.decisionId,
      summary: {
        toolClass: r.toolClass,
        action: r.action,
        ...(r.tool !== undefined ? { tool: r.tool } : {}),
      },
      createdAt: isoTime(now),
      expiresAt: isoTime(now + timeoutMs),
    },
    timeoutMs,
    signal,
  );
  if (!held)
    return settle(deps, h, { decided: "deny", outcome: "queue_full", reasons: ["defer_queue_full"] });
  const res = await held;
  if (res.outcome === "timeout" || res.outcome === "cancelled") {
    return settle(deps, h, { decided: "deny", outcome: res.outcome, reasons: [`defer_${res.outcome}`] });
  }
  const by = { id: res.by, roles: [] };
  const note = res.note !== undefined ? { justification: res.note } : {};
  return res.outcome === "allow"
    ? settle(deps, h, { decided: "allow", outcome: "approve", reasons: ["defer_released"], by, ...note })
    : settle(deps, h, { decided: "deny", outcome: "deny", reasons: ["defer_denied"], by, ...note });
}

/** The resolved outcome, before the resolution is journaled. */
function resolvedOutcome(h: Hold, decided: Settle["decided"], reasons: readonly string[]): GateOutcome {
  const common = commonOf(h.o);
  const resolution: Resolution =
    h.o.decision === "step_up"
      ? { via: "approval", stepUp: h.o.stepUp, approval: h.approval ?? { outcome: "no_approver" } }
      : { via: "defer", defer: h.o.defer };
  const out = { ...common, reasonCodes: [...h.o.reasonCodes, ...reasons], resolution };
  if (h.rewritten !== undefined) {
    out.originalParameters ??= out.parameters;
    out.parameters = h.rewritten;
  }
  return decided === "deny"
    ? { ...out, decision: "deny" }
    : { ...out, decision: decided, decisionId: h.p.decisionId, policyBundleHash: h.o.policyBundleHash };
}

async function settle(deps: GateDeps, h: Hold, s: Settle): Promise<GateOutcome> {
  const { p } = h;
  const r = p.prepared.request;
  let resolved = s.decided;
  let reasons: string[] = s.reasons;
  if (resolved !== "deny") {
    const late = lateDenial(deps, p);
    if (late.length > 0) {
      resolved = "deny";
      reasons = [...reasons, ...late];
    }
  }
  if (h.o.decision === "step_up" && !h.approval)
    h.approval = { outcome: s.outcome as ApprovalRecord["outcome"] };
  const out = resolvedOutcome(h, resolved, reasons);
  try {
    const e = await deps.o.journal.appendBuilt({
      type: GATE_RESOLUTION,
      run_id: r.runId,
      trace_id: p.traceId,
      body: {
        decision_id: p.decisionId,
        resolved,
        via: h.o.decision === "step_up" ? "approval" : "defer",
        outcome: s.outcome,
        ...(s.by ? { by: s.by.id } : {}),
        ...(s.justification !== undefined ? { justification: s.justification } : {}),
        ...(resolved === "modify"
          ? journaledParameters(out.parameters, deps.o.journalParametersMaxBytes)
          : {}),
        reason_codes: reasons,
      },
    });
    out.journalSeqs = [...out.journalSeqs, e.seq];
  } catch {
    safeResolve(deps, p, ["journal_unavailable"]);
    return denied(out, ["journal_unavailable"], "journal_unavailable");
  }
  return finish(deps, h, out, reasons);
}

/** Records the resolution in the session; a granted call gets its ticket. */
async function finish(deps: GateDeps, h: Hold, out: GateOutcome, reasons: string[]): Promise<GateOutcome> {
  const { p } = h;
  const r = p.prepared.request;
  let events: SessionEvent[] = [];
  try {
    events = p.session.recordResolution(
      p.prepared,
      out.decision === "deny" ? "deny" : "allow",
      reasons,
      deps.clock(),
    );
  } catch {
    // The run ended while the call waited: nothing more may run in it.
    if (out.decision !== "deny") return denied(out, ["session_unavailable"]);
  }
  await journalQuarantine(deps, events, { runId: r.runId, traceId: p.traceId }, out.journalSeqs);
  if (out.decision !== "allow" && out.decision !== "modify") return out as DeniedOutcome;
  const principal = deps.principal(p.prepared.request.principalId as PrincipalId);
  if (!principal) return denied(out, ["principal_unknown"]);
  return grant(deps, out, p, principal.id);
}

/** Records the admitted call for recordResult, then mints its ticket. */
export function grant(deps: GateDeps, o: GrantedOutcome, p: Pending, principalId: string): GrantedOutcome {
  deps.pending.set(p.prepared.request.principalId, p);
  return withTicket(o, {
    decisionId: p.decisionId,
    request: p.prepared.request,
    principalId,
    ttlMs: deps.o.ticketTtlMs,
  });
}

/** Why an approved or released call may no longer run (empty when it still may). */
function lateDenial(deps: GateDeps, p: Pending): string[] {
  const r = p.prepared.request;
  if (deps.sessions.get(r.runId) !== p.session) return ["session_unavailable"];
  if (deps.principal(r.principalId as PrincipalId) === undefined) return ["principal_unknown"];
  return p.session.standingDenials(p.prepared.readOnly, deps.clock());
}

function safeResolve(deps: GateDeps, p: Pending, reasons: string[]): void {
  try {
    p.session.recordResolution(p.prepared, "deny", reasons, deps.clock());
  } catch {
    // already resolved
  }
}

function hitlRecord(deps: GateDeps, h: Hold & { o: StepUpOutcome }, verdict: Answered): HITLDecisionRecord {
  const { p } = h;
  const r = p.prepared.request;
  const signer = deps.o.signer;
  const signed = verdict.signed;
  return buildHitlDecision({
    run_id: dareRunId(r.runId),
    trace_id: p.traceId,
    tenant_id: deps.o.tenantId ?? "default",
    environment: deps.o.environment ?? "prod",
    request: { tool_name: r.tool ?? `${r.toolClass}.${r.action}`, request_hash: sha256Of(r) },
    context: {
      orm_risk_score: p.riskScore,
      policy_decision_id: p.decisionId,
      run_tool_call_count: p.prepared.facts.counters.proposed,
    },
    decision: {
      approver_id: verdict.approver.id,
      approver_role: h.o.stepUp.approverRole,
      action: verdict.outcome,
      justification: verdict.justification,
      ...(verdict.outcome === "modify" && signed !== undefined
        ? { conditions: [`${PARAMETERS_CONDITION}${sha256Of(verdict.parameters)}`] }
        : {}),
    },
    evidence: { ledger_event_id: uuidv7() },
    // An approver-signed verdict (approvals.ts checked it) carries the approver's own
    // signature over its statement; otherwise the runtime key signs the decision object.
    ...(signed !== undefined ? { time: signed.time } : {}),
    signer:
      signed !== undefined
        ? { signing_key_id: signed.keyId, sign: () => signed.signature }
        : {
            signing_key_id: signer.keyId,
            sign: (message) => sign(signer.privateKey, message).toString("base64url"),
          },
  });
}

function toApprovalTool(tool: CompiledTool): { name: string; riskTier?: string; category?: string } {
  const t = tool.contract.tool;
  return {
    name: tool.name,
    riskTier: t.risk_tier,
    ...(t.category !== undefined ? { category: t.category } : {}),
  };
}
