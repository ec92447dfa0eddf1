// HITLDecisionRecord (DARE "Control Plane Contracts"; GATE
// hitl_decision_record.schema.json): a human approver's signed decision on a
// blocked action. No event_type in either text; the registry names it
// dare.hitl.decision / gate.hitl.decision.
import { z } from "zod";
import { canonicalBytes } from "../canonical-json.js";
import { uuidv7 } from "../ids.js";
import {
  checkBuilt,
  EnvironmentSchema,
  NonEmptyString,
  nowTimestamp,
  RiskTierSchema,
  SchemaVersionSchema,
  Sha256HashSchema,
  SignatureTextSchema,
  TimestampSchema,
  ToolCategorySchema,
  TraceIdSchema,
  UuidSchema,
  VERSION_FIXED,
} from "./common.js";

export const HitlActionSchema = z.enum(["approve", "deny", "modify", "request_more_info"]);
export type HitlAction = z.infer<typeof HitlActionSchema>;

export const HitlDecisionSchema = z.strictObject({
  approver_id: NonEmptyString,
  approver_role: NonEmptyString.optional(),
  action: HitlActionSchema,
  justification: z.string().min(10),
  conditions: z.array(NonEmptyString).optional(),
  expires_at: TimestampSchema.optional(),
});
export type HitlDecision = z.infer<typeof HitlDecisionSchema>;

export const HITLDecisionRecordSchema = z
  .strictObject({
    schema_version: SchemaVersionSchema,
    approval_id: UuidSchema,
    time: TimestampSchema,
    run_id: UuidSchema,
    trace_id: TraceIdSchema,
    tenant_id: NonEmptyString,
    environment: EnvironmentSchema,
    request: z.strictObject({
      tool_name: NonEmptyString,
      request_hash: Sha256HashSchema,
      summary: z.string().optional(),
      tool_category: ToolCategorySchema.optional(),
      risk_tier: RiskTierSchema.optional(),
      // In the DARE text's transfer_funds example; kept as optional typed fields.
      amount_usd: z.number().min(0).optional(),
      destination_ref: NonEmptyString.optional(),
    }),
    context: z.strictObject({
      orm_risk_score: z.number().min(0).max(1),
      policy_decision_id: UuidSchema,
      ledger_head_ref: NonEmptyString.optional(),
      run_tool_call_count: z.int().min(0).optional(),
      run_cost_usd_so_far: z.number().min(0).optional(),
    }),
    decision: HitlDecisionSchema,
    evidence: z.strictObject({
      signing_key_id: NonEmptyString.optional(),
      signature: SignatureTextSchema,
      ledger_event_id: UuidSchema,
      dual_approver_id: NonEmptyString.optional(),
    }),
  })
  .meta({
    title: "HITLDecisionRecord",
    description: "A human approver's signed decision on a blocked action.",
  });
export type HITLDecisionRecord = z.infer<typeof HITLDecisionRecordSchema>;
/** The GATE form is the same record (no field differs). */
export const GateHITLDecisionRecordSchema = HITLDecisionRecordSchema;
export type GateHITLDecisionRecord = HITLDecisionRecord;

/** GATE: the signature is "over canonical JSON of decision object". */
export function hitlSigningInput(decision: HitlDecision): Uint8Array {
  return canonicalBytes(decision);
}

export interface HitlSigner {
  signing_key_id: string;
  /** Signs hitlSigningInput(decision); returns base64url. */
  sign(message: Uint8Array): string;
}

export type BuildHitlDecisionInput = Omit<
  HITLDecisionRecord,
  "schema_version" | "approval_id" | "time" | "evidence"
> & {
  approval_id?: string | undefined;
  time?: string | undefined;
  evidence: Omit<HITLDecisionRecord["evidence"], "signature" | "signing_key_id">;
  signer: HitlSigner;
};

/** Build and sign a HITLDecisionRecord: fills version, UUIDv7 approval_id, time, signature. */
export function buildHitlDecision(input: BuildHitlDecisionInput): HITLDecisionRecord {
  const { approval_id, time, evidence, signer, ...rest } = input;
  return checkBuilt(HITLDecisionRecordSchema, {
    ...VERSION_FIXED,
    approval_id: approval_id ?? uuidv7(),
    time: time ?? nowTimestamp(),
    ...rest,
    ...VERSION_FIXED, // after rest: a caller cannot override it
    evidence: {
      signing_key_id: signer.signing_key_id,
      signature: signer.sign(hitlSigningInput(rest.decision)),
      ...evidence,
    },
  });
}
