// The record kind of an exported GATE line (ReplayTrace and HITLDecisionRecord carry no event_type).
import type { RecordKind } from "../../src/contracts/index.js";

const BY_TYPE: Record<string, RecordKind> = {
  "gate.tool.request": "tool_request",
  "gate.tool.response": "tool_response",
  "gate.policy.decision": "policy_decision",
  "gate.ledger.event": "ledger_event",
  "gate.agent.message": "agent_message",
};

export function gateKindOf(r: Record<string, unknown>): RecordKind {
  if (typeof r.event_type === "string") {
    const k = BY_TYPE[r.event_type];
    if (k === undefined) throw new Error(`unexpected event_type ${r.event_type}`);
    return k;
  }
  if (Array.isArray(r.steps)) return "replay_trace";
  if (typeof r.approval_id === "string") return "hitl_decision";
  throw new Error("unrecognised record");
}
