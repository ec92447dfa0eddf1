// AgentMessageEnvelope (DARE "Control Plane Contracts"; GATE
// multi_agent_envelope.schema.json): signed, nonce-protected, expiring envelope for
// agent-to-agent messages. payload_hash must be the hash of the payload it travels with.

import { randomBytes } from "node:crypto";
import { z } from "zod";
import { canonicalBytes, type Sha256Hash, sha256Of } from "../canonical-json.js";
import { uuidv7 } from "../ids.js";
import { isoTime } from "../values.js";
import {
  addWardenIssue,
  checkBuilt,
  hashOrIssue,
  JsonValueSchema,
  type Namespace,
  NonEmptyString,
  nowTimestamp,
  SCHEMA_VERSION,
  SchemaVersionSchema,
  Sha256HashSchema,
  SignatureTextSchema,
  TimestampSchema,
  TraceIdSchema,
  UuidSchema,
} from "./common.js";

export const AgentCapabilitySchema = z.enum([
  "delegate_task",
  "return_result",
  "request_approval",
  "report_status",
  "escalate",
]);
export type AgentCapability = z.infer<typeof AgentCapabilitySchema>;

export const AgentMessagePayloadSchema = z.strictObject({
  type: z.enum(["delegate_task", "return_result", "status_update", "escalation"]),
  task_id: UuidSchema,
  inputs: JsonValueSchema.optional(),
  result: JsonValueSchema.optional(),
  parent_run_id: UuidSchema.optional(),
});
export type AgentMessagePayload = z.infer<typeof AgentMessagePayloadSchema>;

function agentMessageSchema<N extends Namespace>(ns: N) {
  return z
    .strictObject({
      schema_version: SchemaVersionSchema,
      event_type: z.literal(`${ns}.agent.message` as const),
      time: TimestampSchema,
      run_id: UuidSchema,
      trace_id: TraceIdSchema,
      tenant_id: NonEmptyString,
      protocol: z.strictObject({
        version: z.literal("1.0"),
        capabilities: z.array(AgentCapabilitySchema).optional(),
        nonce: z.string().min(16),
        expires_at: TimestampSchema,
      }),
      sender: z.strictObject({
        agent_instance_id: NonEmptyString,
        subject_id: NonEmptyString,
      }),
      recipient: z.strictObject({
        subject_id: NonEmptyString,
        instance_hint: NonEmptyString.optional(),
      }),
      payload: AgentMessagePayloadSchema,
      hashes: z.strictObject({ payload_hash: Sha256HashSchema }),
      signature: z.strictObject({
        key_id: NonEmptyString,
        algorithm: z.enum(["ES256", "ES384", "EdDSA"]).optional(),
        sig: SignatureTextSchema,
      }),
    })
    .superRefine((v, ctx) => {
      const actual = hashOrIssue(v.payload, ctx, ["payload"]);
      if (actual !== undefined && actual !== v.hashes.payload_hash) {
        addWardenIssue(ctx, "ERR_CONTRACT_HASH_MISMATCH", "payload_hash is not the hash of payload", [
          "hashes",
          "payload_hash",
        ]);
      }
      if (Date.parse(v.protocol.expires_at) <= Date.parse(v.time)) {
        addWardenIssue(ctx, "ERR_CONTRACT_RECORD_INVALID", "expires_at must be after time", [
          "protocol",
          "expires_at",
        ]);
      }
    })
    .meta({ title: "AgentMessageEnvelope", description: "A signed message from one agent to another." });
}

export const AgentMessageEnvelopeSchema = agentMessageSchema("dare");
export const GateAgentMessageEnvelopeSchema = agentMessageSchema("gate");
export type AgentMessageEnvelope = z.infer<typeof AgentMessageEnvelopeSchema>;
export type GateAgentMessageEnvelope = z.infer<typeof GateAgentMessageEnvelopeSchema>;

/**
 * The bytes the signature covers. GATE names the signed fields as
 * {time, nonce, sender.agent_instance_id, recipient.subject_id, payload_hash};
 * Warden reads the dotted names as nested objects and signs their canonical JSON.
 */
export function agentMessageSigningInput(m: {
  time: string;
  protocol: { nonce: string };
  sender: { agent_instance_id: string };
  recipient: { subject_id: string };
  hashes: { payload_hash: Sha256Hash | string };
}): Uint8Array {
  return canonicalBytes({
    nonce: m.protocol.nonce,
    payload_hash: m.hashes.payload_hash,
    recipient: { subject_id: m.recipient.subject_id },
    sender: { agent_instance_id: m.sender.agent_instance_id },
    time: m.time,
  });
}

/** 128 random bits as base64url (22 characters, above GATE's 16-character minimum). */
export function newNonce(): string {
  return randomBytes(16).toString("base64url");
}

export const DEFAULT_MESSAGE_TTL_MS = 60_000;

export interface MessageSigner {
  key_id: string;
  algorithm?: "ES256" | "ES384" | "EdDSA";
  /** Signs agentMessageSigningInput(message); returns base64url. */
  sign(message: Uint8Array): string;
}

export type BuildAgentMessageInput = Omit<
  AgentMessageEnvelope,
  "schema_version" | "event_type" | "time" | "protocol" | "payload" | "hashes" | "signature"
> & {
  time?: string | undefined;
  protocol?: {
    capabilities?: AgentCapability[] | undefined;
    nonce?: string | undefined;
    expires_at?: string | undefined;
  };
  payload: Omit<AgentMessagePayload, "task_id"> & { task_id?: string | undefined };
  signer: MessageSigner;
};

const MESSAGE_FIXED = { schema_version: SCHEMA_VERSION, event_type: "dare.agent.message" } as const;

/** Build and sign a dare.agent.message: fills version, type, time, nonce, expiry (60 s), task_id, payload_hash. */
export function buildAgentMessage(input: BuildAgentMessageInput): AgentMessageEnvelope {
  const { time: givenTime, protocol = {}, payload: givenPayload, signer, ...rest } = input;
  const time = givenTime ?? nowTimestamp();
  const payload = { ...givenPayload, task_id: givenPayload.task_id ?? uuidv7() };
  const unsigned = {
    ...MESSAGE_FIXED,
    time,
    ...rest,
    ...MESSAGE_FIXED, // after rest: a caller cannot override them
    protocol: {
      version: "1.0" as const,
      ...(protocol.capabilities !== undefined ? { capabilities: protocol.capabilities } : {}),
      nonce: protocol.nonce ?? newNonce(),
      expires_at: protocol.expires_at ?? isoTime(Date.parse(time) + DEFAULT_MESSAGE_TTL_MS),
    },
    payload,
    hashes: { payload_hash: sha256Of(payload) },
  };
  return checkBuilt(AgentMessageEnvelopeSchema, {
    ...unsigned,
    signature: {
      key_id: signer.key_id,
      ...(signer.algorithm !== undefined ? { algorithm: signer.algorithm } : {}),
      sig: signer.sign(agentMessageSigningInput(unsigned)),
    },
  });
}
