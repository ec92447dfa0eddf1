// Entry points of the loop: startLoop validates the options and opens a run (LoopStarted),
// runLoop drives it along the only legal path, reason → gate → act → observe.
import { LoopError, newTraceId, parseId, uuidv7 } from "../contracts/index.js";
import { hooksAtStart } from "./hook-moments.js";
import { type Dispatching, type Observing, type PolicyCheck, Reasoning } from "./phases.js";
import type { TicketLike } from "./ports.js";
import { MINT, type RunState, record } from "./run-state.js";
import { DEFAULT_LIMITS, type LoopLimits, type LoopOptions, type LoopResult } from "./types.js";

/** The loop in a given phase: `AgentLoop<"reasoning">` has `reason()` and nothing else, and so on. */
export interface PhaseTypes {
  reasoning: Reasoning;
  policy_check: PolicyCheck;
  dispatching: Dispatching;
  observing: Observing;
}
export type Phase = keyof PhaseTypes;
export type AgentLoop<P extends Phase> = PhaseTypes[P];

function resolveLimits(partial: Partial<LoopLimits> | undefined): LoopLimits {
  const limits: LoopLimits = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(partial ?? {})) {
    if (!(k in DEFAULT_LIMITS)) throw new LoopError("ERR_LOOP_CONFIG_INVALID", `unknown limit ${k}`);
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) {
      throw new LoopError("ERR_LOOP_CONFIG_INVALID", `limit ${k} must be a positive integer`);
    }
    limits[k as keyof LoopLimits] = v;
  }
  return limits;
}

/** Refuses options the loop cannot run with (ERR_LOOP_CONFIG_INVALID). */
function checkOptions<T extends TicketLike>(options: LoopOptions<T>): void {
  for (const port of ["model", "gate", "executor", "journal", "tools"] as const) {
    if (options[port] === null || typeof options[port] !== "object") {
      throw new LoopError("ERR_LOOP_CONFIG_INVALID", `${port} is required`);
    }
  }
  if (typeof options.task !== "string" || options.task.length === 0 || options.task.length > 1_000_000) {
    throw new LoopError(
      "ERR_LOOP_CONFIG_INVALID",
      "task must be a non-empty string of at most 1,000,000 characters",
    );
  }
  if (
    typeof options.principalId !== "string" ||
    !/^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/.test(options.principalId)
  ) {
    throw new LoopError("ERR_LOOP_CONFIG_INVALID", "principalId must be a Gate principal name");
  }
  const c = options.compaction;
  if (c !== undefined && !(positive(c.atChars) && positive(c.keepMessages))) {
    throw new LoopError(
      "ERR_LOOP_CONFIG_INVALID",
      "compaction needs positive integer atChars and keepMessages",
    );
  }
  if ((options.components !== undefined || c !== undefined) && options.hooks === undefined) {
    throw new LoopError(
      "ERR_LOOP_CONFIG_INVALID",
      "components and compaction are checked by hooks: give hooks",
    );
  }
}

const positive = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n > 0;

/** Starts a run: records LoopStarted and returns the first Reasoning phase. */
export async function startLoop<T extends TicketLike>(
  options: LoopOptions<T>,
): Promise<AgentLoop<"reasoning">> {
  checkOptions(options);
  const limits = resolveLimits(options.limits);
  // The one id grammar of src/contracts (ids.ts): printable ASCII, 1-128 characters.
  const runId = options.runId ?? uuidv7();
  if (!parseId("run", runId).ok)
    throw new LoopError("ERR_LOOP_CONFIG_INVALID", "runId must be 1-128 printable ASCII characters");
  const traceId = options.traceId ?? newTraceId();
  if (!/^[0-9a-f]{32}$/.test(traceId))
    throw new LoopError("ERR_LOOP_CONFIG_INVALID", "traceId must be 32 lowercase hex digits");
  const now = options.now ?? (() => performance.now());
  const run: RunState<T> = {
    o: options,
    limits,
    runId,
    traceId,
    now,
    startedAt: now(),
    messages: [
      ...(options.systemPrompt ? [{ role: "system" as const, content: options.systemPrompt }] : []),
      { role: "user", content: options.task },
    ],
    usage: { inputTokens: 0, outputTokens: 0 },
    iterations: 0,
    taint: [],
    consecutiveFailures: 0,
    denials: 0,
    toolCalls: 0,
    counts: { allow: 0, deny: 0, modify: 0, step_up: 0, defer: 0, rejected: 0 },
    terminating: null,
    lastText: null,
    hookLog: { fired: 0, blocked: [], loaded: [], refused: [] },
    compactions: 0,
  };
  await record(run, "LoopStarted", {
    agent_id: options.principalId,
    request: options.task,
    config: {
      model: options.model.id,
      tools: options.tools.modelTools().map((t) => t.name),
      limits: { ...limits },
    },
  });
  await hooksAtStart(run as unknown as RunState<TicketLike>);
  return new Reasoning(MINT, { run: run as unknown as RunState<TicketLike> });
}

/** Observer callbacks for runLoop: each phase object as it is reached (read-only views). */
export interface LoopObserver {
  onPolicyCheck?(p: AgentLoop<"policy_check">): void;
  onDispatching?(d: AgentLoop<"dispatching">): void;
  onObserving?(o: AgentLoop<"observing">): void;
}

/** Drives a run to its end along the only legal path: reason → gate → act → observe. */
export async function runLoop<T extends TicketLike>(
  options: LoopOptions<T>,
  observer: LoopObserver = {},
): Promise<LoopResult> {
  let phase: AgentLoop<"reasoning"> = await startLoop(options);
  for (;;) {
    const checked = await phase.reason();
    observer.onPolicyCheck?.(checked);
    const gated = await checked.gate();
    observer.onDispatching?.(gated);
    const acted = await gated.act();
    observer.onObserving?.(acted);
    const next = await acted.observe();
    if (next.phase === "terminated") return next;
    phase = next;
  }
}
