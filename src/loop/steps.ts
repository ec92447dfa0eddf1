// The work inside each transition, one proposal or call at a time: reading the model's
// response, gating one proposal, dispatching one ticketed call, and the text an
// observation shows the model. The phase classes (phases.ts) sequence these steps and
// own the transitions; nothing here can mint a phase.
import {
  agentErrorText,
  type GateRequestInput,
  LoopError,
  type TaintLabel,
  taskOutcomeOf,
} from "../contracts/index.js";
import { beforeModelCall, canonicalOf, screenResponse, screenToolCall } from "./hook-moments.js";
import type { ModelResponse, TokenUsage } from "./model.js";
import type {
  ExecutionOutcome,
  GateVerdict,
  LoopUsage,
  ObservedResult,
  ResolvedCall,
  TicketLike,
} from "./ports.js";
import {
  addTaint,
  budgetStop,
  errorInfo,
  type GatedItem,
  type RunState,
  record,
  taintSourcesOf,
  totalTokens,
  withStepSignal,
} from "./run-state.js";
import type { DecisionView, ProposalView, ResultView } from "./types.js";

type Run = RunState<TicketLike>;

// Tool outputs travel from act() to observe() beside the result views, so that the
// public views stay small and printable.
export const observations = new WeakMap<ResultView, unknown>();

/** One model call; null when the loop is stopping or the call failed (RecoveryTriggered). */
export async function callModel(run: Run): Promise<ModelResponse | null> {
  if (run.terminating !== null) return null; // a start hook stopped the run
  const stop = budgetStop(run);
  if (stop !== null) {
    run.terminating = stop;
    return null;
  }
  run.iterations += 1;
  if (!(await beforeModelCall(run))) return null;
  try {
    const response = await withStepSignal(run, (signal) =>
      run.o.model.complete({ messages: run.messages.slice(), tools: run.o.tools.modelTools() }, { signal }),
    );
    return await screenResponse(run, response);
  } catch (err) {
    run.terminating = budgetStop(run) ?? "model_error";
    await record(run, "RecoveryTriggered", { strategy: "terminate", phase: "reason", error: errorInfo(err) });
    return null;
  }
}

/** Takes the model's (untrusted) response into the run: usage, text, proposals with unique ids. */
export function takeResponse(
  run: Run,
  response: ModelResponse,
): { proposals: ProposalView[]; usage: TokenUsage } {
  const usage = {
    inputTokens: nonNegInt(response.usage?.inputTokens),
    outputTokens: nonNegInt(response.usage?.outputTokens),
  };
  run.usage.inputTokens += usage.inputTokens;
  run.usage.outputTokens += usage.outputTokens;
  run.lastText = typeof response.text === "string" ? response.text : null;
  const calls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
  const seen = new Set<string>();
  const proposals: ProposalView[] = [];
  for (const [i, c] of calls.entries()) {
    let id = typeof c.id === "string" && /^[A-Za-z0-9_.:-]{1,128}$/.test(c.id) ? c.id : "";
    if (id === "" || seen.has(id)) id = `call_${run.iterations}_${i}`;
    seen.add(id);
    proposals.push({ callId: id, name: String(c.name).slice(0, 256), arguments: c.arguments });
  }
  run.messages.push({
    role: "assistant",
    content: run.lastText,
    ...(proposals.length > 0
      ? {
          toolCalls: proposals.map((p) => ({
            id: p.callId,
            name: p.name,
            argumentsJson: p.arguments.ok ? JSON.stringify(p.arguments.value) : p.arguments.raw,
          })),
        }
      : {}),
  });
  if (totalTokens(run.usage) > run.limits.maxTokens) run.terminating = "token_budget";
  return { proposals, usage };
}

function nonNegInt(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : 0;
}

/** A proposal settled before the Gate: by its contract (counted as rejected) or by the loop stopping. */
function refused(
  run: Run,
  base: { callId: string; name: string },
  reason: string,
  stopping = false,
): GatedItem<TicketLike> {
  if (stopping) return { view: { ...base, stage: "not_evaluated", reasons: [reason], dispatch: false } };
  run.counts.rejected += 1;
  return { view: { ...base, stage: "contract", decision: "deny", reasons: [reason], dispatch: false } };
}

