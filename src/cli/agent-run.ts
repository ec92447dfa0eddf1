// One governed agent run over a Runtime, reported step by step: what the model proposed,
// what the Gate decided and why, and what was executed with which evidence. Shared by
// `warden run` and the demo so both print the same records and the same summary.

import type { Decision } from "../contracts/index.js";
import type { ExecutionTicket } from "../gate/index.js";
import {
  approvalQueueAsk,
  createEngine,
  ENGINE_VERSION,
  HookHost,
  inProcessTransport,
} from "../hooks/index.js";
import {
  type DecisionStage,
  type LoopLimits,
  type LoopResult,
  type ModelAdapter,
  type ResultStatus,
  runLoop,
  runtimePorts,
} from "../loop/index.js";
import { journalKey, type Runtime } from "./runtime.js";

export interface StepRecord {
  iteration: number;
  callId: string;
  tool: string;
  /** The proposed arguments, or the raw text when they did not parse. */
  arguments: unknown;
  stage: DecisionStage;
  decision: Decision | null;
  decisionId: string | null;
  reasons: string[];
  status: ResultStatus;
  code: string | null;
  evidenceHash: string | null;
  taint: string[];
}

export interface AgentRunOptions {
  model: ModelAdapter;
  task: string;
  limits?: Partial<LoopLimits>;
  signal?: AbortSignal;
  /**
   * The AARTS host the loop fires its 20 hook points through (docs/loop.md). Default
   * "in-process": Warden's own engine (host-tools preset, its journal `<db>.hooks.db`
   * beside the run's), asks going to the runtime's approval queue. `false`: no hooks.
   */
  hooks?: HookHost | "in-process" | false;
  /** How long an ask verdict waits in the approval queue (default 60 s, then deny). */
  askTimeoutMs?: number;
}

export interface AgentRun {
  result: LoopResult;
  steps: StepRecord[];
  quarantined: boolean;
  quarantineReason: string | null;
}

/** Runs the ORGA loop with the runtime's Gate, executors, contracts and journal. */
export async function runAgent(
  rt: Runtime,
  o: AgentRunOptions,
  onStep: (s: StepRecord) => void = () => {},
): Promise<AgentRun> {
  const run = await rt.startRun(rt.principalId);
  const own = o.hooks === undefined || o.hooks === "in-process";
  const given = o.hooks instanceof HookHost ? o.hooks : undefined;
  const hooks = own ? await inProcessHost(rt, run.runId, o.askTimeoutMs) : given;
  try {
    return await loopWith(rt, o, run.runId, hooks, onStep);
  } finally {
    if (own) await hooks?.close();
  }
}

/** Warden's own engine in process, its verdicts journaled beside the run's journal. */
export async function inProcessHost(rt: Runtime, runId: string, askTimeoutMs = 60_000): Promise<HookHost> {
  const path = `${rt.dbPath}.hooks.db`;
  const engine = await createEngine({
    journal: { path, signer: journalKey(path, undefined).pair },
    workspace: rt.sandbox,
    transport: "in-process",
  });
  const ask = approvalQueueAsk(rt.approvals, { principalId: rt.principalId, runId, timeoutMs: askTimeoutMs });
  return HookHost.connect({
    transport: inProcessTransport(engine, { closeEngine: true }),
    hostId: "warden",
    hostVersion: ENGINE_VERSION,
    ask,
  });
}

async function loopWith(
  rt: Runtime,
  o: AgentRunOptions,
  runId: string,
  hooks: HookHost | undefined,
  onStep: (s: StepRecord) => void,
): Promise<AgentRun> {
  const steps: StepRecord[] = [];
  let proposals = new Map<string, unknown>();
  let decisions = new Map<string, { stage: StepRecord["stage"]; reasons: string[] }>();
  const result = await runLoop<ExecutionTicket>(
    {
      model: o.model,
      ...(await runtimePorts<ExecutionTicket>(rt, { runId })),
      task: o.task,
      ...(hooks !== undefined ? { hooks } : {}),
      ...(o.limits !== undefined ? { limits: o.limits } : {}),
      ...(o.signal !== undefined ? { signal: o.signal } : {}),
    },
    {
      onPolicyCheck(p) {
        proposals = new Map(
          p.proposals.map((x) => [x.callId, x.arguments.ok ? x.arguments.value : x.arguments.raw]),
        );
      },
      onDispatching(d) {
        decisions = new Map(d.decisions.map((x) => [x.callId, { stage: x.stage, reasons: [...x.reasons] }]));
      },
      onObserving(obs) {
        for (const r of obs.results) {
          const d = decisions.get(r.callId);
          const s: StepRecord = {
            iteration: obs.iteration,
            callId: r.callId,
            tool: r.name,
            arguments: proposals.get(r.callId) ?? null,
            stage: d?.stage ?? "not_evaluated",
            decision: r.decision ?? null,
            decisionId: r.decisionId ?? null,
            reasons: d?.reasons ?? (r.message !== undefined ? [r.message] : []),
            status: r.status,
            code: r.code ?? null,
            evidenceHash: r.evidenceHash ?? null,
            taint: [...(r.taintSources ?? [])],
          };
          steps.push(s);
          onStep(s);
        }
      },
    },
  );
  const facts = rt.gate.sessions.get(result.runId)?.snapshot();
  return {
    result,
    steps,
    quarantined: facts?.quarantined ?? false,
    quarantineReason: facts?.quarantineReason ?? null,
  };
}

const short = (v: unknown, max = 120): string => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

/** Three readable lines per step: proposal, decision with reasons, outcome with evidence. */
export function formatStep(s: StepRecord): string {
  const lines = [`[${s.iteration}] ${s.tool} ${short(s.arguments)}`];
  if (s.stage === "not_evaluated") lines.push("    - not evaluated (the run stopped first)");
  else if (s.stage === "hook")
    lines.push(
      `    x denied by the AARTS engine after the Gate allowed it: ${short(s.reasons.join("; "), 160)}`,
    );
  else if (s.stage === "contract")
    lines.push(`    x rejected by contract: ${short(s.reasons.join("; "), 160)}`);
  else {
    const why = s.reasons.length > 0 ? `  ${short(s.reasons.join("; "), 160)}` : "";
    lines.push(`    ${s.decision === "allow" || s.decision === "modify" ? "+" : "x"} ${s.decision}${why}`);
  }
  if (s.status === "executed") {
    const taint = s.taint.length > 0 ? `  taint ${s.taint.join(",")}` : "";
    lines.push(`    = executed  evidence ${s.evidenceHash ?? "-"}${taint}`);
  } else if (s.status === "failed") {
    lines.push(`    ! failed ${s.code ?? ""}  evidence ${s.evidenceHash ?? "-"}`);
  }
  return `${lines.join("\n")}\n`;
}

export interface JournalSummary {
  db: string;
  verified: boolean;
  entries: number;
  head: string | null;
  failure: string | null;
}

export async function journalSummary(rt: Runtime): Promise<JournalSummary> {
  const report = await rt.verify();
  return {
    db: rt.dbPath,
    verified: report.ok,
    entries: report.checked,
    head: report.head?.hash ?? null,
    failure: report.ok
      ? null
      : `${report.failure.reason} at seq ${report.failure.seq}: ${report.failure.message}`,
  };
}
