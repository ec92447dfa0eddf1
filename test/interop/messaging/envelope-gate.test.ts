// The DARE AgentMessageEnvelope the communication gate journals for a sealed message
// validates unchanged (in the gate namespace) against the published GATE JSON Schema,
// read in place (the approver-signed HITL record: hitl-gate.test.ts).
import { describe, expect, it } from "vitest";
import { toGateNamespace } from "../../../src/contracts/index.js";
import { buildEnvelope, generateMessagingKeys, PAYLOAD_TYPES, seal } from "../../../src/messaging/index.js";
import { gateValidator } from "../contracts/records-ajv.js";

const NOW = Date.parse("2026-01-01T10:00:00.000Z");

describe("GATE multi_agent_envelope.schema.json", () => {
  const planner = generateMessagingKeys("spiffe://org/agent/planner");
  const executor = generateMessagingKeys("spiffe://org/agent/executor");
  for (const payloadType of PAYLOAD_TYPES) {
    it(`a sealed ${payloadType} message's envelope validates`, () => {
      const m = seal(
        {
          recipient: executor.id,
          primitive: "delegate",
          payloadType,
          payload: { tool: "crm.update_contact", args: { contact_id: "123" } },
          runId: "0b7c8d2e-4f1a-4c3b-9d2e-1f0a2b3c4d5e",
          depth: 1,
        },
        planner,
        executor,
        NOW,
      );
      const gate = toGateNamespace(buildEnvelope(m, { tenantId: "tenant-123" }));
      const validate = gateValidator("agent_message");
      const ok = validate(gate);
      expect(validate.errors ?? []).toEqual([]);
      expect(ok).toBe(true);
    });
  }

  it("a message without a run still yields a valid envelope (run id from the message id)", () => {
    const m = seal(
      { recipient: executor.id, primitive: "send", payloadType: "status_update", payload: { ok: true } },
      planner,
      executor,
      NOW,
    );
    expect(gateValidator("agent_message")(toGateNamespace(buildEnvelope(m, { tenantId: "t" })))).toBe(true);
  });
});
