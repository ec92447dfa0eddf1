// ToolRequestEnvelope and ToolResponseEnvelope (DARE "Control Plane Contracts";
// GATE tool_envelope.schema.json), including the sensitive-payload reference form
// in which a payload is replaced by payload_hash + payload_ref.
import { z } from "zod";
import { type Sha256Hash, sha256Of } from "../canonical-json.js";
import { newSpanId } from "../ids.js";
import {
  addWardenIssue,
  checkBuilt,
  EnvironmentSchema,
  hashOrIssue,
  type JsonValue,
  JsonValueSchema,
  type Namespace,
  NonEmptyString,
  nowTimestamp,
  type PayloadRef,
  PayloadRefSchema,
  RiskTierSchema,
  SCHEMA_VERSION,
  SchemaVersionSchema,
  SEMVER_PATTERN,
  Sha256HashSchema,
  SpanIdSchema,
  SpiffeIdSchema,
  TimestampSchema,
  ToolCategorySchema,
  TraceIdSchema,
  UuidSchema,
} from "./common.js";

export const AgentIdentitySchema = z.strictObject({
  agent_instance_id: SpiffeIdSchema,
  agent_name: NonEmptyString,
  agent_version: z.string().regex(SEMVER_PATTERN, "expected MAJOR.MINOR.PATCH"),
  identity: z.strictObject({
    subject: SpiffeIdSchema,
    attested: z.boolean(),
    claims: z
      .strictObject({
        image_digest: Sha256HashSchema.optional(),
        config_hash: Sha256HashSchema.optional(),
        toolset_hash: Sha256HashSchema.optional(),
        tee_measurement: z.string().optional(),
      })
      .optional(),
  }),
});
export type AgentIdentity = z.infer<typeof AgentIdentitySchema>;

export const ToolBundlesSchema = z.strictObject({
  policy_bundle_hash: Sha256HashSchema,
  prompt_bundle_hash: Sha256HashSchema.optional(),
  tool_schema_hash: Sha256HashSchema,
});

export const SourceLabelSchema = z.enum([
  "user_input",
  "retrieved_doc",
  "tool_output",
  "agent_message",
  "system",
]);
export type SourceLabel = z.infer<typeof SourceLabelSchema>;

/**
 * Either the clear form (payload, optionally its hash) or the reference form
 * (payload_hash + payload_ref, no payload). Mixing them would publish the
 * payload the reference was meant to keep out of the record.
 */
export const ToolInputsSchema = z
  .strictObject({
    content_type: NonEmptyString,
    payload: JsonValueSchema.optional(),
    payload_hash: Sha256HashSchema.optional(),
    payload_ref: PayloadRefSchema.optional(),
  })
  .superRefine((v, ctx) => {
    const clear = v.payload !== undefined;
    if (clear && v.payload_ref !== undefined) {
      addWardenIssue(ctx, "ERR_CONTRACT_PAYLOAD_FORM", "payload and payload_ref are mutually exclusive", [
        "payload_ref",
      ]);
      return;
    }
    if (!clear) {
      if (v.payload_hash === undefined || v.payload_ref === undefined) {
        addWardenIssue(
          ctx,
          "ERR_CONTRACT_PAYLOAD_FORM",
          "without a clear payload, payload_hash and payload_ref are both required",
        );
      }
      return;
    }
    if (v.payload_hash !== undefined) {
      const actual = hashOrIssue(v.payload, ctx, ["payload"]);
      if (actual !== undefined && actual !== v.payload_hash) {
        addWardenIssue(ctx, "ERR_CONTRACT_HASH_MISMATCH", "payload_hash is not the hash of payload", [
          "payload_hash",
        ]);
      }
    }
  })
  .meta({
    description:
      "Clear form: payload (payload_hash, if present, must be its hash). Reference form: payload_hash + payload_ref, no payload.",
  });
export type ToolInputs = z.infer<typeof ToolInputsSchema>;

export const ToolContextSchema = z.strictObject({
  orm_risk_score: z.number().min(0).max(1).optional(),
  budgets: z
    .strictObject({
      tokens_remaining: z.number().optional(),
      tool_calls_remaining: z.int().optional(),
      cost_usd_remaining: z.number().optional(),
    })
    .optional(),
  source_labels: z.array(SourceLabelSchema).optional(),
  approval: z
    .strictObject({
      required: z.boolean().optional(),
      approval_id: UuidSchema.nullable().optional(),
    })
    .optional(),
});
export type ToolContext = z.infer<typeof ToolContextSchema>;

