// The ORGA loop as a typestate (OATS §4). Each phase is its own class and carries only
// its own transition: `reason()` exists on Reasoning, `gate()` on PolicyCheck, `act()`
// on Dispatching, `observe()` on Observing. A Dispatching object is obtainable only
// from `PolicyCheck.gate()`, and it holds the Gate's tickets privately, so "dispatch
// without gating" cannot even be written. Behind the types, for JavaScript callers and
// casts: phase objects are single-use (a spent one throws ERR_LOOP_STALE_PHASE), phase
// objects not minted by this module throw ERR_LOOP_FORGED_PHASE, and executors accept
// only tickets the Gate minted. Model output is untrusted throughout: unknown tools,
// bad arguments, denials and tool failures become observations, never exceptions.
// The phase classes live here; run state and the mint in run-state.ts, the entry points
// (startLoop, runLoop) in driver.ts, and the loop's types in types.ts.
import { type GateRequestInput, LoopError, sha256Of } from "../contracts/index.js";
import type { ModelResponse, TokenUsage } from "./model.js";
import type { GateVerdict, TicketLike } from "./ports.js";
import {
  addTaint,
  budgetStop,
  checkMint,
  claim,
  errorInfo,
  freezeAll,
  type GatedItem,
  MINT,
  type PhaseSlot,
  record,
  register,
  stepSignal,
  taintSourcesOf,
  terminate,
  totalTokens,
} from "./run-state.js";
import type { DecisionView, LoopResult, ProposalView, ResultView, TerminationReason } from "./types.js";

/** Reason: the model sees the conversation and the contract-derived tool schemas and proposes. */
export class Reasoning {
  readonly phase = "reasoning" as const;
  readonly runId: string;
  readonly traceId: string;
  /** Completed model turns so far. */
  readonly iteration: number;

  /** @internal Created by startLoop() and Observing.observe() only. */
  constructor(token: typeof MINT, slot: PhaseSlot<TicketLike>) {
    checkMint(token);
    this.runId = slot.run.runId;
    this.traceId = slot.run.traceId;
    this.iteration = slot.run.iterations;
    register(this, "reasoning", slot);
    Object.freeze(this);
  }

  /** Calls the model once; its proposals go to the Gate next. Records ReasoningComplete. */
  async reason(): Promise<PolicyCheck> {
    const { run } = claim<TicketLike>(this, "reasoning", "reason");
    const proposals: ProposalView[] = [];
    let response: ModelResponse | null = null;
    const stop = budgetStop(run);
    if (stop !== null) {
      run.terminating = stop;
    } else {
      run.iterations += 1;
      try {
        response = await run.o.model.complete(
          { messages: run.messages.slice(), tools: run.o.tools.modelTools() },
          { signal: stepSignal(run) },
        );
      } catch (err) {
        run.terminating = budgetStop(run) ?? "model_error";
        await record(run, "RecoveryTriggered", {
          strategy: "terminate",
          phase: "reason",
          error: errorInfo(err),
        });
      }
    }
    let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
    if (response !== null) {
      usage = {
        inputTokens: nonNegInt(response.usage?.inputTokens),
        outputTokens: nonNegInt(response.usage?.outputTokens),
      };
      run.usage.inputTokens += usage.inputTokens;
      run.usage.outputTokens += usage.outputTokens;
      run.lastText = typeof response.text === "string" ? response.text : null;
      const calls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
      const seen = new Set<string>();
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
    } else {
      run.lastText = null;
    }
    await record(run, "ReasoningComplete", {
      iteration: run.iterations,
      model: run.o.model.id,
      proposed_actions: proposals.map((p) =>
        p.arguments.ok
          ? { call_id: p.callId, name: p.name, arguments: p.arguments.value }
          : { call_id: p.callId, name: p.name, arguments_error: p.arguments.message },
      ),
      usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
      text_length: run.lastText?.length ?? 0,
      ...(run.lastText ? { text_hash: sha256Of(run.lastText) } : {}),
      ...(response === null ? { skipped: run.terminating } : {}),
    });
    return new PolicyCheck(MINT, { run, proposals });
  }
}

function nonNegInt(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : 0;
}

/** Gate: each proposal is checked against its contract and judged by the Gate, one by one. */
export class PolicyCheck {
  readonly phase = "policy_check" as const;
  readonly runId: string;
  readonly traceId: string;
  readonly iteration: number;
  /** What the model proposed this turn (untrusted). */
  readonly proposals: readonly ProposalView[];
  /** The model's text this turn, if any. */
  readonly text: string | null;

  /** @internal */
  constructor(token: typeof MINT, slot: PhaseSlot<TicketLike>) {
    checkMint(token);
    this.runId = slot.run.runId;
    this.traceId = slot.run.traceId;
    this.iteration = slot.run.iterations;
    this.proposals = freezeAll((slot.proposals ?? []).map((p) => ({ ...p })));
    this.text = slot.run.lastText;
    register(this, "policy_check", slot);
    Object.freeze(this);
  }

