// The envelope's shape without the upstream vectors: Warden's own DARE and GATE schemas
// accept it, its payload hash is the hash of its payload, and its signature is the
// sender's, checkable offline with the sender's key alone (GATE's signing input).
import { describe, expect, it } from "vitest";
import {
  AgentMessageEnvelopeSchema,
  parseGateRecord,
  sha256Of,
  toGateNamespace,
} from "../../src/contracts/index.js";
import { buildEnvelope, generateMessagingKeys, seal, verifyEnvelope } from "../../src/messaging/index.js";

const NOW = Date.parse("2026-01-01T10:00:00.000Z");
const planner = generateMessagingKeys("planner");
const executor = generateMessagingKeys("executor");
const mallory = generateMessagingKeys("mallory");

function envelope() {
  const m = seal(
    {
      recipient: "executor",
      primitive: "ask",
      payloadType: "delegate_task",
      payload: { q: 1 },
      runId: "r-1",
      depth: 1,
    },
    planner,
    executor,
    NOW,
  );
  return { m, e: buildEnvelope(m, { tenantId: "tenant-1" }) };
}

describe("AgentMessageEnvelope of a sealed message", () => {
  it("has the DARE shape, and its gate form parses", () => {
    const { m, e } = envelope();
    expect(AgentMessageEnvelopeSchema.safeParse(e).success).toBe(true);
    expect(parseGateRecord("agent_message", toGateNamespace(e))).toMatchObject({ ok: true });
    expect(e.hashes.payload_hash).toBe(sha256Of(e.payload));
    expect(e).toMatchObject({
      event_type: "dare.agent.message",
      sender: { subject_id: "planner", agent_instance_id: "planner#r-1" },
      recipient: { subject_id: "executor" },
      protocol: { version: "1.0", nonce: m.header.nonce, expires_at: m.header.expires_at },
      signature: { key_id: planner.keyId, algorithm: "EdDSA", sig: m.signature },
    });
    // The plaintext is not in the envelope.
    expect(JSON.stringify(e)).not.toContain('"q"');
  });

  it("its signature verifies with the sender's key and with no other", () => {
    const { e } = envelope();
    expect(verifyEnvelope(e, planner)).toBe(true);
    expect(verifyEnvelope(e, { ...mallory, id: "planner" })).toBe(false);
  });

  it("an auditor detects a journaled envelope whose payload was rewritten", () => {
    const { e } = envelope();
    const payload = { ...e.payload, type: "escalation" as const };
    expect(verifyEnvelope({ ...e, payload, hashes: { payload_hash: sha256Of(payload) } }, planner)).toBe(
      false,
    );
  });
});
