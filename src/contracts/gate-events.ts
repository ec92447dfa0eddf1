// The bodies of the journal entries the Gate writes (warden.gate.*), as schemas in the
// bottom layer so that any verifier can check them — the journal's built-in registry, a
// process that never loads the Gate — not only one where the Gate registered them.
// A decision is ONE entry: Warden's detail plus, under `dare`, the DARE
// PolicyDecisionRecord verbatim. Its schema checks that record against
// PolicyDecisionRecordSchema, so a journal still carries schema-checked DARE records, and
// checks that the record and the detail describe the same decision (one entry cannot
// say allow in one place and deny in the other).
import { z } from "zod";
import { DECISIONS, type Decision, TaintLabel } from "./gate-request.js";
import { Sha256HashSchema } from "./records/common.js";
import { PolicyDecisionRecordSchema } from "./records/policy-decision.js";

export const GATE_DECISION = "warden.gate.decision";
export const GATE_RESOLUTION = "warden.gate.resolution";
export const GATE_RESULT = "warden.gate.result";

/** The DARE outcome of a Warden decision: modify runs (allow); step_up and defer do not yet (deny). */
export function dareOutcome(decision: Decision): "allow" | "deny" {
  return decision === "allow" || decision === "modify" ? "allow" : "deny";
}

const Str = z.string().min(1).max(4096);

/**
 * Parameters too large to journal verbatim (the Gate's `journalParametersMaxBytes`, 4 KiB by
 * default): the sha256 of their canonical JSON, its size in bytes and its first characters.
 * The entry's `parameters` is then `{}`.
 */
export const ElidedParameters = z.strictObject({
  sha256: Sha256HashSchema,
  bytes: z.number().int().min(0),
  prefix: z.string().max(256),
});
export type ElidedParameters = z.infer<typeof ElidedParameters>;
/**
 * `"omitted"`: the parameters' members at `false` or `""` were left out of the entry (a Gate
 * with `journalDefaultsOmitted`: the hooks engine, whose requests carry a fixed set of
 * derived facts); an absent member was one of those. `dare.inputs.request_hash` binds the
 * parameters as checked.
 */
export const ParametersDefaults = z.literal("omitted");
const elisionAgrees = (b: { parameters?: Record<string, unknown>; parameters_elided?: unknown }) =>
  b.parameters_elided === undefined || (b.parameters !== undefined && Object.keys(b.parameters).length === 0);

const GateDecisionFields = z.strictObject({
  decision_id: z.string(),
  decision: z.enum(DECISIONS),
  reason_codes: z.array(Str),
  matched_rules: z.array(
    z.strictObject({ id: Str, source: Str, decision: z.enum(DECISIONS), reason: z.string().optional() }),
  ),
  obligations: z.array(z.strictObject({ type: Str, params: z.record(z.string(), z.json()).optional() })),
  principal_id: Str,
  /** The verified AgentPin identity the call was made under, when the caller presented one. */
  identity: z.strictObject({ agent_id: Str, domain: Str, capabilities: z.array(z.string()) }).optional(),
  tool_class: Str,
  action: Str,
  tool: Str.optional(),
  parameters: z.record(z.string(), z.json()),
  parameters_elided: ElidedParameters.optional(),
  parameters_defaults: ParametersDefaults.optional(),
  modified: z
    .strictObject({
      parameters: z.record(z.string(), z.json()),
      parameters_elided: ElidedParameters.optional(),
      parameters_defaults: ParametersDefaults.optional(),
      changes: z.array(z.record(z.string(), z.json())),
    })
    .optional(),
  step_up: z.strictObject({ approver_role: Str, timeout_ms: z.number().int().min(0) }).optional(),
  defer: z.strictObject({ timeout_ms: z.number().int().min(0) }).optional(),
  taint: z.array(TaintLabel),
  provenance: z.array(z.json()),
  /**
   * `request_hash`, `context_hash`, `policy_bundle_hash`, `risk_score`: written by earlier
   * versions only. They repeat `dare.inputs.request_hash`, `dare.inputs.context_hash`,
   * `dare.bundles.policy_bundle_hash` and `dare.inputs.orm_risk_score`, where readers find
   * them; an entry that carries them must agree with its `dare` record.
   */
  request_hash: Sha256HashSchema.optional(),
  context_hash: Sha256HashSchema.optional(),
  policy_bundle_hash: Sha256HashSchema.optional(),
  rationale_hash: Sha256HashSchema.optional(),
  original_request_hash: Sha256HashSchema.optional(),
  /** The id of the valid capability token the call came with (never the token). */
  capability_id: z.string().max(64).optional(),
  /** Earlier versions only: the ORM risk score, now `dare.inputs.orm_risk_score` alone. */
  risk_score: z.number().min(0).max(1).optional(),
  /** Semantic drift from the run's original request (src/gate/drift.ts), when scored. */
  drift: z
    .strictObject({
      action: z.number().min(0).max(1),
      cumulative: z.number().min(0).max(1),
      steps: z.number().int().positive(),
      embedder: z.string().min(1).max(200),
    })
    .optional(),
  /** The DARE PolicyDecisionRecord of this decision, verbatim (what DARE conformance exports read). */
  dare: PolicyDecisionRecordSchema,
});

