// Every way a record is refused, each with its stable code. Where GATE's own
// schema forbids the same thing, the test also shows the GATE validator agrees,
// so a Warden rejection is never a private opinion about a GATE rule.
import { describe, expect, it } from "vitest";
import {
  type DareRecordMap,
  fromGateNamespace,
  hasErrorCode,
  parseGateRecord,
  parseRecord,
  parseRecordJson,
  parseRecordOfType,
  type RecordKind,
  recordSchemaFor,
  sha256Of,
  toGateNamespace,
  type WardenErrorCode,
} from "../../src/contracts/index.js";
import { gateValidator } from "./records-ajv.js";
import {
  sampleAgentMessage,
  sampleHitlDecision,
  sampleLedgerEvent,
  samplePolicyDecision,
  sampleReplayTrace,
  sampleSensitiveToolRequest,
  sampleToolRequest,
  sampleToolResponse,
} from "./records-samples.js";

type Mutate<K extends RecordKind> = (r: DareRecordMap[K]) => unknown;

interface Case<K extends RecordKind> {
  name: string;
  kind: K;
  sample: () => DareRecordMap[K];
  mutate: Mutate<K>;
  code: WardenErrorCode;
  /** Path of the first issue, when it pins the failure to one field. */
  path?: (string | number)[];
  /** GATE's schema forbids this too. */
  gateRejects?: boolean;
}

const c = <K extends RecordKind>(x: Case<K>): Case<RecordKind> => x as unknown as Case<RecordKind>;

