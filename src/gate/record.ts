// Stage 3, the decision record: one `warden.gate.decision` journal entry per decision
// (the detail, with the DARE PolicyDecisionRecord inside it as `dare`), committed before
// anything can run — no record, no ticket. Also the other entries the Gate writes as
// facts happen: the policy bundle once, quarantines, results.

import type { SessionEvent } from "../context/index.js";
import { isoTime, type PolicyDecisionRecord, type Sha256Hash, sha256Of } from "../contracts/index.js";
import type { BuiltinBodies } from "../journal/index.js";
import { type CompiledTool, contractToCanonical } from "../tools/index.js";
import type { Admission } from "./admission.js";
import { buildDareDecision } from "./dare-mapping.js";
import { journaledParameters, withoutDefaults } from "./elide.js";
import { GATE_DECISION } from "./events.js";
import type { Judgement } from "./judgement.js";
import { APPROVAL_DEFAULT_MS, type GateDeps } from "./options.js";
import type { GateOutcome } from "./outcome.js";

type DecisionBody = BuiltinBodies[typeof GATE_DECISION];

/** The hashes a decision is bound to. */
interface Bindings {
  requestHash: Sha256Hash;
  contextHash: Sha256Hash;
}

/** The outcome as decided, before the record is committed (journalSeqs still empty). */
export function draftOutcome(a: Admission, j: Judgement): GateOutcome {
  const p = j.outcome;
  // A rewrite applies to whatever may run: modify, and step_up/defer once approved or
  // released (a contract's human_approval must not shed the policy's redaction).
  const rewrite = p.decision !== "deny" ? p.modify : undefined;
  // Built as one object (this runs once per decision): the member's own field is set below.
  const o = {
    decisionId: a.decisionId,
    decision: p.decision,
    policyDecision: p.decision,
    reasonCodes: p.reasonCodes,
    matchedRules: p.matchedRules,
    obligations: p.obligations,
    parameters: rewrite ? rewrite.parameters : a.checked.parameters,
    taint: j.prepared?.effectiveTaint ?? a.request.taintLabels,
    journalSeqs: [],
    policyBundleHash: p.policyBundleHash,
    traceId: a.traceId,
  } as GateOutcome;
  if (j.riskScore !== undefined) o.riskScore = j.riskScore;
  if (j.drift !== undefined) o.drift = j.drift;
  if (rewrite) {
    o.originalParameters = a.checked.parameters;
    o.changes = rewrite.changes;
  }
  if (o.decision === "deny" && j.fault !== undefined) o.fault = j.fault;
  else if (o.decision === "step_up")
    o.stepUp = p.stepUp ?? { approverRole: "approver", timeoutMs: APPROVAL_DEFAULT_MS };
  else if (o.decision === "defer") o.defer = p.defer ?? { timeoutMs: APPROVAL_DEFAULT_MS };
  return o;
}

/** Appends the decision record; resolves to its sequence number, rejects when it could not be committed. */
export async function commitDecision(
  deps: GateDeps,
  a: Admission,
  j: Judgement,
  o: GateOutcome,
): Promise<number> {
  const body = decisionBody(deps, a, j, o);
  if (!bundleDone.has(deps)) await journalBundle(deps);
  const entry = await deps.o.journal.appendBuilt({
    type: GATE_DECISION,
    run_id: a.request.runId,
    trace_id: a.traceId,
    body,
  });
  return entry.seq;
}

function bindings(a: Admission, j: Judgement): Bindings {
  return {
    requestHash: j.prepared?.requestHash ?? sha256Of(a.checked),
    contextHash: j.prepared?.contextHash ?? sha256Of({ runId: a.request.runId, state: "no_session" }),
  };
}

/** The DARE PolicyDecisionRecord of the decision (carried in the entry as `dare`). */
function dareRecord(deps: GateDeps, a: Admission, j: Judgement, h: Bindings): PolicyDecisionRecord {
  const p = j.outcome;
  const { request } = a;
  return buildDareDecision({
    decisionId: a.decisionId,
    decision: p.decision,
    reasonCodes: p.reasonCodes,
    runId: request.runId,
    traceId: a.traceId,
    tenantId: deps.o.tenantId ?? "default",
    environment: deps.o.environment ?? "prod",
    principalId: request.principalId,
    toolName: request.tool ?? `${request.toolClass}.${request.action}`,
    toolClass: request.toolClass,
    action: request.action,
    ...(a.policyTool?.category !== undefined ? { category: a.policyTool.category } : {}),
    ...(a.policyTool?.riskTier !== undefined ? { riskTier: a.policyTool.riskTier } : {}),
    requestHash: h.requestHash,
    contextHash: h.contextHash,
    policyBundleHash: p.policyBundleHash,
    toolSchemaHash: a.tool ? toolSchemaHash(a.tool) : classSchemaHash(request.toolClass, request.action),
    time: isoTime(a.now),
    ...(j.riskScore !== undefined ? { riskScore: j.riskScore } : {}),
  });
}

