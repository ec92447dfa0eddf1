// The journal entries of the communication gate: `warden.message.sent` (the message was
// allowed; durable before it reaches the inbox; carries the DARE AgentMessageEnvelope
// and, for a message from a run, the cross-agent context it hands over) and
// `warden.message.refused` (coded). Registered with the journal's registry so append and
// offline verification check the bodies.
import { z } from "zod";
import { AgentMessageEnvelopeSchema, Sha256HashSchema, TaintLabel } from "../contracts/index.js";
import { defaultEventTypes, type EventTypeRegistry } from "../journal/index.js";
import { PAYLOAD_TYPES, PRIMITIVES } from "./wire.js";

export const MESSAGE_SENT_EVENT = "warden.message.sent";
export const MESSAGE_REFUSED_EVENT = "warden.message.refused";

const Str = z.string().min(1).max(256);

/** What travels with a message from a run (OATS §10.4): never the model's free text. */
export const CrossAgentContextSchema = z.strictObject({
  parent_run: Str,
  parent_principal: Str,
  depth: z.int().min(0).max(64),
  /** The user's original request of the delegating run: its hash and a bounded prefix. */
  original_request_hash: Sha256HashSchema.optional(),
  original_request_summary: z.string().max(200).optional(),
  /** What the delegating run did so far: counters and its last actions (class, action, decision). */
  prior_actions: z.strictObject({
    proposed: z.int().min(0),
    allowed: z.int().min(0),
    denied: z.int().min(0),
    executed: z.int().min(0),
    recent: z
      .array(
        z.strictObject({
          toolClass: Str,
          action: Str,
          tool: Str.optional(),
          decision: Str,
        }),
      )
      .max(16),
  }),
  taint: z.array(TaintLabel).max(256),
  classifications: z.array(Str).max(64),
});
export type CrossAgentContext = z.infer<typeof CrossAgentContextSchema>;

export const MessageSentBodySchema = z.strictObject({
  message_id: Str,
  from: Str,
  to: Str,
  primitive: z.enum(PRIMITIVES),
  payload_type: z.enum(PAYLOAD_TYPES),
  depth: z.int().min(0).max(64),
  run_id: Str.optional(),
  task_id: Str,
  expires_at: Str,
  reason_codes: z.array(Str).max(64),
  matched_rules: z.array(Str).max(64),
  policy_bundle_hash: Sha256HashSchema,
  context: CrossAgentContextSchema.optional(),
  dare: AgentMessageEnvelopeSchema,
});
export type MessageSentBody = z.infer<typeof MessageSentBodySchema>;

export const MessageRefusedBodySchema = z.strictObject({
  code: Str,
  /** The authenticated principal that submitted it. */
  submitted_by: Str,
  /** Header fields as claimed (present only when the header parsed). */
  message_id: Str.optional(),
  from: Str.optional(),
  to: Str.optional(),
  primitive: Str.optional(),
  payload_type: Str.optional(),
  depth: z.int().min(0).max(64).optional(),
  reason_codes: z.array(Str).max(64).optional(),
  matched_rules: z.array(Str).max(64).optional(),
});
export type MessageRefusedBody = z.infer<typeof MessageRefusedBodySchema>;

const TYPES: Record<string, z.ZodType> = {
  [MESSAGE_SENT_EVENT]: MessageSentBodySchema,
  [MESSAGE_REFUSED_EVENT]: MessageRefusedBodySchema,
};

/** Registers the message event types (idempotent). */
export function registerMessageEventTypes(
  registry: Pick<EventTypeRegistry, "has" | "register"> = defaultEventTypes,
): void {
  for (const [type, schema] of Object.entries(TYPES))
    if (!registry.has(type)) registry.register(type, schema);
}