const cases: Case<RecordKind>[] = [
  // Envelope-level
  c({
    name: "an unsupported schema_version",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, schema_version: "v2" }),
    code: "ERR_CONTRACT_SCHEMA_VERSION",
    path: ["schema_version"],
    gateRejects: true,
  }),
  c({
    name: "a missing schema_version",
    kind: "hitl_decision",
    sample: sampleHitlDecision,
    mutate: ({ schema_version: _v, ...r }) => r,
    code: "ERR_CONTRACT_SCHEMA_VERSION",
    gateRejects: true,
  }),
  c({
    name: "an unknown top-level key (records are strict)",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, debug: true }),
    code: "ERR_CONTRACT_RECORD_INVALID",
  }),
  c({
    name: "an unknown nested key",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, references: { ...r.references, note: "x" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["references"],
  }),
  c({
    name: "a gate.* event_type given to the dare parser",
    kind: "tool_response",
    sample: sampleToolResponse,
    mutate: (r) => ({ ...r, event_type: "gate.tool.response" }),
    code: "ERR_CONTRACT_NAMESPACE",
    path: ["event_type"],
  }),
  c({
    name: "the event_type of another record",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, event_type: "dare.tool.response" }),
    code: "ERR_CONTRACT_RECORD_TYPE",
    path: ["event_type"],
    gateRejects: true,
  }),
  c({
    name: "a missing run_id",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: ({ run_id: _r, ...r }) => r,
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["run_id"],
    gateRejects: true,
  }),
  c({
    name: "a run_id that is not a UUID",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, run_id: "run-123" }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["run_id"],
    gateRejects: true,
  }),
  c({
    name: "an upper-case UUID (ids are written lowercase)",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, decision_id: r.decision_id.toUpperCase() }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["decision_id"],
  }),
  c({
    name: "an all-zero trace_id (invalid in W3C trace context)",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, trace_id: "0".repeat(32) }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["trace_id"],
  }),
  c({
    name: "a time without a zone designator",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, time: "2025-12-24T10:20:00" }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["time"],
    gateRejects: true,
  }),
  c({
    name: "a hash in upper-case hex",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({
      ...r,
      hashes: { request_hash: r.hashes.request_hash.toUpperCase().replace("SHA256", "sha256") },
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["hashes", "request_hash"],
    gateRejects: true,
  }),
  c({
    name: "a hash without the sha256: prefix",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({
      ...r,
      bundles: { ...r.bundles, policy_bundle_hash: r.bundles.policy_bundle_hash.slice(7) },
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["bundles", "policy_bundle_hash"],
    gateRejects: true,
  }),
  c({
    name: "an environment outside dev/test/prod",
    kind: "hitl_decision",
    sample: sampleHitlDecision,
    mutate: (r) => ({ ...r, environment: "staging" }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["environment"],
    gateRejects: true,
  }),
  // ToolRequestEnvelope
  c({
    name: "an agent_instance_id that is not a SPIFFE id",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, agent: { ...r.agent, agent_instance_id: "planner#run-123" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["agent", "agent_instance_id"],
    gateRejects: true,
  }),
  c({
    name: "a missing policy_bundle_hash",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, bundles: { tool_schema_hash: r.bundles.tool_schema_hash } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["bundles", "policy_bundle_hash"],
    gateRejects: true,
  }),
  c({
    name: "an unknown tool category",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, tool: { ...r.tool, category: "mostly_harmless" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["tool", "category"],
    gateRejects: true,
  }),
  c({
    name: "an ORM risk score above 1",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, context: { ...r.context, orm_risk_score: 1.5 } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["context", "orm_risk_score"],
    gateRejects: true,
  }),
  c({
    name: "a clear payload next to a payload_ref (would publish what the reference hides)",
    kind: "tool_request",
    sample: sampleSensitiveToolRequest,
    mutate: (r) => ({ ...r, inputs: { ...r.inputs, payload: { employee_id: "e-77", salary_eur: 91000 } } }),
    code: "ERR_CONTRACT_PAYLOAD_FORM",
    path: ["inputs", "payload_ref"],
  }),
  c({
    name: "a payload_ref without payload_hash",
    kind: "tool_request",
    sample: sampleSensitiveToolRequest,
    mutate: (r) => ({
      ...r,
      inputs: { content_type: r.inputs.content_type, payload_ref: r.inputs.payload_ref },
    }),
    code: "ERR_CONTRACT_PAYLOAD_FORM",
    path: ["inputs"],
  }),
  c({
    name: "neither a payload nor a reference",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, inputs: { content_type: "application/json" } }),
    code: "ERR_CONTRACT_PAYLOAD_FORM",
    path: ["inputs"],
  }),
  c({
    name: "a payload_ref without uri",
    kind: "tool_request",
    sample: sampleSensitiveToolRequest,
    mutate: (r) => ({ ...r, inputs: { ...r.inputs, payload_ref: { classification: "confidential" } } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["inputs", "payload_ref", "uri"],
  }),
  c({
    name: "a payload classification outside GATE's four",
    kind: "tool_request",
    sample: sampleSensitiveToolRequest,
    mutate: (r) => ({
      ...r,
      inputs: { ...r.inputs, payload_ref: { uri: "protected://p", classification: "secret" } },
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["inputs", "payload_ref", "classification"],
    gateRejects: true,
  }),
  c({
    name: "a payload swapped under its hash",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({
      ...r,
      inputs: { ...r.inputs, payload: { contact_id: "123", email: "attacker@example.com" } },
    }),
    code: "ERR_CONTRACT_HASH_MISMATCH",
    path: ["inputs", "payload_hash"],
  }),
  c({
    name: "a payload that cannot be canonicalized (lone surrogate)",
    kind: "tool_request",
    sample: sampleToolRequest,
    mutate: (r) => ({ ...r, inputs: { ...r.inputs, payload: { note: "\ud800" } } }),
    code: "ERR_CANON_LONE_SURROGATE",
    path: ["inputs", "payload"],
  }),
  // ToolResponseEnvelope
  c({
    name: "an output payload_ref without payload_hash",
    kind: "tool_response",
    sample: sampleToolResponse,
    mutate: (r) => ({ ...r, outputs: { payload_ref: { uri: "protected://payloads/1" } } }),
    code: "ERR_CONTRACT_PAYLOAD_FORM",
    path: ["outputs", "payload_hash"],
  }),
  c({
    name: "an unknown tool status",
    kind: "tool_response",
    sample: sampleToolResponse,
    mutate: (r) => ({ ...r, tool: { ...r.tool, status: "probably_fine" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["tool", "status"],
    gateRejects: true,
  }),
  c({
    name: "a response without its policy decision link",
    kind: "tool_response",
    sample: sampleToolResponse,
    mutate: ({ policy: _p, ...r }) => r,
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["policy"],
    gateRejects: true,
  }),
  // PolicyDecisionRecord
  c({
    name: "a decision outside allow/deny/invariant_halt",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, result: { ...r.result, decision: "modify" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["result", "decision"],
    gateRejects: true,
  }),
  c({
    name: "an unknown reason code",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, result: { ...r.result, reason_codes: ["BECAUSE"] } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["result", "reason_codes", 0],
    gateRejects: true,
  }),
  c({
    name: "an obligation without required",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({ ...r, result: { ...r.result, obligations: [{ type: "audit_log" }] } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["result", "obligations", 0, "required"],
    gateRejects: true,
  }),
  c({
    name: "an invariant_halt without invariant_check",
    kind: "policy_decision",
    sample: samplePolicyDecision,
    mutate: (r) => ({
      ...r,
      result: { ...r.result, decision: "invariant_halt", reason_codes: ["INVARIANT_VIOLATED"] },
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["invariant_check"],
  }),
  // LedgerEvent
  c({
    name: "a field changed after sealing",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, references: { ...r.references, tool_response_hash: sha256Of("forged") } }),
    code: "ERR_CONTRACT_HASH_MISMATCH",
    path: ["hash_chain", "event_hash"],
  }),
  c({
    name: "a re-pointed hash chain",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, hash_chain: { ...r.hash_chain, prev_event_hash: sha256Of("other") } }),
    code: "ERR_CONTRACT_HASH_MISMATCH",
    path: ["hash_chain", "event_hash"],
  }),
  c({
    name: "a prev_event_hash that is neither a hash nor GENESIS",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, hash_chain: { ...r.hash_chain, prev_event_hash: "genesis" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["hash_chain", "prev_event_hash"],
    gateRejects: true,
  }),
  c({
    name: "a signature that is not base64/base64url",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, signatures: { ...r.signatures, signature: "not a signature!" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["signatures", "signature"],
  }),
  c({
    name: "an unknown retention class",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => ({ ...r, immutability: { ...r.immutability, retention_class: "forever" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["immutability", "retention_class"],
    gateRejects: true,
  }),
  c({
    name: "a ledger event without references.trace_id (DARE places trace_id there)",
    kind: "ledger_event",
    sample: sampleLedgerEvent,
    mutate: (r) => {
      const { trace_id: _t, ...references } = r.references;
      return { ...r, references };
    },
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["references", "trace_id"],
  }),
  // ReplayTrace
  c({
    name: "steps out of order",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({ ...r, steps: [r.steps[1], r.steps[0], ...r.steps.slice(2)] }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["steps", 0, "step_index"],
  }),
  c({
    name: "a tool_call step without its policy decision (no execution without a decision)",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({
      ...r,
      steps: r.steps.map((s) => (s.step_type === "tool_call" ? { ...s, policy_decision_id: undefined } : s)),
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["steps", 1, "policy_decision_id"],
  }),
  c({
    name: "a final_output step without output_hash",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({
      ...r,
      steps: r.steps.map((s) => (s.step_type === "final_output" ? { ...s, output_hash: undefined } : s)),
    }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["steps", 3, "output_hash"],
  }),
  c({
    name: "an unknown step type",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({ ...r, steps: [{ step_index: 1, step_type: "think" }] }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["steps", 0, "step_type"],
    gateRejects: true,
  }),
  c({
    name: "a decoding mode outside greedy/sampled/beam",
    kind: "replay_trace",
    sample: sampleReplayTrace,
    mutate: (r) => ({ ...r, model: { ...r.model, decoding: "greedy_or_sampled" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["model", "decoding"],
    gateRejects: true,
  }),
  // AgentMessageEnvelope
  c({
    name: "a payload changed in transit",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: (r) => ({ ...r, payload: { ...r.payload, inputs: { tool: "payments.transfer" } } }),
    code: "ERR_CONTRACT_HASH_MISMATCH",
    path: ["hashes", "payload_hash"],
  }),
  c({
    name: "a nonce shorter than 16 characters",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: (r) => ({ ...r, protocol: { ...r.protocol, nonce: "123" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["protocol", "nonce"],
    gateRejects: true,
  }),
  c({
    name: "a message that expires before it was sent",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: (r) => ({ ...r, protocol: { ...r.protocol, expires_at: "2000-01-01T00:00:00Z" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["protocol", "expires_at"],
  }),
  c({
    name: "a protocol version other than 1.0",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: (r) => ({ ...r, protocol: { ...r.protocol, version: "2.0" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["protocol", "version"],
    gateRejects: true,
  }),
  c({
    name: "an unsigned message",
    kind: "agent_message",
    sample: sampleAgentMessage,
    mutate: ({ signature: _s, ...r }) => r,
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["signature"],
    gateRejects: true,
  }),
  // HITLDecisionRecord
  c({
    name: "a justification shorter than 10 characters",
    kind: "hitl_decision",
    sample: sampleHitlDecision,
    mutate: (r) => ({ ...r, decision: { ...r.decision, justification: "ok" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["decision", "justification"],
    gateRejects: true,
  }),
  c({
    name: "an approver action outside approve/deny/modify/request_more_info",
    kind: "hitl_decision",
    sample: sampleHitlDecision,
    mutate: (r) => ({ ...r, decision: { ...r.decision, action: "shrug" } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["decision", "action"],
    gateRejects: true,
  }),
  c({
    name: "an unsigned approval",
    kind: "hitl_decision",
    sample: sampleHitlDecision,
    mutate: (r) => ({ ...r, evidence: { ledger_event_id: r.evidence.ledger_event_id } }),
    code: "ERR_CONTRACT_RECORD_INVALID",
    path: ["evidence", "signature"],
    gateRejects: true,
  }),
];

/** The gate form of a (possibly broken) dare record, for the GATE validator. */
function gateFormOf(value: unknown): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  if (typeof copy.event_type === "string") copy.event_type = copy.event_type.replace(/^dare\./, "gate.");
  return copy;
}

describe("record rejections", () => {
  for (const k of cases) {
    it(`rejects ${k.name} (${k.kind}) with ${k.code}`, () => {
      const broken = JSON.parse(JSON.stringify(k.mutate(k.sample()))) as unknown;
      const r = parseRecord(k.kind, broken);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.code).toBe(k.code);
      expect(r.message.length).toBeGreaterThan(0);
      expect(r.issues.length).toBeGreaterThan(0);
      const first = r.issues.find((i) => i.code === k.code);
      expect(first).toBeDefined();
      if (k.path !== undefined) expect(first?.path).toEqual(k.path);
      if (k.gateRejects) expect(gateValidator(k.kind)(gateFormOf(broken))).toBe(false);
    });
  }

  it("rejects a value that is not an object", () => {
    for (const v of [null, [], "record", 42]) {
      expect(parseRecord("tool_request", v)).toMatchObject({
        ok: false,
        code: "ERR_CONTRACT_RECORD_INVALID",
      });
    }
  });

  it("rejects a dare.* record handed to the gate parser", () => {
    const r = parseGateRecord("policy_decision", samplePolicyDecision());
    expect(r).toMatchObject({ ok: false, code: "ERR_CONTRACT_NAMESPACE" });
  });

  it("rejects the DARE-only retention class in the gate namespace", () => {
    const gate = toGateNamespace(sampleLedgerEvent());
    const aliased = { ...gate, immutability: { ...gate.immutability, retention_class: "tier_bounded_365d" } };
    const r = parseGateRecord("ledger_event", aliased);
    expect(r).toMatchObject({ ok: false, code: "ERR_CONTRACT_RECORD_INVALID" });
    expect(gateValidator("ledger_event")(aliased)).toBe(false);
  });

  it("reports an unknown registry type as ERR_CONTRACT_RECORD_TYPE", () => {
    expect(parseRecordOfType("dare.tool.teleport", {})).toMatchObject({
      ok: false,
      code: "ERR_CONTRACT_RECORD_TYPE",
    });
    expect(parseRecordOfType("__proto__", {})).toMatchObject({ ok: false, code: "ERR_CONTRACT_RECORD_TYPE" });
    expect(recordSchemaFor("dare.tool.teleport")).toBeUndefined();
    expect(recordSchemaFor("toString")).toBeUndefined();
  });

  it("parses by registry type in either namespace", () => {
    const rec = sampleToolRequest();
    expect(parseRecordOfType("dare.tool.request", rec)).toEqual({ ok: true, record: rec });
    expect(parseRecordOfType("gate.tool.request", toGateNamespace(rec))).toMatchObject({ ok: true });
    expect(parseRecordOfType("gate.tool.request", rec)).toMatchObject({
      ok: false,
      code: "ERR_CONTRACT_NAMESPACE",
    });
    const hitl = sampleHitlDecision();
    expect(parseRecordOfType("gate.hitl.decision", hitl)).toEqual({ ok: true, record: hitl });
  });

  it("throws for misuse: an unknown kind", () => {
    expect(() => parseRecord("tool_teleport" as RecordKind, {})).toThrow(
      expect.objectContaining({ code: "ERR_CONTRACT_RECORD_TYPE" }),
    );
  });

  it("throws for misuse: exporting a record that is not in the dare namespace, or importing one not in gate", () => {
    const gate = toGateNamespace(sampleToolRequest());
    const attempt = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(
      hasErrorCode(
        attempt(() => toGateNamespace(gate as never)),
        "ERR_CONTRACT_NAMESPACE",
      ),
    ).toBe(true);
    expect(
      hasErrorCode(
        attempt(() => fromGateNamespace(sampleToolRequest() as never)),
        "ERR_CONTRACT_NAMESPACE",
      ),
    ).toBe(true);
  });
});

describe("parseRecordJson (untrusted text)", () => {
  const text = JSON.stringify(sampleToolRequest());

  it("accepts a well-formed record", () => {
    expect(parseRecordJson("tool_request", text)).toMatchObject({ ok: true });
  });

  it("rejects duplicate keys (two parsers must not see two records)", () => {
    const dup = text.replace('{"schema_version":"v1",', '{"schema_version":"v1","schema_version":"v1",');
    expect(parseRecordJson("tool_request", dup)).toMatchObject({ ok: false, code: "ERR_JSON_DUPLICATE_KEY" });
  });

  it("rejects __proto__ keys", () => {
    const proto = text.replace(
      '{"schema_version":"v1",',
      '{"__proto__":{"admin":true},"schema_version":"v1",',
    );
    expect(parseRecordJson("tool_request", proto)).toMatchObject({
      ok: false,
      code: "ERR_JSON_FORBIDDEN_KEY",
    });
  });

  it("rejects text over the size limit", () => {
    expect(parseRecordJson("tool_request", text, { maxLength: 100 })).toMatchObject({
      ok: false,
      code: "ERR_JSON_TOO_LARGE",
    });
  });

  it("rejects nesting deeper than the limit", () => {
    expect(parseRecordJson("tool_request", text, { maxDepth: 2 })).toMatchObject({
      ok: false,
      code: "ERR_CANON_TOO_DEEP",
    });
  });

  it("rejects malformed JSON", () => {
    expect(parseRecordJson("tool_request", text.slice(0, -1))).toMatchObject({
      ok: false,
      code: "ERR_JSON_SYNTAX",
    });
  });
});
