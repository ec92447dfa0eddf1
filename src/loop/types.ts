// The loop's configuration and what it reports: limits, options, the read-only views of
// proposals, decisions and results, and the final LoopResult.
import type { Decision, Sha256Hash } from "../contracts/index.js";
import type { HookHost, HookPoint } from "../hooks/index.js";
import type { ModelAdapter, ProposedArguments, TokenUsage } from "./model.js";
import type { ExecutorPort, GatePort, JournalPort, TicketLike, ToolCatalog } from "./ports.js";

export interface LoopLimits {
  /** Model turns (ORGA iterations). */
  maxIterations: number;
  /** Total input + output tokens across the run. */
  maxTokens: number;
  /** Wall-clock budget for the whole run, in ms. */
  timeBudgetMs: number;
  /** Circuit breaker: consecutive failed tool executions. */
  maxConsecutiveFailures: number;
  /** Circuit breaker: Gate denials in one run (an agent hammering a closed door). */
  maxDenials: number;
  /** Tool calls considered per model turn; extras are refused as observations. */
  maxToolCallsPerTurn: number;
  /** Longest observation text shown to the model per tool call. */
  maxObservationChars: number;
}

export const DEFAULT_LIMITS: Readonly<LoopLimits> = Object.freeze({
  maxIterations: 16,
  maxTokens: 200_000,
  timeBudgetMs: 300_000,
  maxConsecutiveFailures: 3,
  maxDenials: 8,
  maxToolCallsPerTurn: 16,
  maxObservationChars: 16_384,
});

export interface LoopOptions<T extends TicketLike = TicketLike> {
  model: ModelAdapter;
  gate: GatePort<T>;
  executor: ExecutorPort<T>;
  journal: JournalPort;
  tools: ToolCatalog;
  /** Who the agent acts as; from configuration, never from the model. */
  principalId: string;
  /** The user's task (trusted input). */
  task: string;
  systemPrompt?: string;
  runId?: string;
  traceId?: string;
  limits?: Partial<LoopLimits>;
  /** Cancels the run (checked between steps and passed to the model and executors). */
  signal?: AbortSignal;
  /** Clock in ms (tests). */
  now?: () => number;
  /**
   * The AARTS host the run fires its hook points through (hook-moments.ts, docs/loop.md).
   * Hooks only make the run stricter: every tool call still needs the Gate's ticket.
   */
  hooks?: HookHost;
  /** Components loaded at start, each admitted by its hook first (needs `hooks`). */
  components?: LoopComponents;
  /** Truncating compaction when the context passes `atChars` (PreCompact/PostCompact fire). */
  compaction?: { atChars: number; keepMessages: number };
}

/** AARTS hook-specific fields of each component (§8.2); a skill's body joins the system prompt. */
export interface LoopComponents {
  plugins?: readonly (Record<string, unknown> & { plugin_id: string })[];
  skills?: readonly (Record<string, unknown> & { file_path: string; body_content?: string })[];
  mcpServers?: readonly (Record<string, unknown> & { server_id: string })[];
}

/** What the run's hooks did (present when `hooks` was given). */
export interface HookSummary {
  fired: number;
  blocked: { hookPoint: HookPoint; reasons: string[] }[];
  loaded: { kind: string; id: string; hooksStripped: boolean }[];
  refused: { kind: string; id: string }[];
  /** PreOutputDeliver denied the final answer: `finalText` is null. */
  outputWithheld?: boolean;
  /** The hook whose denial ended the run (reason `hook_denied`). */
  stoppedBy?: HookPoint;
  compactions: number;
}

export type TerminationReason =
  | "final_answer"
  | "iteration_limit"
  | "token_budget"
  | "time_budget"
  | "circuit_breaker"
  | "quarantined"
  | "model_error"
  | "gate_fault"
  | "aborted"
  /** A blocking AARTS hook denied a step the run cannot continue without (docs/loop.md). */
  | "hook_denied";

export interface ProposalView {
  callId: string;
  name: string;
  arguments: ProposedArguments;
}

/** Where a proposal was settled: refused by its contract, decided by the Gate, or never evaluated. */
export type DecisionStage = "contract" | "gate" | "hook" | "not_evaluated";

export interface DecisionView {
  callId: string;
  name: string;
  stage: DecisionStage;
  /** The Gate's decision; contract refusals are recorded as deny. Absent when not evaluated. */
  decision?: Decision;
  decisionId?: string;
  reasons: readonly string[];
  policyIds?: readonly string[];
  /** Whether a ticket was issued and the call will be dispatched. */
  dispatch: boolean;
}

export type ResultStatus = "executed" | "failed" | "denied" | "rejected" | "pending" | "not_executed";

export interface ResultView {
  callId: string;
  name: string;
  status: ResultStatus;
  decision?: Decision;
  decisionId?: string;
  code?: string;
  message?: string;
  evidenceHash?: Sha256Hash;
  durationMs?: number;
  taintSources?: readonly string[];
}

export interface DecisionCounts {
  allow: number;
  deny: number;
  modify: number;
  step_up: number;
  defer: number;
  /** Proposals refused by their contract before reaching policy. */
  rejected: number;
}

export interface LoopResult {
  readonly phase: "terminated";
  readonly runId: string;
  readonly traceId: string;
  readonly reason: TerminationReason;
  /** The model's final answer (only for `final_answer`). */
  readonly finalText: string | null;
  readonly iterations: number;
  readonly usage: Readonly<TokenUsage>;
  readonly durationMs: number;
  readonly decisions: Readonly<DecisionCounts>;
  readonly toolCalls: number;
  readonly taintSources: readonly string[];
  readonly hooks?: Readonly<HookSummary>;
}