/** Checks the `i`-th proposal of the turn against its contract, then asks the Gate. */
export async function gateProposal(run: Run, p: ProposalView, i: number): Promise<GatedItem<TicketLike>> {
  const base = { callId: p.callId, name: p.name };
  if (run.terminating !== null) return refused(run, base, `loop stopping: ${run.terminating}`, true);
  if (i >= run.limits.maxToolCallsPerTurn)
    return refused(run, base, `too many tool calls in one turn (limit ${run.limits.maxToolCallsPerTurn})`);
  if (!p.arguments.ok) return refused(run, base, `${p.arguments.code}: ${p.arguments.message}`);
  const resolved = run.o.tools.resolve(p.name, p.arguments.value);
  if (!resolved.ok) return refused(run, base, `${resolved.code}: ${resolved.message}`);
  let verdict: GateVerdict<TicketLike>;
  try {
    verdict = await withStepSignal(run, (signal) =>
      run.o.gate.decide(gateRequest(run, resolved), { signal }),
    );
    if (!wellFormedVerdict(verdict)) {
      throw new LoopError("ERR_LOOP_CONFIG_INVALID", "the Gate returned a malformed verdict");
    }
  } catch (err) {
    // Fail closed: a Gate that cannot decide has denied, and the run stops.
    run.terminating = "gate_fault";
    run.counts.deny += 1;
    const info = errorInfo(err);
    await record(run, "RecoveryTriggered", {
      strategy: "fail_closed",
      phase: "gate",
      tool: p.name,
      error: info,
    });
    return {
      view: {
        ...base,
        stage: "gate",
        decision: "deny",
        reasons: [`gate fault: ${info.code}`],
        dispatch: false,
      },
    };
  }
  const item = takeVerdict(run, base, verdict);
  if (!item.view.dispatch || run.o.hooks === undefined) return item;
  const call = { name: p.name, args: p.arguments.value, resolved };
  const refusal = await screenToolCall(
    run,
    call,
    verdict.decision === "modify" ? verdict.parameters : undefined,
  );
  if (refusal === undefined) {
    const tool = canonicalOf(resolved.toolClass, resolved.action);
    return { ...item, hooked: { tool, args: { ...(verdict.parameters ?? p.arguments.value) } } };
  }
  return hookRefused(run, item, refusal);
}

/** The hook vetoed a call the Gate ticketed: the ticket is released unredeemed, the call is a denial. */
function hookRefused(run: Run, item: GatedItem<TicketLike>, reasons: string[]): GatedItem<TicketLike> {
  const v = item.view;
  if (v.decisionId !== undefined) run.o.gate.release?.(v.decisionId);
  if (v.decision !== undefined && v.decision !== "deny") run.counts[v.decision] -= 1;
  run.counts.deny += 1;
  run.denials += 1;
  if (run.denials >= run.limits.maxDenials) run.terminating ??= "circuit_breaker";
  const hookReasons = reasons.map((r) => `aarts: ${r}`);
  return { view: { ...v, stage: "hook", decision: "deny", reasons: hookReasons, dispatch: false } };
}

function gateRequest(run: Run, resolved: Extract<ResolvedCall, { ok: true }>): GateRequestInput {
  return {
    principalId: run.o.principalId,
    runId: run.runId,
    toolClass: resolved.toolClass,
    action: resolved.action,
    tool: resolved.tool,
    parameters: resolved.parameters as GateRequestInput["parameters"],
    // The context accumulator: everything the run has observed so far taints what it proposes next.
    taintLabels: run.taint.map((l) => ({ ...l })),
    originalRequest: run.o.task,
    ...(run.lastText ? { rationale: run.lastText.slice(0, 100_000) } : {}),
    traceId: run.traceId,
  };
}

function takeVerdict(
  run: Run,
  base: { callId: string; name: string },
  verdict: GateVerdict<TicketLike>,
): GatedItem<TicketLike> {
  const executable =
    (verdict.decision === "allow" || verdict.decision === "modify") && verdict.ticket !== undefined;
  run.counts[verdict.decision] += 1;
  if (verdict.decision === "deny") run.denials += 1;
  if (verdict.quarantined) run.terminating = "quarantined";
  else if (run.denials >= run.limits.maxDenials) run.terminating = "circuit_breaker";
  return {
    view: {
      ...base,
      stage: "gate",
      decision: verdict.decision,
      decisionId: verdict.decisionId,
      reasons: [...verdict.reasons],
      ...(verdict.policyIds ? { policyIds: [...verdict.policyIds] } : {}),
      dispatch: executable,
    },
    ...(executable ? { ticket: verdict.ticket } : {}),
  };
}

