// ReplayTrace (DARE "Control Plane Contracts"; GATE replay_trace.schema.json):
// everything non-deterministic at the tool/memory boundary, enough to replay a
// run from snapshots and pinned bundles. It has no event_type in either text; the
// registry names it dare.replay.trace / gate.replay.trace.
import { z } from "zod";
import {
  addWardenIssue,
  checkBuilt,
  EnvironmentSchema,
  NonEmptyString,
  nowTimestamp,
  SchemaVersionSchema,
  Sha256HashSchema,
  TimestampSchema,
  TraceIdSchema,
  UuidSchema,
  VERSION_FIXED,
} from "./common.js";

export const ReplayStepTypeSchema = z.enum([
  "retrieve_context",
  "tool_call",
  "tool_deny",
  "invariant_halt",
  "memory_read",
  "memory_write",
  "hitl_gate",
  "breaker_trigger",
  "final_output",
]);
export type ReplayStepType = z.infer<typeof ReplayStepTypeSchema>;

export const ReplayStepSchema = z.strictObject({
  step_index: z.int().min(1),
  step_type: ReplayStepTypeSchema,
  tool_name: NonEmptyString.optional(),
  request_hash: Sha256HashSchema.optional(),
  response_hash: Sha256HashSchema.optional(),
  response_snapshot_uri: NonEmptyString.optional(),
  policy_decision_id: UuidSchema.optional(),
  ledger_event_id: UuidSchema.optional(),
  invariant_rule_id: NonEmptyString.optional(),
  retrieved_context_hashes: z.array(Sha256HashSchema).optional(),
  provenance_refs: z.array(NonEmptyString).optional(),
  output_hash: Sha256HashSchema.optional(),
  hitl_approval_id: UuidSchema.nullable().optional(),
  timestamp: TimestampSchema.optional(),
  duration_ms: z.int().min(0).optional(),
});
export type ReplayStep = z.infer<typeof ReplayStepSchema>;

/**
 * Fields a step of each type must carry to be replayable. A tool call without
 * its request hash and decision id would break DARE's first conformance check
 * ("no tool execution without a policy decision record linked to the request hash").
 */
export const REPLAY_STEP_REQUIRED: Readonly<Partial<Record<ReplayStepType, readonly (keyof ReplayStep)[]>>> =
  {
    retrieve_context: ["retrieved_context_hashes"],
    tool_call: ["tool_name", "request_hash", "policy_decision_id"],
    tool_deny: ["tool_name", "request_hash", "policy_decision_id"],
    invariant_halt: ["invariant_rule_id"],
    final_output: ["output_hash"],
  };

export const ReplayTraceSchema = z
  .strictObject({
    schema_version: SchemaVersionSchema,
    trace_id: TraceIdSchema,
    run_id: UuidSchema,
    tenant_id: NonEmptyString,
    environment: EnvironmentSchema,
    created_at: TimestampSchema.optional(),
    agent: z.strictObject({
      agent_instance_id: NonEmptyString,
      agent_name: NonEmptyString,
      agent_version: NonEmptyString,
    }),
    model: z.strictObject({
      model_id: NonEmptyString,
      model_version: NonEmptyString,
      temperature: z.number().min(0).max(2).optional(),
      seed: z.int().nullable().optional(),
      decoding: z.enum(["greedy", "sampled", "beam"]).optional(),
      max_tokens: z.int().min(1).optional(),
    }),
    bundles: z.strictObject({
      prompt_bundle_hash: Sha256HashSchema.optional(),
      policy_bundle_hash: Sha256HashSchema,
      tool_schema_hash: Sha256HashSchema,
    }),
    steps: z.array(ReplayStepSchema),
    replay_metadata: z
      .strictObject({
        replay_mode: z.enum(["mock_all", "mock_external", "live"]).optional(),
        harness_version: NonEmptyString.optional(),
        completed_at: TimestampSchema.optional(),
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    v.steps.forEach((step, i) => {
      if (step.step_index !== i + 1) {
        addWardenIssue(
          ctx,
          "ERR_CONTRACT_RECORD_INVALID",
          `step_index must be ${i + 1} (steps are ordered)`,
          ["steps", i, "step_index"],
        );
      }
      for (const field of REPLAY_STEP_REQUIRED[step.step_type] ?? []) {
        if (step[field] === undefined) {
          addWardenIssue(ctx, "ERR_CONTRACT_RECORD_INVALID", `${step.step_type} step requires ${field}`, [
            "steps",
            i,
            field,
          ]);
        }
      }
    });
  })
  .meta({ title: "ReplayTrace", description: "The governed-boundary record of one run, for replay." });
export type ReplayTrace = z.infer<typeof ReplayTraceSchema>;
/** The GATE form is the same record (no field differs). */
export const GateReplayTraceSchema = ReplayTraceSchema;
export type GateReplayTrace = ReplayTrace;

export type BuildReplayTraceInput = Omit<ReplayTrace, "schema_version" | "created_at" | "steps"> & {
  created_at?: string | undefined;
  /** Steps in order; step_index is assigned 1, 2, 3, ... */
  steps: Omit<ReplayStep, "step_index">[];
};

/** Build a ReplayTrace: fills version, created_at and step indexes. Throws on invalid input. */
export function buildReplayTrace(input: BuildReplayTraceInput): ReplayTrace {
  const { created_at, steps, ...rest } = input;
  return checkBuilt(ReplayTraceSchema, {
    ...VERSION_FIXED,
    ...rest,
    ...VERSION_FIXED, // after rest: a caller cannot override it
    created_at: created_at ?? nowTimestamp(),
    steps: steps.map((s, i) => ({ step_index: i + 1, ...s })),
  });
}
