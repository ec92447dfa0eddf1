// The sealed message on the wire (`warden.msg.v1`). The header travels in clear (the
// communication gate judges it without decrypting) and is bound three ways: as the
// AEAD's additional data, into the HKDF info, and into the sender's Ed25519 signature,
// which covers GATE's signing input {time, nonce, sender, recipient, payload_hash} where
// payload_hash is the hash of the DARE payload naming the header's and ciphertext's
// hashes. Anything else on the wire (no signature, no ciphertext, another algorithm) is
// a downgrade and is refused as ERR_MESSAGE_UNSIGNED before it is looked at further.
import { z } from "zod";
import {
  type AgentMessagePayload,
  agentMessageSigningInput,
  canonicalBytes,
  MessagingError,
  type Sha256Hash,
  sha256Hex,
  sha256Of,
  UUID_PATTERN,
} from "../contracts/index.js";

export const WIRE_VERSION = "warden.msg.v1";
export const WIRE_ALG = "EdDSA+X25519-HKDF-SHA256-A256GCM";
export const PRIMITIVES = ["ask", "delegate", "send", "parallel", "race"] as const;
export type Primitive = (typeof PRIMITIVES)[number];
export const PAYLOAD_TYPES = ["delegate_task", "return_result", "status_update", "escalation"] as const;
export type PayloadType = (typeof PAYLOAD_TYPES)[number];

/** Plaintext payloads above this are refused (the sidecar's body limit is larger). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
export const MAX_DEPTH = 16;

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:@/-]*$/);
const B64 = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/)
    // Canonical base64url only: stray bits in the last character would be a second
    // spelling of the same bytes, and a flipped bit must never go unnoticed.
    .refine((s) => Buffer.from(s, "base64url").toString("base64url") === s, "non-canonical base64url");
const Time = z.iso.datetime({ offset: false, precision: 3 });
const Uuid = z.string().regex(UUID_PATTERN);

export const MessageHeaderSchema = z.strictObject({
  message_id: Uuid,
  sender: Id,
  recipient: Id,
  primitive: z.enum(PRIMITIVES),
  payload_type: z.enum(PAYLOAD_TYPES),
  task_id: Uuid,
  run_id: Id.optional(),
  depth: z.int().min(0).max(MAX_DEPTH),
  nonce: B64(22, 22),
  time: Time,
  expires_at: Time,
  key_id: B64(43, 43),
  epk: B64(43, 43),
});
export type MessageHeader = z.infer<typeof MessageHeaderSchema>;

export const SealedMessageSchema = z.strictObject({
  v: z.literal(WIRE_VERSION),
  alg: z.literal(WIRE_ALG),
  header: MessageHeaderSchema,
  iv: B64(16, 16),
  ciphertext: B64(1, Math.ceil((MAX_PAYLOAD_BYTES * 4) / 3) + 4),
  tag: B64(22, 22),
  signature: B64(86, 86),
});
export type SealedMessage = z.infer<typeof SealedMessageSchema>;

/** Parses a sealed message; a downgrade (unsigned, unencrypted, other algorithm) is ERR_MESSAGE_UNSIGNED. */
export function parseSealed(value: unknown): SealedMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new MessagingError("ERR_MESSAGE_MALFORMED", "a sealed message is a JSON object");
  const v = value as Record<string, unknown>;
  const sig = v.signature;
  if (
    v.v !== WIRE_VERSION ||
    v.alg !== WIRE_ALG ||
    typeof sig !== "string" ||
    sig.length === 0 ||
    typeof v.ciphertext !== "string" ||
    "payload" in v
  )
    throw new MessagingError(
      "ERR_MESSAGE_UNSIGNED",
      `only signed and encrypted ${WIRE_VERSION} messages are accepted`,
    );
  const parsed = SealedMessageSchema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const path = first?.path.map(String).join(".") ?? "";
    throw new MessagingError("ERR_MESSAGE_MALFORMED", `sealed message invalid at ${path || "(root)"}`);
  }
  return parsed.data;
}

/** The DARE agent_instance_id of the sender: its id, with its run when it names one. */
export function agentInstanceId(h: MessageHeader): string {
  return h.run_id === undefined ? h.sender : `${h.sender}#${h.run_id}`;
}

/** sha256 over iv ‖ ciphertext ‖ tag (the sealed bytes, in that order). */
export function ciphertextHash(m: Pick<SealedMessage, "iv" | "ciphertext" | "tag">): Sha256Hash {
  return sha256Hex(
    Buffer.concat([
      Buffer.from(m.iv, "base64url"),
      Buffer.from(m.ciphertext, "base64url"),
      Buffer.from(m.tag, "base64url"),
    ]),
  );
}

/** The DARE payload of the envelope: what the gate can attest without decrypting. */
export function darePayload(h: MessageHeader, m: Pick<SealedMessage, "iv" | "ciphertext" | "tag">) {
  return {
    type: h.payload_type,
    task_id: h.task_id,
    inputs: {
      sealed: {
        alg: WIRE_ALG,
        header_hash: sha256Of(h),
        ciphertext_hash: ciphertextHash(m),
      },
    },
  } satisfies AgentMessagePayload;
}

/** The bytes the sender signs: GATE's signing input over the DARE payload's hash. */
export function signingInput(
  h: MessageHeader,
  m: Pick<SealedMessage, "iv" | "ciphertext" | "tag">,
): Uint8Array {
  return agentMessageSigningInput({
    time: h.time,
    protocol: { nonce: h.nonce },
    sender: { agent_instance_id: agentInstanceId(h) },
    recipient: { subject_id: h.recipient },
    hashes: { payload_hash: sha256Of(darePayload(h, m)) },
  });
}

/** The AEAD's additional data: the canonical header. */
export function headerAad(h: MessageHeader): Buffer {
  return canonicalBytes(h);
}
