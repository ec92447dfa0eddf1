// Builders fill what the caller should not have to (version, type, time, ids,
// hashes, signatures over the right bytes) and refuse input that cannot make a
// valid record.
import { describe, expect, it } from "vitest";
import {
  agentMessageSigningInput,
  buildLedgerEvent,
  buildPolicyDecision,
  buildReplayTrace,
  buildToolRequest,
  GENESIS,
  hasErrorCode,
  hitlSigningInput,
  ledgerEventHash,
  ledgerSigningInput,
  parseRecord,
  RECORD_KINDS,
  RECORD_SCHEMAS,
  type RecordKind,
  recordKindOf,
  recordSchemaFor,
  recordTypeOf,
  sha256Of,
  toGateNamespace,
  toolRequestHash,
  toolResponseHash,
  UUID_PATTERN,
  uuidv7Time,
} from "../../src/contracts/index.js";
import {
  fakeSign,
  sampleAgentMessage,
  sampleHitlDecision,
  sampleLedgerEvent,
  samplePolicyDecision,
  sampleReplayTrace,
  sampleSensitiveToolRequest,
  samplesByKind,
  sampleToolRequest,
  sampleToolResponse,
} from "./records-samples.js";

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

describe("builders", () => {
  it("every sample parses as its kind", () => {
    const samples = samplesByKind();
    for (const kind of Object.keys(samples) as RecordKind[]) {
      for (const [, record] of samples[kind]) expect(parseRecord(kind, record)).toEqual({ ok: true, record });
    }
  });

  it("fill schema_version, dare.* event_type, RFC 3339 UTC time and span id", () => {
    const r = sampleToolRequest();
    expect(r.schema_version).toBe("v1");
    expect(r.event_type).toBe("dare.tool.request");
    expect(r.time).toMatch(RFC3339_UTC);
    expect(r.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it("hash the clear payload and bind tool name + payload hash into request_hash", () => {
    const r = sampleToolRequest();
    expect(r.inputs.payload_hash).toBe(sha256Of({ contact_id: "123", email: "new@example.com" }));
    expect(r.hashes.request_hash).toBe(
      toolRequestHash(r.tool.name, {
        content_type: "application/json",
        payload_hash: r.inputs.payload_hash!,
      }),
    );
  });

  it("reference form: drops the payload, keeps its hash, and keeps the request_hash of the clear form", () => {
    const sensitive = sampleSensitiveToolRequest();
    expect(sensitive.inputs).not.toHaveProperty("payload");
    expect(sensitive.inputs.payload_hash).toBe(sha256Of({ employee_id: "e-77", salary_eur: 91000 }));
    expect(sensitive.inputs.payload_ref?.uri).toBe("protected://payloads/4f1c");
    const { payload_ref: _ref, ...clearInputs } = sensitive.inputs;
    const clear = buildToolRequest({
      ...sensitive,
      inputs: { payload: { employee_id: "e-77", salary_eur: 91000 } },
    });
    expect(clearInputs.payload_hash).toBe(clear.inputs.payload_hash);
    expect(clear.hashes.request_hash).toBe(sensitive.hashes.request_hash);
  });

  it("tool response: records only the hash of the full output", () => {
    const r = sampleToolResponse();
    const output = { updated: true, contact: { id: "123", email: "new@example.com" } };
    expect(r.outputs.payload_hash).toBe(sha256Of(output));
    expect(JSON.stringify(r)).not.toContain("new@example.com");
    expect(r.hashes.response_hash).toBe(toolResponseHash(r.tool.name, "success", sha256Of(output)));
  });

  it("policy decision: a UUIDv7 decision_id linked to the request hash", () => {
    const request = sampleToolRequest();
    const d = samplePolicyDecision(request);
    expect(d.decision_id).toMatch(UUID_PATTERN);
    expect(Math.abs(uuidv7Time(d.decision_id) - Date.now())).toBeLessThan(60_000);
    expect(d.inputs.request_hash).toBe(request.hashes.request_hash);
  });

  it("ledger event: sealed over the gate form, signed over event_hash, chainable", () => {
    const seen: Uint8Array[] = [];
    const first = sampleLedgerEvent();
    expect(first.hash_chain.prev_event_hash).toBe(GENESIS);
    expect(first.hash_chain.event_hash).toBe(ledgerEventHash(first));
    expect(first.hash_chain.event_hash).toBe(ledgerEventHash(toGateNamespace(first)));
    expect(first.signatures.signature).toBe(fakeSign(ledgerSigningInput(first.hash_chain.event_hash)));
    const {
      ledger_event_id: _id,
      time: _t,
      hash_chain: _h,
      signatures: _s,
      event_type: _e,
      schema_version: _v,
      ...rest
    } = first;
    const second = buildLedgerEvent({
      ...rest,
      sequence_number: 1,
      prev_event_hash: first.hash_chain.event_hash,
      signer: {
        signing_key_id: "kid-123",
        sign: (m) => {
          seen.push(m);
          return fakeSign(m);
        },
      },
    });
    expect(second.hash_chain.prev_event_hash).toBe(first.hash_chain.event_hash);
    expect(new TextDecoder().decode(seen[0])).toBe(second.hash_chain.event_hash);
    expect(parseRecord("ledger_event", second)).toMatchObject({ ok: true });
  });

  it("agent message: nonce, 60 s expiry, task_id, payload hash, signature over the GATE signing fields", () => {
    const m = sampleAgentMessage();
    expect(m.protocol.nonce.length).toBeGreaterThanOrEqual(16);
    expect(Date.parse(m.protocol.expires_at) - Date.parse(m.time)).toBe(60_000);
    expect(m.payload.task_id).toMatch(UUID_PATTERN);
    expect(m.hashes.payload_hash).toBe(sha256Of(m.payload));
    expect(m.signature.sig).toBe(fakeSign(agentMessageSigningInput(m)));
    expect(new TextDecoder().decode(agentMessageSigningInput(m))).toBe(
      JSON.stringify({
        nonce: m.protocol.nonce,
        payload_hash: m.hashes.payload_hash,
        recipient: { subject_id: m.recipient.subject_id },
        sender: { agent_instance_id: m.sender.agent_instance_id },
        time: m.time,
      }),
    );
    expect(sampleAgentMessage().protocol.nonce).not.toBe(m.protocol.nonce);
  });

  it("HITL decision: signed over the canonical decision object", () => {
    const h = sampleHitlDecision();
    expect(h.approval_id).toMatch(UUID_PATTERN);
    expect(h.evidence.signature).toBe(fakeSign(hitlSigningInput(h.decision)));
    expect(h.evidence.signing_key_id).toBe("kid-789");
  });

  it("cannot be talked into another namespace or version by spread-in fields", () => {
    const smuggled = { event_type: "gate.policy.decision", schema_version: "v9" } as object;
    const d = buildPolicyDecision({ ...samplePolicyDecision(), ...smuggled });
    expect(d.event_type).toBe("dare.policy.decision");
    expect(d.schema_version).toBe("v1");
  });

  it("replay trace: numbers steps from 1", () => {
    expect(sampleReplayTrace().steps.map((s) => s.step_index)).toEqual([1, 2, 3, 4]);
  });

  it("throw the record's code on invalid input (misuse)", () => {
    const bad = thrown(() =>
      buildToolRequest({ ...sampleToolRequest(), run_id: "nope", inputs: { payload: 1 } }),
    );
    expect(hasErrorCode(bad, "ERR_CONTRACT_RECORD_INVALID")).toBe(true);
    const halt = thrown(() =>
      buildPolicyDecision({
        ...samplePolicyDecision(),
        result: { decision: "invariant_halt", reason_codes: ["INVARIANT_VIOLATED"], obligations: [] },
      }),
    );
    expect(hasErrorCode(halt, "ERR_CONTRACT_RECORD_INVALID")).toBe(true);
    const steps = thrown(() =>
      buildReplayTrace({ ...sampleReplayTrace(), steps: [{ step_type: "tool_call", tool_name: "x" }] }),
    );
    expect(hasErrorCode(steps, "ERR_CONTRACT_RECORD_INVALID")).toBe(true);
    const surrogate = thrown(() =>
      buildToolRequest({ ...sampleToolRequest(), inputs: { payload: "\ud800" } }),
    );
    expect(hasErrorCode(surrogate, "ERR_CANON_LONE_SURROGATE")).toBe(true);
  });
});

describe("registry", () => {
  it("names every kind in both namespaces", () => {
    const types = Object.keys(RECORD_SCHEMAS).sort();
    expect(types).toEqual(
      (Object.keys(RECORD_KINDS) as RecordKind[])
        .flatMap((k) => [recordTypeOf(k, "dare"), recordTypeOf(k, "gate")])
        .sort(),
    );
    expect(types).toContain("dare.tool.request");
    expect(types).toContain("gate.ledger.event");
    expect(types).toContain("dare.hitl.decision");
  });

  it("round-trips type names", () => {
    for (const kind of Object.keys(RECORD_KINDS) as RecordKind[]) {
      for (const ns of ["dare", "gate"] as const) {
        expect(recordKindOf(recordTypeOf(kind, ns))).toEqual({ kind, namespace: ns });
      }
    }
    expect(recordKindOf("dare.nothing")).toBeUndefined();
  });

  it("serves a schema a journal can validate bodies with", () => {
    const event = sampleLedgerEvent();
    expect(recordSchemaFor("dare.ledger.event")?.safeParse(event).success).toBe(true);
    expect(recordSchemaFor("gate.ledger.event")?.safeParse(toGateNamespace(event)).success).toBe(true);
    expect(recordSchemaFor("dare.tool.request")?.safeParse(event).success).toBe(false);
  });
});

describe("types", () => {
  it("are checked by tsc (@ts-expect-error lines fail the build if they stop being errors)", () => {
    const request = sampleToolRequest();
    const gate = toGateNamespace(request);
    const eventType: "gate.tool.request" = gate.event_type;
    // @ts-expect-error a gate record cannot be exported again
    expect(() => toGateNamespace(gate)).toThrow();
    const r = parseRecord("policy_decision", samplePolicyDecision());
    if (r.ok) {
      const decision: "allow" | "deny" | "invariant_halt" = r.record.result.decision;
      expect(decision).toBe("allow");
    } else {
      // @ts-expect-error a failure has no record
      expect(r.record).toBeUndefined();
    }
    // @ts-expect-error time is an RFC 3339 string
    expect(() => buildPolicyDecision({ ...samplePolicyDecision(), time: 5 })).toThrow();
    expect(eventType).toBe("gate.tool.request");
  });
});