function decisionBody(deps: GateDeps, a: Admission, j: Judgement, o: GateOutcome): DecisionBody {
  const { request } = a;
  const p = j.outcome;
  const h = bindings(a, j);
  const dare = dareRecord(deps, a, j, h);
  return {
    decision_id: a.decisionId,
    decision: p.decision,
    reason_codes: p.reasonCodes,
    matched_rules: p.matchedRules.map((r) => ({
      id: r.id,
      source: r.source,
      decision: r.decision,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    })),
    obligations: p.obligations as DecisionBody["obligations"],
    principal_id: request.principalId,
    ...(request.identity !== undefined
      ? {
          identity: {
            agent_id: request.identity.agentId,
            domain: request.identity.domain,
            capabilities: [...request.identity.capabilities],
          },
        }
      : {}),
    tool_class: request.toolClass,
    action: request.action,
    ...(request.tool !== undefined ? { tool: request.tool } : {}),
    ...parameterFields(deps, a.checked.parameters),
    ...(o.changes
      ? {
          modified: {
            ...parameterFields(deps, o.parameters),
            changes: o.changes as unknown as NonNullable<DecisionBody["modified"]>["changes"],
          },
        }
      : {}),
    ...(p.stepUp
      ? { step_up: { approver_role: p.stepUp.approverRole, timeout_ms: p.stepUp.timeoutMs } }
      : {}),
    ...(p.defer ? { defer: { timeout_ms: p.defer.timeoutMs } } : {}),
    taint: o.taint,
    provenance: (j.prepared?.provenance ?? []).map((x) => ({
      path: x.path,
      kind: x.kind,
      outputs: x.outputs,
    })),
    // request_hash, context_hash, policy_bundle_hash and the risk score are in `dare` alone.
    ...(request.rationale !== undefined ? { rationale_hash: sha256Of(request.rationale) } : {}),
    ...(a.capability !== undefined ? { capability_id: a.capability.id } : {}),
    ...(j.drift !== undefined ? { drift: { ...j.drift } } : {}),
    ...(request.originalRequest !== undefined
      ? { original_request_hash: originalRequestHash(j, request.originalRequest) }
      : {}),
    dare,
  };
}

/**
 * The parameters as journaled: verbatim (or elided past the size cap), or — with
 * `journalDefaultsOmitted` — without their members at `false`/`""`, the entry saying so.
 */
function parameterFields(deps: GateDeps, params: Record<string, unknown>) {
  const fields = journaledParameters(params, deps.o.journalParametersMaxBytes);
  if (deps.o.journalDefaultsOmitted !== true || fields.parameters_elided !== undefined) return fields;
  const lean = withoutDefaults(params);
  return lean === undefined
    ? fields
    : { parameters: lean as DecisionBody["parameters"], parameters_defaults: "omitted" as const };
}

// The run pins its original request and hashed it once; a request that repeats it (the
// usual case) reuses that hash instead of re-hashing up to 1 MB per call.
function originalRequestHash(j: Judgement, text: string): Sha256Hash {
  const s = j.session;
  return s?.originalRequest === text && s.originalRequestHash ? s.originalRequestHash : sha256Of(text);
}

// The bundle load is a journal event, written once per Gate before the first decision
// that cites its hash — unless the journal's last record of the enforcing bundle already
// names that hash (`bundleRecorded`: one-shot hook processes); a failed write is tried
// again on the next decision.
const bundleLoaded = new WeakMap<GateDeps, Promise<void>>();
/** Gates whose bundle entry is committed: their decisions need not wait on it again. */
const bundleDone = new WeakSet<GateDeps>();

function journalBundle(deps: GateDeps): Promise<void> {
  let done = bundleLoaded.get(deps);
  if (!done) {
    done = recordBundle(deps).then(
      () => {
        bundleDone.add(deps);
      },
      (err: unknown) => {
        bundleLoaded.delete(deps);
        throw err;
      },
    );
    bundleLoaded.set(deps, done);
  }
  return done;
}

async function recordBundle(deps: GateDeps): Promise<void> {
  const policy = deps.o.policy;
  // A lookup that fails is no reason to deny: the bundle is journaled, as without it.
  const recorded = await deps.o.bundleRecorded?.(policy.policyBundleHash).catch(() => false);
  if (recorded === true) return;
  const sources = policy.summary?.sources.map((x) => ({ name: x.name, kind: x.kind, rules: x.rules }));
  await deps.o.journal.appendBuilt({
    type: "warden.policy.bundle_loaded",
    body: { policy_bundle_hash: policy.policyBundleHash, ...(sources ? { sources } : {}) },
  });
}

/** Whether `events` hold a quarantine (most decisions' events do not: nothing to journal). */
export function hasQuarantine(events: readonly SessionEvent[]): boolean {
  for (const ev of events) if (ev.type === "quarantine") return true;
  return false;
}

/** Journals the quarantines among `events`; their sequence numbers go to `seqs`. */
export async function journalQuarantine(
  deps: GateDeps,
  events: readonly SessionEvent[],
  at: { runId: string; traceId: string },
  seqs?: number[],
): Promise<void> {
  for (const ev of events) {
    if (ev.type !== "quarantine") continue;
    const t = ev.trigger;
    const e = await deps.o.journal.appendBuilt({
      type: "warden.system.quarantine",
      run_id: at.runId,
      trace_id: at.traceId,
      body: {
        subject: at.runId,
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
