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
import { sha256Of } from "../contracts/index.js";
import { hooksAtEnd, screenResult } from "./hook-moments.js";
import type { TokenUsage } from "./model.js";
import type { TicketLike } from "./ports.js";
import {
  budgetStop,
  checkMint,
  claim,
  freezeAll,
  type GatedItem,
  MINT,
  type PhaseSlot,
  type RunState,
  record,
  register,
  taintSourcesOf,
  terminate,
} from "./run-state.js";
import {
  callModel,
  countFailure,
  dispatchCall,
  gateProposal,
  observations,
  observationText,
  reportUsage,
  takeResponse,
} from "./steps.js";
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
    const response = await callModel(run);
    let proposals: ProposalView[] = [];
    let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
    if (response !== null) ({ proposals, usage } = takeResponse(run, response));
    else run.lastText = null;
    const tokens = usage.inputTokens + usage.outputTokens;
    if (tokens > 0) await reportUsage(run, { tokens }, "reason");
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
    for (const [i, p] of (slot.proposals ?? []).entries()) gated.push(await gateProposal(run, p, i));
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
      const r = await dispatchCall(run, g);
      if (r.status === "executed" && g.hooked !== undefined) await screenExecuted(run, g, r);
      results.push(r);
      if (!g.view.dispatch || g.ticket === undefined || r.status === "not_executed") continue;
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
      await countFailure(run, r);
    }
    await record(run, "ToolsDispatched", { iteration: run.iterations, tools: dispatched });
    return new Observing(MINT, { run, results });
  }
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
    // The iteration is complete: it counts against the run's iterations budget.
    await reportUsage(run, { iterations: 1 }, "observe");
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
    await hooksAtEnd(run, reason);
    return terminate(run, reason);
  }
}

/** PostToolUse: what the hook allows the model to see replaces the executed output. */
async function screenExecuted(
  run: RunState<TicketLike>,
  g: GatedItem<TicketLike>,
  r: ResultView,
): Promise<void> {
  if (g.hooked === undefined) return;
  const call = { name: r.name, tool: g.hooked.tool, args: g.hooked.args, durationMs: r.durationMs ?? 0 };
  const screened = await screenResult(run, call, observations.get(r));
  if (screened.changed) observations.set(r, screened.output);
}