  /** Decides every proposal; only allowed ones carry a Gate-minted ticket. Records PolicyEvaluated. */
  async gate(): Promise<Dispatching> {
    const slot = claim<TicketLike>(this, "policy_check", "gate");
    const { run } = slot;
    const gated: GatedItem<TicketLike>[] = [];
    for (const [i, p] of (slot.proposals ?? []).entries()) {
      const base = { callId: p.callId, name: p.name };
      if (run.terminating !== null) {
        gated.push({
          view: {
            ...base,
            stage: "not_evaluated",
            reasons: [`loop stopping: ${run.terminating}`],
            dispatch: false,
          },
        });
        continue;
      }
      if (i >= run.limits.maxToolCallsPerTurn) {
        run.counts.rejected += 1;
        gated.push({
          view: {
            ...base,
            stage: "contract",
            decision: "deny",
            reasons: [`too many tool calls in one turn (limit ${run.limits.maxToolCallsPerTurn})`],
            dispatch: false,
          },
        });
        continue;
      }
      if (!p.arguments.ok) {
        run.counts.rejected += 1;
        gated.push({
          view: {
            ...base,
            stage: "contract",
            decision: "deny",
            reasons: [`${p.arguments.code}: ${p.arguments.message}`],
            dispatch: false,
          },
        });
        continue;
      }
      const resolved = run.o.tools.resolve(p.name, p.arguments.value);
      if (!resolved.ok) {
        run.counts.rejected += 1;
        gated.push({
          view: {
            ...base,
            stage: "contract",
            decision: "deny",
            reasons: [`${resolved.code}: ${resolved.message}`],
            dispatch: false,
          },
        });
        continue;
      }
      const request: GateRequestInput = {
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
      let verdict: GateVerdict<TicketLike>;
      try {
        verdict = await run.o.gate.decide(request, { signal: stepSignal(run) });
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
        gated.push({
          view: {
            ...base,
            stage: "gate",
            decision: "deny",
            reasons: [`gate fault: ${info.code}`],
            dispatch: false,
          },
        });
        continue;
      }
      const executable =
        (verdict.decision === "allow" || verdict.decision === "modify") && verdict.ticket !== undefined;
      run.counts[verdict.decision] += 1;
      if (verdict.decision === "deny") run.denials += 1;
      gated.push({
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
      });
      if (verdict.quarantined) run.terminating = "quarantined";
      else if (run.denials >= run.limits.maxDenials) run.terminating = "circuit_breaker";
    }
    await record(run, "PolicyEvaluated", {
      iteration: run.iterations,
      decisions: gated
        .filter((g) => g.view.decision !== undefined)
        .map((g) => ({
          action: g.view.name,
          call_id: g.view.callId,
          decision: g.view.decision,
          stage: g.view.stage,
          decision_id: g.view.decisionId,
          policy_ids: g.view.policyIds,
          reasons: g.view.reasons.map((r) => r.slice(0, 4096)),
        })),
      skipped: gated.filter((g) => g.view.decision === undefined).map((g) => g.view.callId),
    });
    return new Dispatching(MINT, { run, gated });
  }
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

/** Act: dispatches exactly the calls the Gate ticketed, each through its executor. */
export class Dispatching {
  readonly phase = "dispatching" as const;
  readonly runId: string;
  readonly traceId: string;
  readonly iteration: number;
  /** The Gate's decisions for this turn (tickets stay private to the loop). */
  readonly decisions: readonly DecisionView[];

  /** @internal */
  constructor(token: typeof MINT, slot: PhaseSlot<TicketLike>) {
    checkMint(token);
    this.runId = slot.run.runId;
    this.traceId = slot.run.traceId;
    this.iteration = slot.run.iterations;
    this.decisions = freezeAll((slot.gated ?? []).map((g) => ({ ...g.view })));
    register(this, "dispatching", slot);
    Object.freeze(this);
  }

  /** Executes ticketed calls in order; failures are results, not exceptions. Records ToolsDispatched. */
  async act(): Promise<Observing> {
    const slot = claim<TicketLike>(this, "dispatching", "act");
    const { run } = slot;
    const results: ResultView[] = [];
    const dispatched: Record<string, unknown>[] = [];
    for (const g of slot.gated ?? []) {
      const v = g.view;
      const base = {
        callId: v.callId,
        name: v.name,
        ...(v.decision ? { decision: v.decision } : {}),
        ...(v.decisionId ? { decisionId: v.decisionId } : {}),
      };
      if (!v.dispatch || g.ticket === undefined) {
        results.push({ ...base, ...undispatched(v) });
        continue;
      }
      const stop = budgetStop(run) ?? run.terminating;
      if (stop !== null) {
        results.push({ ...base, status: "not_executed", message: `loop stopping: ${stop}` });
        continue;
      }
      run.toolCalls += 1;
      const started = run.now();
      let r: ResultView;
      try {
        const out = await run.o.executor.execute(g.ticket, { signal: stepSignal(run) });
        const durationMs = out.durationMs ?? Math.max(0, run.now() - started);
        if (out.ok) {
          const labels = out.taintLabels ?? [];
          addTaint(run, labels);
          r = {
            ...base,
            status: "executed",
            durationMs,
            taintSources: taintSourcesOf(labels),
            ...(out.evidenceHash ? { evidenceHash: out.evidenceHash } : {}),
          };
          observations.set(r, out.output);
          if (v.decisionId !== undefined && run.o.gate.recordResult !== undefined) {
            try {
              await run.o.gate.recordResult(v.decisionId, {
                taintLabels: labels,
                output: out.output,
                ...(out.evidenceHash ? { evidenceHash: out.evidenceHash } : {}),
              });
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
        } else {
          r = {
            ...base,
            status: "failed",
            code: out.code,
            message: out.message,
            durationMs,
            ...(out.evidenceHash ? { evidenceHash: out.evidenceHash } : {}),
          };
        }
      } catch (err) {
        const info = errorInfo(err);
        r = {
          ...base,
          status: "failed",
          code: info.code,
          message: info.message,
          durationMs: Math.max(0, run.now() - started),
        };
      }
      results.push(r);
      dispatched.push({
        name: r.name,
        call_id: r.callId,
        decision_id: r.decisionId,
        ok: r.status === "executed",
        code: r.code,
        duration_ms: Math.round(r.durationMs ?? 0),
        evidence_hash: r.evidenceHash,
        taint_sources: r.taintSources,
      });
      if (r.status === "failed") {
        run.consecutiveFailures += 1;
        const tripped = run.consecutiveFailures >= run.limits.maxConsecutiveFailures;
        if (tripped) run.terminating = "circuit_breaker";
        await record(run, "RecoveryTriggered", {
          strategy: tripped ? "circuit_open" : "report_to_model",
          phase: "act",
          tool: r.name,
          consecutive_failures: run.consecutiveFailures,
          error: { code: r.code ?? "ERR_UNEXPECTED", message: (r.message ?? "").slice(0, 1024) },
        });
      } else {
        run.consecutiveFailures = 0;
      }
    }
    await record(run, "ToolsDispatched", { iteration: run.iterations, tools: dispatched });
    return new Observing(MINT, { run, results });
  }
}

// Tool outputs travel from act() to observe() beside the result views, so that the
// public views stay small and printable.
const observations = new WeakMap<ResultView, unknown>();

function undispatched(v: DecisionView): Pick<ResultView, "status" | "message"> {
  if (v.stage === "not_evaluated") return { status: "not_executed", message: v.reasons.join("; ") };
  if (v.stage === "contract") return { status: "rejected", message: v.reasons.join("; ") };
  if (v.decision === "step_up" || v.decision === "defer")
    return { status: "pending", message: v.reasons.join("; ") };
  return { status: "denied", message: v.reasons.join("; ") };
}

/** Observe: results, denials and refusals go back to the model; the loop continues or ends. */
export class Observing {
  readonly phase = "observing" as const;
  readonly runId: string;
  readonly traceId: string;
  readonly iteration: number;
  readonly results: readonly ResultView[];

  /** @internal */
  constructor(token: typeof MINT, slot: PhaseSlot<TicketLike>) {
    checkMint(token);
    this.runId = slot.run.runId;
    this.traceId = slot.run.traceId;
    this.iteration = slot.run.iterations;
    const results = slot.results ?? [];
    this.results = freezeAll(results.map((r) => ({ ...r })));
    register(this, "observing", slot);
    Object.freeze(this);
  }

  /** Feeds every result back to the model and decides: another Reasoning turn or a LoopResult. */
  async observe(): Promise<Reasoning | LoopResult> {
    const slot = claim<TicketLike>(this, "observing", "observe");
    const { run } = slot;
    const results = slot.results ?? [];
    for (const r of results) {
      run.messages.push({
        role: "tool",
        toolCallId: r.callId,
        name: r.name,
        content: observationText(r, observations.get(r), run.limits.maxObservationChars),
      });
    }
    const contextSize = run.messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);
    await record(run, "ObservationsCollected", {
      iteration: run.iterations,
      observation_count: results.length,
      context_size: contextSize,
      taint_sources: taintSourcesOf(run.taint),
    });
    const reason: TerminationReason | null =
      run.terminating ??
      (results.length === 0 ? "final_answer" : null) ??
      budgetStop(run) ??
      (run.iterations >= run.limits.maxIterations ? "iteration_limit" : null);
    if (reason === null) return new Reasoning(MINT, { run });
    return terminate(run, reason);
  }
}

function observationText(r: ResultView, output: unknown, max: number): string {
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
      body = { status: "error", code: r.code ?? null, message: r.message ?? "" };
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
