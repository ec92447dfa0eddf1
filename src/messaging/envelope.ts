// The DARE AgentMessageEnvelope of a sealed message. The gate builds it without the
// payload's plaintext: its payload names the hashes of the header and the ciphertext, and
// its signature is the sender's own (GATE's signing input over that payload), so anyone
// holding the sender's public key can check the journaled envelope offline.
import {
  type AgentCapability,
  type AgentMessageEnvelope,
  AgentMessageEnvelopeSchema,
  agentMessageSigningInput,
  SCHEMA_VERSION,
  sha256Of,
} from "../contracts/index.js";
import { verify } from "../crypto/index.js";
import { dareRunId, runTraceId } from "../gate/index.js";
import type { MessagingIdentity } from "./identity.js";
import {
  agentInstanceId,
  darePayload,
  type MessageHeader,
  type PayloadType,
  type SealedMessage,
} from "./wire.js";

const CAPABILITY: Record<PayloadType, AgentCapability> = {
  delegate_task: "delegate_task",
  return_result: "return_result",
  status_update: "report_status",
  escalation: "escalate",
};

export interface EnvelopeContext {
  tenantId: string;
}

export function buildEnvelope(m: SealedMessage, ctx: EnvelopeContext): AgentMessageEnvelope {
  const h: MessageHeader = m.header;
  const run = h.run_id ?? h.message_id;
  const payload = darePayload(h, m);
  return AgentMessageEnvelopeSchema.parse({
    schema_version: SCHEMA_VERSION,
    event_type: "dare.agent.message",
    time: h.time,
    run_id: dareRunId(run),
    trace_id: runTraceId(run),
    tenant_id: ctx.tenantId,
    protocol: {
      version: "1.0",
      capabilities: [CAPABILITY[h.payload_type]],
      nonce: h.nonce,
      expires_at: h.expires_at,
    },
    sender: { agent_instance_id: agentInstanceId(h), subject_id: h.sender },
    recipient: { subject_id: h.recipient },
    payload,
    hashes: { payload_hash: sha256Of(payload) },
    signature: { key_id: h.key_id, algorithm: "EdDSA", sig: m.signature },
  });
}

/**
 * Checks a journaled envelope's signature with the sender's key, exactly as GATE
 * defines it: over canonical {time, nonce, sender.agent_instance_id, recipient.subject_id, payload_hash}.
 */
export function verifyEnvelope(e: AgentMessageEnvelope, sender: MessagingIdentity): boolean {
  if (e.sender.subject_id !== sender.id || e.signature.key_id !== sender.keyId) return false;
  return verify(sender.signing, agentMessageSigningInput(e), Buffer.from(e.signature.sig, "base64url"));
}
