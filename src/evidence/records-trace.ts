// The DARE ReplayTrace of a run, derived at export: one step per governed action at the
// tool/memory boundary, in journal order — a signed HITL gate before the action it
// released, then the action as executed (tool_call / memory_read / memory_write, with
// the response hash and the content-addressed snapshot) or refused (tool_deny). Each step
// names the decision and the ledger event of its decision entry.
import type { ReplayStep, ReplayTrace } from "../contracts/index.js";
import { ReplayTraceSchema } from "../contracts/index.js";
import { agentInstanceId, ledgerEventId, traceIdOf } from "./ids.js";
import type { DecisionStep, RunEvidence } from "./journal-read.js";
import { snapshotUri } from "./store.js";

type Step = Omit<ReplayStep, "step_index">;

function executedType(s: DecisionStep): Step["step_type"] {
  const t = s.body.dare.action.type;
  return t === "memory.read" ? "memory_read" : t === "memory.write" ? "memory_write" : "tool_call";
}

/** The step(s) of one action; `hasSnapshot` says whether the store holds a snapshot. */
export function stepsOf(s: DecisionStep, hasSnapshot: (hash: string) => boolean): Step[] {
  const d = s.body.dare;
  const common = {
    tool_name: d.action.tool_name,
    request_hash: s.body.dare.inputs.request_hash,
    policy_decision_id: d.decision_id,
    ledger_event_id: ledgerEventId(s.decision),
    timestamp: d.time,
  };
  const out: Step[] = [];
  for (const h of s.hitl) {
    const b = h.body as { approval_id: string };
    out.push({ step_type: "hitl_gate", ...common, hitl_approval_id: b.approval_id, timestamp: h.time });
  }
  if (s.evidence === undefined) {
    out.push({ step_type: "tool_deny", ...common });
    return out;
  }
  const r = s.response?.body as
    | {
        hashes: { response_hash: string };
        outputs: { payload_hash?: string };
        tool: { duration_ms?: number };
      }
    | undefined;
  const hash = r?.outputs.payload_hash;
  out.push({
    step_type: executedType(s),
    ...common,
    ...(r !== undefined ? { response_hash: r.hashes.response_hash as ReplayStep["response_hash"] } : {}),
    ...(hash !== undefined && hasSnapshot(hash)
      ? { response_snapshot_uri: snapshotUri(d.action.tool_name, hash as never) }
      : {}),
    ...(r?.tool.duration_ms !== undefined ? { duration_ms: r.tool.duration_ms } : {}),
  });
  return out;
}

/** The step index (1-based) of each action's executed/denied step, in `steps` order. */
export function actionStepIndexes(run: RunEvidence): number[] {
  const idx: number[] = [];
  let n = 0;
  for (const s of run.steps) {
    n += s.hitl.length + 1;
    idx.push(n);
  }
  return idx;
}

export function replayTraceOf(run: RunEvidence, hasSnapshot: (hash: string) => boolean): ReplayTrace {
  const first = run.steps[0];
  if (first === undefined) throw new Error("a run without decisions has no replay trace");
  const d = first.body.dare;
  const steps = run.steps
    .flatMap((s) => stepsOf(s, hasSnapshot))
    .map((s, i) => ({ step_index: i + 1, ...s }));
  return ReplayTraceSchema.parse({
    schema_version: "v1",
    trace_id: traceIdOf(first.decision),
    run_id: d.run_id,
    tenant_id: d.tenant_id,
    environment: d.environment,
    created_at: d.time,
    agent: {
      agent_instance_id: agentInstanceId(first.body.principal_id, run.runId),
      agent_name: first.body.principal_id,
      agent_version: "0.0.0",
    },
    // The Gate is model-free and does not know the model; the loop's LoopStarted entry may.
    model: { model_id: "unrecorded", model_version: "unrecorded" },
    bundles: d.bundles,
    steps,
    replay_metadata: { replay_mode: "mock_all", harness_version: "warden-replay/1" },
  });
}