export const GateDecisionBody = GateDecisionFields.superRefine((b, ctx) => {
  const d = b.dare;
  const disagree = (path: (string | number)[], what: string) =>
    ctx.addIssue({ code: "custom", path, message: `dare record disagrees with the detail: ${what}` });
  if (d.decision_id !== b.decision_id) disagree(["dare", "decision_id"], "decision_id");
  if (d.result.decision !== dareOutcome(b.decision)) disagree(["dare", "result", "decision"], "decision");
  const differs = (outer: unknown, inner: unknown) => outer !== undefined && outer !== inner;
  if (differs(b.request_hash, d.inputs.request_hash))
    disagree(["dare", "inputs", "request_hash"], "request_hash");
  if (differs(b.context_hash, d.inputs.context_hash))
    disagree(["dare", "inputs", "context_hash"], "context_hash");
  if (differs(b.policy_bundle_hash, d.bundles.policy_bundle_hash))
    disagree(["dare", "bundles", "policy_bundle_hash"], "policy_bundle_hash");
  if (differs(b.risk_score, d.inputs.orm_risk_score))
    disagree(["dare", "inputs", "orm_risk_score"], "risk_score");
  for (const [where, x] of [
    [["parameters"], b],
    [["modified", "parameters"], b.modified],
  ] as const) {
    if (x !== undefined && !elisionAgrees(x))
      ctx.addIssue({ code: "custom", path: [...where], message: "elided parameters must be {}" });
  }
});
export type GateDecisionBody = z.infer<typeof GateDecisionBody>;

export const GateResolutionBody = z.strictObject({
  decision_id: z.string(),
  resolved: z.enum(["allow", "deny", "modify"]),
  via: z.enum(["approval", "defer"]),
  outcome: z.enum([
    "approve",
    "deny",
    "modify",
    "timeout",
    "cancelled",
    "queue_full",
    "no_approver",
    "invalid",
  ]),
  by: Str.optional(),
  justification: z.string().optional(),
  parameters: z.record(z.string(), z.json()).optional(),
  parameters_elided: ElidedParameters.optional(),
  reason_codes: z.array(Str),
});

/** How an executed call ended, as its executor reported it (APAE task_* trust events). */
export const TaskOutcome = z.enum(["success", "failure", "timeout"]);
export type TaskOutcome = z.infer<typeof TaskOutcome>;

/** A task's outcome from an executor's ok flag and error code (a `*_TIMEOUT` code is a timeout). */
export function taskOutcomeOf(ok: boolean, code?: string): TaskOutcome {
  if (ok) return "success";
  return code !== undefined && /TIMEOUT/.test(code) ? "timeout" : "failure";
}

export const GateResultBody = z.strictObject({
  decision_id: z.string(),
  output_hash: Sha256HashSchema.optional(),
  outcome: TaskOutcome.optional(),
  classification: Str,
  taint: z.array(TaintLabel),
  /**
   * The output screening's finding (docs/gate.md#output-screening): the ids of the rules the
   * result's text matched (never the text), whether text past the bound went unscanned, and
   * what the configured mode did (flag: labelled; quarantine: labelled and run quarantined).
   */
  screening: z
    .strictObject({
      mode: z.enum(["flag", "quarantine"]),
      rules: z.array(Str).max(64),
      truncated: z.boolean().optional(),
    })
    .optional(),
  /**
   * Set on the result that took the run's value provenance into merged mode: the run reached
   * `provenance.maxOutputs` outputs, so this and later outputs are folded into one record
   * that fails closed (any substantial argument inherits their taint) — docs/context.md.
   */
  provenance_merged: z.strictObject({ max_outputs: z.number().int().positive() }).optional(),
  /** What the execution used, as metered against the run's OATS §9.2 budgets. */
  usage: z
    .strictObject({
      iterations: z.number().nonnegative().finite().optional(),
      networkRequests: z.number().nonnegative().finite().optional(),
      networkBytes: z.number().nonnegative().finite().optional(),
      fsBytesWritten: z.number().nonnegative().finite().optional(),
      fsFilesWritten: z.number().nonnegative().finite().optional(),
    })
    .optional(),
});

/** Type name -> body schema of every entry type the Gate writes. */
export const GATE_EVENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  [GATE_DECISION]: GateDecisionBody,
  [GATE_RESOLUTION]: GateResolutionBody,
  [GATE_RESULT]: GateResultBody,
};
