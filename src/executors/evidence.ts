// Evidence envelopes (OATS §8.4, conformance C7): the forensic link between the
// decision that authorised an execution and its effect in the world. One envelope
// per execution that got past the ticket, alongside the DARE ToolResponseEnvelope
// built from the same facts; both are validated by their schemas before they leave.
import { createHash } from "node:crypto";
import { z } from "zod";
import {
  type Environment,
  type Sha256Hash,
  Sha256HashSchema,
  sha256Of,
  TaintLabel,
  type ToolResponseEnvelope,
  ToolResponseEnvelopeSchema,
  type ToolStatus,
  toolResponseHash,
  UUID_PATTERN,
} from "../contracts/index.js";
import { NOTIFY_DELIVERY_EVENT, NotifyDeliveryBody } from "./notifier.js";
import { OBLIGATIONS_EVENT, ObligationsBody } from "./obligations.js";

export const EVIDENCE_SCHEMA = "warden.evidence.v1" as const;

export const EXECUTION_STATUSES = ["success", "error", "timeout", "cancelled", "rejected"] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

const Str = z.string().min(1).max(4096);

/** The invocation as constructed by the executor (secrets masked): argv, HTTP request, SQL, file op, MCP call. */
export const InvocationSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("process"),
    binary: Str,
    argv: z.array(z.string()),
    cwd: Str,
    env_names: z.array(Str),
  }),
  z.strictObject({
    kind: z.literal("http"),
    method: Str,
    url: Str,
    headers: z.record(z.string(), z.string()),
    body_hash: Sha256HashSchema.nullable(),
    hops: z.array(
      z.strictObject({
        url: Str,
        address: z.string().nullable(),
        status: z.int().nullable(),
      }),
    ),
  }),
  z.strictObject({
    kind: z.literal("file"),
    op: z.enum(["read", "write", "list", "delete"]),
    path: z.string(),
    resolved: z.string().nullable(),
    bytes_in: z.int().min(0).optional(),
  }),
  z.strictObject({
    kind: z.literal("database"),
    engine: z.enum(["sqlite", "postgres"]),
    sql: Str,
    statement_class: z.enum(["read", "write", "ddl"]),
    param_count: z.int().min(0),
  }),
  z.strictObject({
    kind: z.literal("mcp"),
    server: Str,
    tool: Str,
    tool_hash: Sha256HashSchema.nullable(),
  }),
]);
export type Invocation = z.infer<typeof InvocationSchema>;

export const EvidenceEnvelope = z
  .strictObject({
    schema: z.literal(EVIDENCE_SCHEMA),
    evidence_id: z.string().regex(UUID_PATTERN),
    time: z.iso.datetime(),
    tool: z.strictObject({ name: Str, version: Str, class: Str, action: Str }),
    parameters: z.record(z.string(), z.json()),
    parameters_hash: Sha256HashSchema,
    /** null when the executor refused before constructing one (open breaker, bad parameters). */
    invocation: InvocationSchema.nullable(),
    started_at: z.iso.datetime(),
    duration_ms: z.int().min(0),
    status: z.enum(EXECUTION_STATUSES),
    exit: z.strictObject({
      code: z.int().nullable(),
      signal: z.string().nullable(),
      http_status: z.int().nullable(),
    }),
    error_code: z.string().optional(),
    /**
     * sha256 of the output bytes exactly as handed to the caller (before any parsing):
     * the bytes as received, except that known secret values are masked first.
     */
    output_hash: Sha256HashSchema.nullable(),
    output_bytes: z.int().min(0),
    /** Present when the executor masked this many secret occurrences in the output before hashing. */
    output_masked: z.int().min(1).optional(),
    decision_id: Str,
    run_id: Str,
    trace_id: z.string().regex(/^[0-9a-f]{32}$/),
    identity: z.strictObject({
      principal_id: Str,
      agent_id: Str.optional(),
      user_id: Str.optional(),
    }),
    taint: z.array(TaintLabel),
  })
  .meta({ title: "EvidenceEnvelope", description: "OATS §8.4 evidence of one tool execution." });
export type EvidenceEnvelope = z.infer<typeof EvidenceEnvelope>;

