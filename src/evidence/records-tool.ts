// The DARE tool envelopes of one governed action, derived from the journal. The
// ToolRequestEnvelope is a pure function of the decision entry (the proposal as the Gate
// admitted it); the ToolResponseEnvelope is journaled by the executor and exported with
// the two pointers only the export knows: the snapshot URI and the replay step id.
import {
  type SourceLabel,
  type ToolRequestEnvelope,
  ToolRequestEnvelopeSchema,
  type ToolResponseEnvelope,
  ToolResponseEnvelopeSchema,
} from "../contracts/index.js";
import { agentInstanceId, ledgerEventId, replayStepId, spiffeOf, traceIdOf } from "./ids.js";
import type { DecisionStep } from "./journal-read.js";
import { snapshotUri } from "./store.js";

type RiskTier = ToolRequestEnvelope["tool"]["risk_tier"];
type Category = ToolRequestEnvelope["tool"]["category"];

/** The contract's risk tier, else the category's floor (docs/evidence.md). */
function riskTierOf(declared: RiskTier | undefined, category: Category): RiskTier {
  if (declared !== undefined) return declared;
  if (category === "read_only") return "low";
  if (category === "reversible_write" || category === "multi_agent") return "medium";
  return "high";
}

const SOURCE_LABELS: Record<string, SourceLabel> = {
  web: "retrieved_doc",
  rag: "retrieved_doc",
  email: "retrieved_doc",
  "retrieved-doc": "retrieved_doc",
  "user-provided": "user_input",
  "tool-output": "tool_output",
  mcp: "tool_output",
  instructions: "tool_output",
  "model-generated": "system",
};

export function sourceLabels(taint: readonly { source: string }[]): SourceLabel[] {
  return [...new Set(taint.map((t) => SOURCE_LABELS[t.source] ?? "system"))].sort();
}

/** The ToolRequestEnvelope of a decision: request_hash is the decision record's inputs.request_hash. */
export function toolRequestOf(s: DecisionStep): ToolRequestEnvelope {
  const b = s.body;
  const d = b.dare;
  const runId = s.decision.run_id ?? "unattributed";
  const elided = b.parameters_elided;
  const inputs = elided
    ? {
        content_type: "application/json",
        payload_hash: elided.sha256,
        payload_ref: { uri: `warden-journal://seq/${s.decision.seq}/parameters`, classification: "internal" },
      }
    : { content_type: "application/json", payload: b.parameters };
  const approval = s.hitl[0]?.body as { approval_id?: string } | undefined;
  return ToolRequestEnvelopeSchema.parse({
    schema_version: "v1",
    event_type: "dare.tool.request",
    time: d.time,
    run_id: d.run_id,
    trace_id: traceIdOf(s.decision),
    tenant_id: d.tenant_id,
    environment: d.environment,
    agent: {
      agent_instance_id: agentInstanceId(b.principal_id, runId),
      agent_name: b.principal_id,
      agent_version: "0.0.0",
      identity: { subject: spiffeOf(b.principal_id), attested: b.identity !== undefined },
    },
    tool: {
      name: d.action.tool_name,
      category: d.action.tool_category,
      risk_tier: riskTierOf(d.action.risk_tier, d.action.tool_category),
    },
    inputs,
    bundles: d.bundles,
    hashes: { request_hash: d.inputs.request_hash },
    context: {
      source_labels: sourceLabels(b.taint),
      approval: {
        required: b.decision === "step_up",
        approval_id: approval?.approval_id ?? null,
      },
    },
  });
}

/** The journaled response with its snapshot URI (when the store holds it) and correlation ids. */
export function toolResponseOf(
  s: DecisionStep,
  stepIndex: number,
  hasSnapshot: (hash: string) => boolean,
): ToolResponseEnvelope | undefined {
  if (s.response === undefined) return undefined;
  const r = structuredClone(s.response.body) as ToolResponseEnvelope;
  const hash = r.outputs.payload_hash;
  if (hash !== undefined && hasSnapshot(hash)) r.outputs.snapshot_uri = snapshotUri(r.tool.name, hash);
  r.policy.decision_id = s.body.decision_id;
  r.evidence = {
    ledger_event_id: ledgerEventId(s.response),
    replay_trace_step_id: replayStepId(s.decision.run_id ?? "", stepIndex),
  };
  return ToolResponseEnvelopeSchema.parse(r);
}
