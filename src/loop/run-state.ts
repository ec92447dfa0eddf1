// The state one run shares across its phase objects, and the machinery that makes those
// objects single-use and unforgeable: a phase's state lives in a private WeakMap slot keyed
// by the object, claimed (and retired) by its one transition; constructors demand MINT.
// This module is internal to src/loop (not re-exported by index.ts, not reachable through
// the package's exports map): nothing outside the loop can mint or claim a phase.
import { LoopError, sha256Of, type TaintLabel, timedScope, WardenError } from "../contracts/index.js";
import type { HookPoint } from "../hooks/index.js";
import type { Phase } from "./driver.js";
import type { ChatMessage, TokenUsage } from "./model.js";
import type { LoopEvent, TicketLike } from "./ports.js";
import type {
  DecisionCounts,
  DecisionView,
  HookSummary,
  LoopLimits,
  LoopOptions,
  LoopResult,
  ProposalView,
  ResultView,
  TerminationReason,
} from "./types.js";

export interface GatedItem<T> {
  view: DecisionView;
  ticket?: T;
  /** Set when a HookHost screened the call: its §7 category and input, for PostToolUse. */
  hooked?: { tool: string; args: Record<string, unknown> };
}

export interface RunState<T extends TicketLike> {
  o: LoopOptions<T>;
  limits: LoopLimits;
  runId: string;
  traceId: string;
  now: () => number;
  startedAt: number;
  messages: ChatMessage[];
  usage: TokenUsage;
  iterations: number;
  taint: TaintLabel[];
  consecutiveFailures: number;
  denials: number;
  toolCalls: number;
  counts: DecisionCounts;
  terminating: TerminationReason | null;
  lastText: string | null;
  /** What the AARTS hooks did (hook-moments.ts). */
  hookLog: {
    fired: number;
    blocked: HookSummary["blocked"];
    loaded: HookSummary["loaded"];
    refused: HookSummary["refused"];
    outputWithheld?: boolean;
  };
  hookStop?: HookPoint;
  compactions: number;
}

export interface PhaseSlot<T extends TicketLike> {
  run: RunState<T>;
  /** Set by register(): the phase the slot belongs to, checked by claim(). */
  kind?: Phase;
  proposals?: ProposalView[];
  gated?: GatedItem<T>[];
  results?: ResultView[];
}

export const MINT = Symbol("warden.loop.mint");
export const live = new WeakMap<object, PhaseSlot<TicketLike>>();
export const spent = new WeakSet<object>();

/** Takes a phase object's state and retires the object: each phase object is used once. */
export function claim<T extends TicketLike>(obj: object, kind: Phase, transition: string): PhaseSlot<T> {
  const slot = live.get(obj);
  if (slot === undefined) {
    if (spent.has(obj)) {
      throw new LoopError(
        "ERR_LOOP_STALE_PHASE",
        `${transition}() called on a phase object that was already used; continue with the object the previous transition returned`,
      );
    }
    throw new LoopError(
      "ERR_LOOP_FORGED_PHASE",
      `${transition}() called on an object that is not a live loop phase`,
    );
  }
  if (slot.kind !== kind) {
    // A transition borrowed onto another phase (e.g. Dispatching.prototype.act.call(policyCheck)).
    throw new LoopError(
      "ERR_LOOP_FORGED_PHASE",
      `${transition}() called on a ${slot.kind ?? "unknown"} phase`,
    );
  }
  live.delete(obj);
  spent.add(obj);
  return slot as unknown as PhaseSlot<T>;
}

export function checkMint(token: unknown): void {
  if (token !== MINT) {
    throw new LoopError(
      "ERR_LOOP_FORGED_PHASE",
      "loop phases are created by startLoop() and transitions only",
    );
  }
}

export function register<T extends TicketLike>(obj: object, kind: Phase, slot: PhaseSlot<T>): void {
  live.set(obj, { ...slot, kind } as unknown as PhaseSlot<TicketLike>);
}

export async function record<T extends TicketLike>(
  run: RunState<T>,
  type: LoopEvent["type"],
  body: Record<string, unknown>,
): Promise<void> {
  await run.o.journal.append({ type, run_id: run.runId, trace_id: run.traceId, body: dropUndefined(body) });
}

/** Journal bodies are canonical JSON: optional fields that are absent are left out, at any depth. */
export function dropUndefined(v: Record<string, unknown>): Record<string, unknown> {
  return clean(v) as Record<string, unknown>;
}