function toolRequestSchema<N extends Namespace>(ns: N) {
  return z
    .strictObject({
      schema_version: SchemaVersionSchema,
      event_type: z.literal(`${ns}.tool.request` as const),
      time: TimestampSchema,
      run_id: UuidSchema,
      trace_id: TraceIdSchema,
      span_id: SpanIdSchema.optional(),
      tenant_id: NonEmptyString,
      environment: EnvironmentSchema,
      control_plane_version: z.string().optional(),
      agent: AgentIdentitySchema,
      tool: z.strictObject({
        name: NonEmptyString,
        category: ToolCategorySchema,
        risk_tier: RiskTierSchema,
        idempotency_key: NonEmptyString.optional(),
      }),
      inputs: ToolInputsSchema,
      bundles: ToolBundlesSchema,
      hashes: z.strictObject({ request_hash: Sha256HashSchema }),
      context: ToolContextSchema,
    })
    .meta({ title: "ToolRequestEnvelope", description: "A governed tool call as proposed, before policy." });
}

export const ToolRequestEnvelopeSchema = toolRequestSchema("dare");
export const GateToolRequestEnvelopeSchema = toolRequestSchema("gate");
export type ToolRequestEnvelope = z.infer<typeof ToolRequestEnvelopeSchema>;
export type GateToolRequestEnvelope = z.infer<typeof GateToolRequestEnvelopeSchema>;

/**
 * Outputs carry a redacted view and/or the hash of the full output; the full
 * output itself lives behind snapshot_uri or payload_ref.
 */
export const ToolOutputsSchema = z
  .strictObject({
    content_type: NonEmptyString.optional(),
    payload_redacted: JsonValueSchema.optional(),
    payload_hash: Sha256HashSchema.optional(),
    payload_ref: PayloadRefSchema.optional(),
    snapshot_uri: NonEmptyString.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.payload_ref !== undefined && v.payload_hash === undefined) {
      addWardenIssue(ctx, "ERR_CONTRACT_PAYLOAD_FORM", "payload_ref requires payload_hash", ["payload_hash"]);
    }
  })
  .meta({ description: "payload_hash is the hash of the full output; payload_ref requires payload_hash." });
export type ToolOutputs = z.infer<typeof ToolOutputsSchema>;

export const ToolStatusSchema = z.enum(["success", "error", "denied", "timeout"]);
export type ToolStatus = z.infer<typeof ToolStatusSchema>;

function toolResponseSchema<N extends Namespace>(ns: N) {
  return z
    .strictObject({
      schema_version: SchemaVersionSchema,
      event_type: z.literal(`${ns}.tool.response` as const),
      time: TimestampSchema,
      run_id: UuidSchema,
      trace_id: TraceIdSchema,
      span_id: SpanIdSchema.optional(),
      tenant_id: NonEmptyString,
      environment: EnvironmentSchema,
      tool: z.strictObject({
        name: NonEmptyString,
        status: ToolStatusSchema,
        duration_ms: z.int().min(0).optional(),
        error_code: NonEmptyString.optional(),
      }),
      outputs: ToolOutputsSchema,
      hashes: z.strictObject({ response_hash: Sha256HashSchema }),
      policy: z.strictObject({
        decision_id: UuidSchema,
        decision: z.enum(["allow", "deny", "invariant_halt", "hitl_pending"]),
        obligations: z.array(NonEmptyString).optional(),
        policy_bundle_hash: Sha256HashSchema,
      }),
      evidence: z.strictObject({
        ledger_event_id: UuidSchema,
        replay_trace_step_id: NonEmptyString.optional(),
      }),
    })
    .meta({ title: "ToolResponseEnvelope", description: "The outcome of a governed tool call." });
}

export const ToolResponseEnvelopeSchema = toolResponseSchema("dare");
export const GateToolResponseEnvelopeSchema = toolResponseSchema("gate");
export type ToolResponseEnvelope = z.infer<typeof ToolResponseEnvelopeSchema>;
export type GateToolResponseEnvelope = z.infer<typeof GateToolResponseEnvelopeSchema>;

