// Realistic records of every kind, built with the public builders, shared by the
// records tests. Signatures are stand-ins (a hash of the signed bytes): the
// contracts layer checks their encoding, the crypto layer their validity.
import { createHash } from "node:crypto";
import {
  type AgentMessageEnvelope,
  buildAgentMessage,
  buildHitlDecision,
  buildLedgerEvent,
  buildPolicyDecision,
  buildReplayTrace,
  buildToolRequest,
  buildToolResponse,
  type DareRecordMap,
  GENESIS,
  type HITLDecisionRecord,
  type LedgerEvent,
  newTraceId,
  type PolicyDecisionRecord,
  type RecordKind,
  type ReplayTrace,
  sha256Of,
  type ToolRequestEnvelope,
  type ToolResponseEnvelope,
  uuidv7,
} from "../../src/contracts/index.js";

export const fakeSign = (message: Uint8Array): string =>
  createHash("sha256").update(message).digest("base64url");

export const RUN_ID = uuidv7();
export const TRACE_ID = newTraceId();
export const POLICY_BUNDLE = sha256Of({ bundle: "policy", version: 3 });
export const TOOL_SCHEMA = sha256Of({ bundle: "tools", version: 7 });
export const PROMPT_BUNDLE = sha256Of({ bundle: "prompts", version: 2 });
const AGENT_INSTANCE = "spiffe://org/agent/planner#run-123";

const common = { run_id: RUN_ID, trace_id: TRACE_ID, tenant_id: "tenant-123", environment: "prod" } as const;

const agent = {
  agent_instance_id: AGENT_INSTANCE,
  agent_name: "planner",
  agent_version: "2.1.0",
  identity: {
    subject: "spiffe://org/agent/planner",
    attested: true,
    claims: {
      image_digest: sha256Of("image"),
      config_hash: sha256Of("config"),
      toolset_hash: sha256Of("toolset"),
    },
  },
};

const tool = { name: "crm.update_contact", category: "reversible_write", risk_tier: "medium" } as const;
const bundles = {
  policy_bundle_hash: POLICY_BUNDLE,
  prompt_bundle_hash: PROMPT_BUNDLE,
  tool_schema_hash: TOOL_SCHEMA,
};
const context = {
  orm_risk_score: 0.42,
  budgets: { tokens_remaining: 20000, tool_calls_remaining: 120, cost_usd_remaining: 18.5 },
  source_labels: ["user_input", "retrieved_doc"] as ("user_input" | "retrieved_doc")[],
  approval: { required: false, approval_id: null },
};

export function sampleToolRequest(): ToolRequestEnvelope {
  return buildToolRequest({
    ...common,
    agent,
    tool: { ...tool, idempotency_key: "contact-123-email" },
    inputs: { payload: { contact_id: "123", email: "new@example.com" } },
    bundles,
    context,
  });
}

/** The sensitive-payload form: hash + reference, no clear payload. */
export function sampleSensitiveToolRequest(): ToolRequestEnvelope {
  return buildToolRequest({
    ...common,
    agent,
    tool: { name: "hr.update_salary", category: "irreversible_write", risk_tier: "high" },
    inputs: {
      payload: { employee_id: "e-77", salary_eur: 91000 },
      payload_ref: {
        uri: "protected://payloads/4f1c",
        encryption: "kms:eu-west-1/key/payloads",
        classification: "confidential",
        expires_at: "2026-12-24T00:00:00Z",
      },
    },
    bundles,
    context,
  });
}

export function samplePolicyDecision(request = sampleToolRequest()): PolicyDecisionRecord {
  return buildPolicyDecision({
    ...common,
    subject: { agent_instance_id: AGENT_INSTANCE, subject_id: "spiffe://org/agent/planner", attested: true },
    action: {
      type: "tool.invoke",
      tool_name: tool.name,
      tool_category: tool.category,
      risk_tier: tool.risk_tier,
    },
    inputs: { request_hash: request.hashes.request_hash, context_hash: sha256Of(request.context) },
    bundles: { policy_bundle_hash: POLICY_BUNDLE, tool_schema_hash: TOOL_SCHEMA },
    result: {
      decision: "allow",
      reason_codes: ["ALLOWLIST_MATCH", "BUDGET_OK"],
      obligations: [
        { type: "audit_log", required: true },
        { type: "sign_action", required: true },
        { type: "redact_fields", required: false, params: { fields: ["email"] } },
      ],
    },
  });
}

export function sampleToolResponse(decision = samplePolicyDecision()): ToolResponseEnvelope {
  return buildToolResponse({
    ...common,
    tool: { name: tool.name, status: "success", duration_ms: 312 },
    output: { updated: true, contact: { id: "123", email: "new@example.com" } },
    outputs: {
      payload_redacted: { updated: true },
      snapshot_uri: "immutable://snapshots/tool/crm.update_contact/0001",
    },
    policy: {
      decision_id: decision.decision_id,
      decision: "allow",
      obligations: ["log", "sign_action"],
      policy_bundle_hash: POLICY_BUNDLE,
    },
    evidence: { ledger_event_id: uuidv7(), replay_trace_step_id: "trace-step-2" },
  });
}

