// PolicyDecisionRecord (DARE "Control Plane Contracts"; GATE
// policy_decision_record.schema.json): the record that must exist, linked to the
// request hash, before any tool runs.
import { z } from "zod";
import { uuidv7 } from "../ids.js";
import {
  addWardenIssue,
  checkBuilt,
  EnvironmentSchema,
  JsonValueSchema,
  type Namespace,
  NonEmptyString,
  nowTimestamp,
  RiskTierSchema,
  SCHEMA_VERSION,
  SchemaVersionSchema,
  Sha256HashSchema,
  TimestampSchema,
  ToolCategorySchema,
  TraceIdSchema,
  UuidSchema,
} from "./common.js";

export const PolicyDecisionValueSchema = z.enum(["allow", "deny", "invariant_halt"]);
export type PolicyDecisionValue = z.infer<typeof PolicyDecisionValueSchema>;

export const ReasonCodeSchema = z.enum([
  "ALLOWLIST_MATCH",
  "BUDGET_OK",
  "DENYLIST_MATCH",
  "BUDGET_EXCEEDED",
  "IDENTITY_INVALID",
  "ATTESTATION_FAILED",
  "SCHEMA_INVALID",
  "ORM_THRESHOLD_EXCEEDED",
  "INVARIANT_VIOLATED",
  "HITL_REQUIRED",
  "TIME_WINDOW_VIOLATION",
  "DESTINATION_NOT_ALLOWLISTED",
  "RUN_LIMIT_EXCEEDED",
  "UNKNOWN",
]);
export type ReasonCode = z.infer<typeof ReasonCodeSchema>;

export const ObligationTypeSchema = z.enum([
  "audit_log",
  "sign_action",
  "hitl_approval",
  "redact_fields",
  "verify_destination",
  "require_idempotency_key",
  "snapshot_response",
  "alert_operator",
]);
export type ObligationType = z.infer<typeof ObligationTypeSchema>;

export const ObligationSchema = z.strictObject({
  type: ObligationTypeSchema,
  required: z.boolean(),
  params: z.record(z.string(), JsonValueSchema).optional(),
});
export type Obligation = z.infer<typeof ObligationSchema>;

export const PolicyActionTypeSchema = z.enum(["tool.invoke", "memory.read", "memory.write"]);

function policyDecisionSchema<N extends Namespace>(ns: N) {
  return z
    .strictObject({
      schema_version: SchemaVersionSchema,
      event_type: z.literal(`${ns}.policy.decision` as const),
      time: TimestampSchema,
      decision_id: UuidSchema,
      run_id: UuidSchema,
      trace_id: TraceIdSchema,
      tenant_id: NonEmptyString,
      environment: EnvironmentSchema,
      control_plane_version: z.string().optional(),
      subject: z.strictObject({
        agent_instance_id: NonEmptyString,
        subject_id: NonEmptyString,
        attested: z.boolean(),
        attestation_ref: NonEmptyString.optional(),
      }),
      action: z.strictObject({
        type: PolicyActionTypeSchema,
        tool_name: NonEmptyString,
        tool_category: ToolCategorySchema,
        risk_tier: RiskTierSchema.optional(),
      }),
      inputs: z.strictObject({
        request_hash: Sha256HashSchema,
        context_hash: Sha256HashSchema.optional(),
        orm_risk_score: z.number().min(0).max(1).optional(),
      }),
      bundles: z.strictObject({
        policy_bundle_hash: Sha256HashSchema,
        tool_schema_hash: Sha256HashSchema,
      }),
      invariant_check: z
        .strictObject({
          invariant_bundle_hash: Sha256HashSchema.optional(),
          rules_evaluated: z.int().min(0).optional(),
          rules_failed: z.int().min(0).optional(),
          failed_rule_ids: z.array(NonEmptyString).optional(),
        })
        .optional(),
      result: z.strictObject({
        decision: PolicyDecisionValueSchema,
        reason_codes: z.array(ReasonCodeSchema),
        obligations: z.array(ObligationSchema),
      }),
    })
    .superRefine((v, ctx) => {
      // GATE: invariant_check is "Required for invariant_halt decisions".
      if (v.result.decision === "invariant_halt" && v.invariant_check === undefined) {
        addWardenIssue(ctx, "ERR_CONTRACT_RECORD_INVALID", "invariant_halt requires invariant_check", [
          "invariant_check",
        ]);
      }
    })
    .meta({ title: "PolicyDecisionRecord", description: "A policy decision on one governed action." });
}

export const PolicyDecisionRecordSchema = policyDecisionSchema("dare");
export const GatePolicyDecisionRecordSchema = policyDecisionSchema("gate");
export type PolicyDecisionRecord = z.infer<typeof PolicyDecisionRecordSchema>;
export type GatePolicyDecisionRecord = z.infer<typeof GatePolicyDecisionRecordSchema>;

export type BuildPolicyDecisionInput = Omit<
  PolicyDecisionRecord,
  "schema_version" | "event_type" | "time" | "decision_id"
> & { time?: string | undefined; decision_id?: string | undefined };

const DECISION_FIXED = { schema_version: SCHEMA_VERSION, event_type: "dare.policy.decision" } as const;

/** Build a dare.policy.decision: fills version, type, time and a UUIDv7 decision_id. Throws on invalid input. */
export function buildPolicyDecision(input: BuildPolicyDecisionInput): PolicyDecisionRecord {
  const { time, decision_id, ...rest } = input;
  return checkBuilt(PolicyDecisionRecordSchema, {
    ...DECISION_FIXED,
    time: time ?? nowTimestamp(),
    decision_id: decision_id ?? uuidv7(),
    ...rest,
    ...DECISION_FIXED, // after rest: a caller cannot override them
  });
}