/** sha256 of raw bytes in Warden's hash notation. */
export function rawOutputHash(bytes: Uint8Array): Sha256Hash {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}` as Sha256Hash;
}

/** Deployment facts the DARE response needs and a ticket does not carry. */
export interface DareDeployment {
  tenantId?: string;
  environment?: Environment;
  /** Hash of the policy bundle that decided; the all-zero hash when the deployment does not say. */
  policyBundleHash?: Sha256Hash;
}

const ZERO_HASH = `sha256:${"0".repeat(64)}` as Sha256Hash;

/** DARE wants UUIDs; Warden run and decision ids may be any string, so map the others deterministically. */
export function uuidFor(id: string): string {
  if (UUID_PATTERN.test(id)) return id;
  const h = createHash("sha256").update(`warden-id:${id}`).digest("hex");
  const variant = ((Number.parseInt(h[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function dareStatus(status: ExecutionStatus): ToolStatus {
  switch (status) {
    case "success":
      return "success";
    case "timeout":
      return "timeout";
    case "rejected":
      return "denied";
    default:
      return "error";
  }
}

/** The DARE ToolResponseEnvelope for an evidence envelope; payload_hash is the raw output hash. */
export function toolResponseFor(
  ev: EvidenceEnvelope,
  deployment: DareDeployment = {},
  contentType?: string,
): ToolResponseEnvelope {
  const status = dareStatus(ev.status);
  const record = {
    schema_version: "v1",
    event_type: "dare.tool.response",
    time: ev.time,
    run_id: uuidFor(ev.run_id),
    trace_id: ev.trace_id,
    tenant_id: deployment.tenantId ?? "default",
    environment: deployment.environment ?? "dev",
    tool: {
      name: ev.tool.name,
      status,
      duration_ms: ev.duration_ms,
      ...(ev.error_code !== undefined ? { error_code: ev.error_code } : {}),
    },
    outputs: {
      ...(contentType !== undefined ? { content_type: contentType } : {}),
      ...(ev.output_hash !== null ? { payload_hash: ev.output_hash } : {}),
    },
    hashes: { response_hash: toolResponseHash(ev.tool.name, status, ev.output_hash) },
    policy: {
      decision_id: uuidFor(ev.decision_id),
      decision: "allow",
      policy_bundle_hash: deployment.policyBundleHash ?? ZERO_HASH,
    },
    evidence: { ledger_event_id: ev.evidence_id },
  };
  return ToolResponseEnvelopeSchema.parse(record);
}

export function parametersHash(parameters: Readonly<Record<string, unknown>>): Sha256Hash {
  return sha256Of(parameters);
}

/** Journal event types written by executors, with their body schemas (register them with the journal). */
export const EXECUTOR_EVENT_TYPES = {
  "warden.executor.evidence": EvidenceEnvelope,
  [NOTIFY_DELIVERY_EVENT]: NotifyDeliveryBody,
  [OBLIGATIONS_EVENT]: ObligationsBody,
  "warden.executor.breaker": z.strictObject({
    tool: Str,
    from: z.enum(["closed", "open", "half_open"]),
    to: z.enum(["closed", "open", "half_open"]),
    consecutive_failures: z.int().min(0),
    at: z.iso.datetime(),
  }),
  "warden.executor.ticket_rejected": z.strictObject({
    executor: Str,
    tool: Str,
    code: Str,
  }),
  "warden.executor.mcp_tool_pinned": z.strictObject({ server: Str, tool: Str, tool_hash: Sha256HashSchema }),
  "warden.executor.mcp_tool_changed": z.strictObject({
    server: Str,
    tool: Str,
    pinned_hash: Sha256HashSchema,
    observed_hash: Sha256HashSchema,
  }),
  "warden.executor.mcp_tool_approved": z.strictObject({
    server: Str,
    tool: Str,
    tool_hash: Sha256HashSchema,
    previous_hash: Sha256HashSchema.nullable(),
  }),
  /** Hidden instructions found in a tool's definition (src/executors/mcp-scan.ts). */
  "warden.executor.mcp_tool_flagged": z.strictObject({
    server: Str,
    tool: Str,
    tool_hash: Sha256HashSchema,
    findings: z
      .array(
        z.strictObject({
          kind: z.enum(["tag_characters", "invisible_text", "instruction", "shadowing"]),
          where: Str,
          detail: Str,
        }),
      )
      .min(1)
      .max(64),
    refused: z.boolean(),
  }),
} as const satisfies Record<string, z.ZodType>;
export type ExecutorEventType = keyof typeof EXECUTOR_EVENT_TYPES;

/** Registers the executor event types in a journal event-type registry (skips ones already present). */
export function registerExecutorEventTypes(registry: {
  has(type: string): boolean;
  register(type: string, schema: z.ZodType): void;
}): void {
  for (const [type, schema] of Object.entries(EXECUTOR_EVENT_TYPES)) {
    if (!registry.has(type)) registry.register(type, schema);
  }
}