/** Response whose full output sits behind a protected reference. */
export function sampleSensitiveToolResponse(): ToolResponseEnvelope {
  const r = sampleToolResponse();
  return {
    ...r,
    outputs: {
      content_type: "application/json",
      payload_hash: r.outputs.payload_hash!,
      payload_ref: {
        uri: "protected://payloads/9a2e",
        encryption: "kms:payloads",
        classification: "regulated",
      },
    },
  };
}

export function sampleLedgerEvent(decision = samplePolicyDecision()): LedgerEvent {
  return buildLedgerEvent({
    ...common,
    trace_id: TRACE_ID,
    sequence_number: 0,
    governed_action: { action_type: "tool.invoke", tool_name: tool.name, agent_instance_id: AGENT_INSTANCE },
    references: {
      trace_id: TRACE_ID,
      policy_decision_id: decision.decision_id,
      tool_request_hash: decision.inputs.request_hash,
      tool_response_hash: sha256Of("response"),
      replay_trace_step_id: "trace-step-2",
    },
    immutability: { sink_uri: "worm://audit/2025/12/24/0001", retention_class: "prod_hot_365d" },
    prev_event_hash: GENESIS,
    signer: { signing_key_id: "kid-123", algorithm: "EdDSA", sign: fakeSign },
  });
}

export function sampleReplayTrace(): ReplayTrace {
  return buildReplayTrace({
    ...common,
    agent: { agent_instance_id: AGENT_INSTANCE, agent_name: "planner", agent_version: "2.1.0" },
    model: {
      model_id: "provider/model",
      model_version: "2025-11-01",
      temperature: 0.2,
      seed: 123456,
      decoding: "greedy",
    },
    bundles,
    steps: [
      {
        step_type: "retrieve_context",
        retrieved_context_hashes: [sha256Of("doc1"), sha256Of("doc2")],
        provenance_refs: ["prov://doc1", "prov://doc2"],
      },
      {
        step_type: "tool_call",
        tool_name: tool.name,
        request_hash: sha256Of("request"),
        response_hash: sha256Of("response"),
        response_snapshot_uri: "immutable://snapshots/tool/crm.update_contact/0001",
        policy_decision_id: uuidv7(),
        ledger_event_id: uuidv7(),
      },
      { step_type: "hitl_gate", hitl_approval_id: null },
      { step_type: "final_output", output_hash: sha256Of("done") },
    ],
    replay_metadata: { replay_mode: "mock_all", harness_version: "1.0.0" },
  });
}

export function sampleAgentMessage(): AgentMessageEnvelope {
  const { environment: _none, ...correlation } = common; // the envelope has no environment
  return buildAgentMessage({
    ...correlation,
    protocol: { capabilities: ["delegate_task", "return_result"] },
    sender: { agent_instance_id: AGENT_INSTANCE, subject_id: "spiffe://org/agent/planner" },
    recipient: { subject_id: "spiffe://org/agent/executor" },
    payload: {
      type: "delegate_task",
      inputs: { tool: "crm.update_contact", args: { contact_id: "123" } },
      parent_run_id: RUN_ID,
    },
    signer: { key_id: "kid-456", algorithm: "ES256", sign: fakeSign },
  });
}

export function sampleHitlDecision(): HITLDecisionRecord {
  return buildHitlDecision({
    ...common,
    request: {
      tool_name: "transfer_funds",
      request_hash: sha256Of("transfer"),
      summary: "Pay invoice 2025-118 to a verified vendor",
      tool_category: "financial",
      risk_tier: "high",
      amount_usd: 5000,
      destination_ref: "vendor-verified-id",
    },
    context: { orm_risk_score: 0.72, policy_decision_id: uuidv7(), ledger_head_ref: "ledger://head/42" },
    decision: {
      approver_id: "role:treasury-approver",
      action: "approve",
      justification: "Vendor verified, within policy, invoice matched",
      conditions: ["must_use_account:primary", "max_amount_usd:5000"],
    },
    evidence: { ledger_event_id: uuidv7() },
    signer: { signing_key_id: "kid-789", sign: fakeSign },
  });
}

/** One realistic sample (or more) per kind, named for test titles. */
export function samplesByKind(): { [K in RecordKind]: [string, DareRecordMap[K]][] } {
  return {
    tool_request: [
      ["clear payload", sampleToolRequest()],
      ["sensitive payload reference", sampleSensitiveToolRequest()],
    ],
    tool_response: [
      ["redacted output", sampleToolResponse()],
      ["sensitive payload reference", sampleSensitiveToolResponse()],
    ],
    policy_decision: [["allow", samplePolicyDecision()]],
    ledger_event: [["genesis event", sampleLedgerEvent()]],
    agent_message: [["delegate_task", sampleAgentMessage()]],
    replay_trace: [["four steps", sampleReplayTrace()]],
    hitl_decision: [["approve", sampleHitlDecision()]],
  };
}
