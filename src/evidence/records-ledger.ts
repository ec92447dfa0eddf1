// DARE LedgerEvents, derived at export from the journal entries of governed actions. The
// journal is already the tamper-evident chain (hash-chained, signed, verified before any
// export); a LedgerEvent is its DARE view: one per entry that belongs to an action
// (decision, resolution, HITL record, evidence, response, result), chained per run in
// journal order, its event_hash computed as GATE defines it and signed at export with the
// journal's Ed25519 key. Each event points back to its entry: sequence_number is the
// entry's seq and sink_uri names the entry's own hash. Deterministic: the same journal
// and key export byte-identical events.
import type { KeyObject } from "node:crypto";
import { buildLedgerEvent, GENESIS, type LedgerEvent, type Sha256Hash } from "../contracts/index.js";
import { keyIdOf, sign } from "../crypto/index.js";
import type { JournalEntry } from "../journal/index.js";
import { agentInstanceId, ledgerEventId, traceIdOf } from "./ids.js";
import type { DecisionStep } from "./journal-read.js";

export interface LedgerSigning {
  privateKey: KeyObject;
}

type ActionType = NonNullable<NonNullable<LedgerEvent["governed_action"]>["action_type"]>;

function actionType(s: DecisionStep, e: JournalEntry): ActionType {
  if (e.type === "dare.hitl.decision") return "hitl.decision";
  return s.body.dare.action.type;
}

/** The entries of one action, in journal order. */
export function actionEntries(s: DecisionStep): JournalEntry[] {
  const all = [s.decision, s.resolution, ...s.hitl, s.evidence, s.response, s.result];
  return all.filter((e): e is JournalEntry => e !== undefined).sort((a, b) => a.seq - b.seq);
}

/** The LedgerEvents of a run's actions, chained from GENESIS. */
export function ledgerEventsOf(steps: readonly DecisionStep[], key: LedgerSigning): LedgerEvent[] {
  const signer = {
    signing_key_id: keyIdOf(key.privateKey),
    algorithm: "EdDSA" as const,
    sign: (m: Uint8Array) => sign(key.privateKey, m).toString("base64url"),
  };
  const out: LedgerEvent[] = [];
  let prev: Sha256Hash | typeof GENESIS = GENESIS;
  for (const s of steps) {
    const d = s.body.dare;
    const responseHash = (s.response?.body as { hashes?: { response_hash?: Sha256Hash } } | undefined)?.hashes
      ?.response_hash;
    const approvalId = (s.hitl[0]?.body as { approval_id?: string } | undefined)?.approval_id;
    for (const e of actionEntries(s)) {
      const ev = buildLedgerEvent({
        time: e.time,
        ledger_event_id: ledgerEventId(e),
        run_id: d.run_id,
        trace_id: traceIdOf(e),
        tenant_id: d.tenant_id,
        environment: d.environment,
        sequence_number: e.seq,
        governed_action: {
          action_type: actionType(s, e),
          tool_name: d.action.tool_name,
          agent_instance_id: agentInstanceId(s.body.principal_id, s.decision.run_id ?? ""),
        },
        references: {
          trace_id: traceIdOf(s.decision),
          policy_decision_id: d.decision_id,
          tool_request_hash: s.body.dare.inputs.request_hash,
          ...(responseHash !== undefined && e.seq >= (s.response?.seq ?? Infinity)
            ? { tool_response_hash: responseHash }
            : {}),
          ...(approvalId !== undefined ? { hitl_approval_id: approvalId } : {}),
        },
        prev_event_hash: prev,
        signer,
        immutability: {
          sink_uri: `warden-journal://seq/${e.seq}/${e.hash}`,
          retention_class: "tier_bounded_365d",
          committed_at: e.time,
        },
      });
      out.push(ev);
      prev = ev.hash_chain.event_hash;
    }
  }
  return out;
}