/**
 * request_hash binds the tool name and the payload hash (not the clear
 * payload), so redacting a payload into the reference form keeps the hash.
 */
export function toolRequestHash(
  toolName: string,
  inputs: { content_type: string; payload_hash: Sha256Hash },
): Sha256Hash {
  return sha256Of({
    content_type: inputs.content_type,
    payload_hash: inputs.payload_hash,
    tool_name: toolName,
  });
}

/** response_hash binds tool name, status and the hash of the full output (null when none). */
export function toolResponseHash(
  toolName: string,
  status: ToolStatus,
  payloadHash: Sha256Hash | null,
): Sha256Hash {
  return sha256Of({ payload_hash: payloadHash, status, tool_name: toolName });
}

type Defaulted = "schema_version" | "event_type" | "time" | "span_id" | "inputs" | "hashes" | "context";

export type ToolRequestInputs =
  /** Clear form: the payload is kept in the record. */
  | { content_type?: string; payload: JsonValue; payload_ref?: undefined }
  /** Reference form from the clear payload: its hash is computed, the payload dropped. */
  | { content_type?: string; payload: JsonValue; payload_ref: PayloadRef }
  /** Reference form when only the hash is at hand. */
  | { content_type?: string; payload_hash: Sha256Hash; payload_ref: PayloadRef };

export type BuildToolRequestInput = Omit<ToolRequestEnvelope, Defaulted> & {
  time?: string | undefined;
  span_id?: string | undefined;
  inputs: ToolRequestInputs;
  context?: ToolContext | undefined;
};

const TOOL_REQUEST_FIXED = { schema_version: SCHEMA_VERSION, event_type: "dare.tool.request" } as const;

/** Build a dare.tool.request: fills version, type, time, span_id, payload/request hashes. Throws on invalid input. */
export function buildToolRequest(input: BuildToolRequestInput): ToolRequestEnvelope {
  const { inputs: given, time, span_id, context, ...rest } = input;
  const content_type = given.content_type ?? "application/json";
  const payload_hash = "payload" in given ? sha256Of(given.payload) : given.payload_hash;
  const inputs: ToolInputs =
    given.payload_ref === undefined && "payload" in given
      ? { content_type, payload: given.payload, payload_hash }
      : { content_type, payload_hash, payload_ref: given.payload_ref as PayloadRef };
  return checkBuilt(ToolRequestEnvelopeSchema, {
    ...TOOL_REQUEST_FIXED,
    time: time ?? nowTimestamp(),
    ...rest,
    ...TOOL_REQUEST_FIXED, // after rest: a caller cannot override them
    span_id: span_id ?? newSpanId(),
    inputs,
    hashes: { request_hash: toolRequestHash(rest.tool.name, { content_type, payload_hash }) },
    context: context ?? {},
  });
}

export type BuildToolResponseInput = Omit<
  ToolResponseEnvelope,
  "schema_version" | "event_type" | "time" | "span_id" | "outputs" | "hashes"
> & {
  time?: string | undefined;
  span_id?: string | undefined;
  /** The full tool output; only its hash is recorded. */
  output?: JsonValue | undefined;
  outputs?: Omit<ToolOutputs, "payload_hash"> | undefined;
};

const TOOL_RESPONSE_FIXED = { schema_version: SCHEMA_VERSION, event_type: "dare.tool.response" } as const;

/** Build a dare.tool.response: fills version, type, time, span_id, output/response hashes. Throws on invalid input. */
export function buildToolResponse(input: BuildToolResponseInput): ToolResponseEnvelope {
  const { output, outputs, time, span_id, ...rest } = input;
  const payload_hash = output === undefined ? undefined : sha256Of(output);
  return checkBuilt(ToolResponseEnvelopeSchema, {
    ...TOOL_RESPONSE_FIXED,
    time: time ?? nowTimestamp(),
    ...rest,
    ...TOOL_RESPONSE_FIXED, // after rest: a caller cannot override them
    span_id: span_id ?? newSpanId(),
    outputs: {
      ...(output !== undefined ? { content_type: "application/json" } : {}),
      ...outputs,
      ...(payload_hash !== undefined ? { payload_hash } : {}),
    },
    hashes: { response_hash: toolResponseHash(rest.tool.name, rest.tool.status, payload_hash ?? null) },
  });
}