const DECISION_SET: ReadonlySet<string> = new Set(["allow", "deny", "modify", "step_up", "defer"]);

/** A verdict the loop can act on; anything else is treated as a Gate fault (fail closed). */
function wellFormedVerdict(v: unknown): v is GateVerdict<TicketLike> {
  if (v === null || typeof v !== "object") return false;
  const x = v as Record<string, unknown>;
  return (
    typeof x.decision === "string" &&
    DECISION_SET.has(x.decision) &&
    (typeof x.decisionId === "string" || x.decisionId === undefined) &&
    Array.isArray(x.reasons) &&
    x.reasons.every((r) => typeof r === "string")
  );
}

/** Runs one gated call if it was ticketed and the loop is not stopping; failures are results. */
export async function dispatchCall(run: Run, g: GatedItem<TicketLike>): Promise<ResultView> {
  const v = g.view;
  const base = {
    callId: v.callId,
    name: v.name,
    ...(v.decision ? { decision: v.decision } : {}),
    ...(v.decisionId ? { decisionId: v.decisionId } : {}),
  };
  const ticket = g.ticket;
  if (!v.dispatch || ticket === undefined) return { ...base, ...undispatched(v) };
  const stop = budgetStop(run) ?? run.terminating;
  if (stop !== null) return { ...base, status: "not_executed", message: `loop stopping: ${stop}` };
  run.toolCalls += 1;
  const started = run.now();
  try {
    const out = await withStepSignal(run, (signal) => run.o.executor.execute(ticket, { signal }));
    const durationMs = out.durationMs ?? Math.max(0, run.now() - started);
    const evidence = out.evidenceHash ? { evidenceHash: out.evidenceHash } : {};
    if (!out.ok) return await failed(run, v, { ...out, durationMs, ...evidence });
    const labels = out.taintLabels ?? [];
    addTaint(run, labels);
    const r: ResultView = {
      ...base,
      status: "executed",
      durationMs,
      taintSources: taintSourcesOf(labels),
      ...evidence,
    };
    observations.set(r, out.output);
    if (v.decisionId !== undefined)
      await reportResult(run, v, {
        taintLabels: labels,
        output: out.output,
        outcome: "success",
        ...evidence,
        ...(out.usage !== undefined ? { usage: out.usage } : {}),
      });
    return r;
  } catch (err) {
    const info = errorInfo(err);
    const r: ResultView = {
      ...base,
      status: "failed",
      code: info.code,
      message: agentErrorText(info.message),
      durationMs: Math.max(0, run.now() - started),
    };
    detail.set(r, info.message);
    return r;
  }
}

/**
 * A call the executor reports as failed. Its message may quote the tool (an HTTP error
 * body) and Warden's internals: the agent gets `agentErrorText` of it, labelled as tool
 * output (with the executor's own labels), and the Gate records that taint and indexes
 * the text. The full message is journaled by countFailure.
 */
async function failed(
  run: Run,
  v: DecisionView,
  out: Extract<ExecutionOutcome, { ok: false }> & { durationMs: number },
): Promise<ResultView> {
  const labels: TaintLabel[] = [...(out.taintLabels ?? []), { source: "tool-output", origin: v.name }];
  addTaint(run, labels);
  const r: ResultView = {
    callId: v.callId,
    name: v.name,
    ...(v.decision ? { decision: v.decision } : {}),
    ...(v.decisionId ? { decisionId: v.decisionId } : {}),
    status: "failed",
    code: out.code,
    message: agentErrorText(out.message),
    durationMs: out.durationMs,
    taintSources: taintSourcesOf(labels),
    ...(out.evidenceHash ? { evidenceHash: out.evidenceHash } : {}),
  };
  detail.set(r, out.message);
  const observed = { code: out.code, message: out.message };
  if (v.decisionId !== undefined)
    await reportResult(run, v, {
      taintLabels: labels,
      output: { error: observed },
      outcome: taskOutcomeOf(false, out.code),
      ...(out.evidenceHash ? { evidenceHash: out.evidenceHash } : {}),
      ...(out.usage !== undefined ? { usage: out.usage } : {}),
    });
  return r;
}