export function clean(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(clean);
  if (x === null || typeof x !== "object") return x;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) if (v !== undefined) out[k] = clean(v);
  return out;
}

export function errorInfo(err: unknown): { code: string; message: string } {
  if (err instanceof WardenError) return { code: err.code, message: err.message };
  // Foreign errors may quote anything (URLs with credentials, payloads): keep only the name.
  return { code: "ERR_UNEXPECTED", message: err instanceof Error ? err.name : "non-error thrown" };
}

export function timeLeft<T extends TicketLike>(run: RunState<T>): number {
  return run.limits.timeBudgetMs - (run.now() - run.startedAt);
}

export function totalTokens(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens;
}

/** A reason to stop that applies between any two steps. */
export function budgetStop<T extends TicketLike>(run: RunState<T>): TerminationReason | null {
  if (run.o.signal?.aborted) return "aborted";
  if (timeLeft(run) <= 0) return "time_budget";
  if (totalTokens(run.usage) >= run.limits.maxTokens) return "token_budget";
  return null;
}

/**
 * Runs one step (a model call, a Gate decision, an execution) with a signal that aborts when
 * the run's time is up or its signal aborts. The run's signal may outlive many steps (or
 * runs): the step follows it only while it runs (`timedScope`, not `AbortSignal.any`, which
 * leaves an entry per step with it in Node 20–24).
 */
export async function withStepSignal<T extends TicketLike, R>(
  run: RunState<T>,
  step: (signal: AbortSignal) => Promise<R>,
): Promise<R> {
  const scope = timedScope(run.o.signal, timeLeft(run));
  try {
    return await step(scope.signal);
  } finally {
    scope.release();
  }
}

export function addTaint<T extends TicketLike>(run: RunState<T>, labels: readonly TaintLabel[]): void {
  for (const l of labels) {
    if (!run.taint.some((x) => x.source === l.source && x.origin === l.origin)) run.taint.push({ ...l });
  }
}

export function taintSourcesOf(labels: readonly TaintLabel[]): string[] {
  return [...new Set(labels.map((l) => l.source))].sort();
}

export function freezeAll<V>(items: V[]): readonly V[] {
  for (const i of items) Object.freeze(i);
  return Object.freeze(items);
}

export async function terminate<T extends TicketLike>(
  run: RunState<T>,
  reason: TerminationReason,
): Promise<LoopResult> {
  const durationMs = Math.max(0, Math.round(run.now() - run.startedAt));
  const finalText = reason === "final_answer" ? run.lastText : null;
  await record(run, "LoopTerminated", {
    reason,
    iterations: run.iterations,
    usage: { input_tokens: run.usage.inputTokens, output_tokens: run.usage.outputTokens },
    duration_ms: durationMs,
    tool_calls: run.toolCalls,
    decisions: { ...run.counts },
    ...(finalText ? { final_text_hash: sha256Of(finalText) } : {}),
    ...(run.o.hooks !== undefined
      ? {
          hooks: {
            fired: run.hookLog.fired,
            blocked: run.hookLog.blocked.map((b) => b.hookPoint),
            ...(run.hookStop ? { stopped_by: run.hookStop } : {}),
          },
        }
      : {}),
  });
  return Object.freeze({
    phase: "terminated" as const,
    runId: run.runId,
    traceId: run.traceId,
    reason,
    finalText,
    iterations: run.iterations,
    usage: Object.freeze({ ...run.usage }),
    durationMs,
    decisions: Object.freeze({ ...run.counts }),
    toolCalls: run.toolCalls,
    taintSources: Object.freeze(taintSourcesOf(run.taint)),
    ...(run.o.hooks !== undefined ? { hooks: Object.freeze(hookSummary(run)) } : {}),
  });
}

function hookSummary<T extends TicketLike>(run: RunState<T>): HookSummary {
  const l = run.hookLog;
  return {
    fired: l.fired,
    blocked: l.blocked.map((b) => ({ ...b, reasons: [...b.reasons] })),
    loaded: l.loaded.map((x) => ({ ...x })),
    refused: l.refused.map((x) => ({ ...x })),
    ...(l.outputWithheld ? { outputWithheld: true } : {}),
    ...(run.hookStop ? { stoppedBy: run.hookStop } : {}),
    compactions: run.compactions,
  };
}