/**
 * Meters a completed iteration or a model's tokens against the run's OATS §9.2 budgets in
 * the Gate's context; a spent iterations or tokens budget stops the loop. A report the
 * Gate cannot take stops it too (fail closed).
 */
export async function reportUsage(run: Run, usage: LoopUsage, phase: "reason" | "observe"): Promise<void> {
  if (run.o.gate.recordUsage === undefined) return;
  let spent: readonly string[];
  try {
    spent = await run.o.gate.recordUsage({ runId: run.runId, principalId: run.o.principalId }, usage);
  } catch (err) {
    run.terminating ??= "gate_fault";
    await record(run, "RecoveryTriggered", { strategy: "fail_closed", phase, error: errorInfo(err) });
    return;
  }
  if (spent.includes("budget_iterations_exhausted")) run.terminating ??= "iteration_limit";
  else if (spent.includes("budget_tokens_exhausted")) run.terminating ??= "token_budget";
}

/** The full message of a failed result (journaled, never shown to the agent). */
const detail = new WeakMap<ResultView, string>();

/** Tells the Gate what an executed call produced, so its context accumulates the output's taint. */
async function reportResult(run: Run, v: DecisionView, observed: ObservedResult): Promise<void> {
  if (v.decisionId === undefined || run.o.gate.recordResult === undefined) return;
  try {
    await run.o.gate.recordResult(v.decisionId, observed);
  } catch (err) {
    // The Gate's context would miss this output's taint: stop rather than decide blind.
    run.terminating = "gate_fault";
    await record(run, "RecoveryTriggered", {
      strategy: "fail_closed",
      phase: "act",
      tool: v.name,
      error: errorInfo(err),
    });
  }
}

/** Counts a failed call towards the circuit breaker (a success resets it); failures are journaled. */
export async function countFailure(run: Run, r: ResultView): Promise<void> {
  if (r.status !== "failed") {
    run.consecutiveFailures = 0;
    return;
  }
  run.consecutiveFailures += 1;
  const tripped = run.consecutiveFailures >= run.limits.maxConsecutiveFailures;
  if (tripped) run.terminating = "circuit_breaker";
  await record(run, "RecoveryTriggered", {
    strategy: tripped ? "circuit_open" : "report_to_model",
    phase: "act",
    tool: r.name,
    consecutive_failures: run.consecutiveFailures,
    error: { code: r.code ?? "ERR_UNEXPECTED", message: (detail.get(r) ?? r.message ?? "").slice(0, 1024) },
  });
}

function undispatched(v: DecisionView): Pick<ResultView, "status" | "message"> {
  if (v.stage === "not_evaluated") return { status: "not_executed", message: v.reasons.join("; ") };
  if (v.stage === "contract") return { status: "rejected", message: v.reasons.join("; ") };
  if (v.decision === "step_up" || v.decision === "defer")
    return { status: "pending", message: v.reasons.join("; ") };
  return { status: "denied", message: v.reasons.join("; ") };
}

export function observationText(r: ResultView, output: unknown, max: number): string {
  let body: Record<string, unknown>;
  switch (r.status) {
    case "executed":
      body = {
        status: "ok",
        output: output ?? null,
        ...(r.taintSources?.length ? { taint: r.taintSources } : {}),
      };
      break;
    case "denied":
      // OATS §4.5: the denial and its reasons are an observation; the model may try something else.
      body = { status: "denied", decision: r.decision ?? "deny", reasons: r.message ?? "" };
      break;
    case "pending":
      body = { status: "not_executed", decision: r.decision ?? null, reasons: r.message ?? "" };
      break;
    case "rejected":
      body = { status: "rejected", reason: r.message ?? "" };
      break;
    case "failed":
      body = {
        status: "error",
        code: r.code ?? null,
        message: r.message ?? "",
        ...(r.taintSources?.length ? { taint: r.taintSources } : {}),
      };
      break;
    default:
      body = { status: "not_executed", reason: r.message ?? "" };
  }
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch {
    text = JSON.stringify({ status: r.status, output: "[unserialisable output]" });
  }
  return text.length > max ? `${text.slice(0, max)}…[truncated ${text.length - max} chars]` : text;
}
