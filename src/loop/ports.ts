// What the loop needs from the layers below it, as small structural interfaces: the
// Gate (decides, mints tickets), the executors (redeem tickets), the journal (records
// every phase), and the tool catalogue (the model's view of contracts and the mapping
// from a proposed call to a structured Gate request). The real classes satisfy these
// directly or through a one-line adapter; tests use in-memory fakes that keep the same
// guarantees (tickets still come only from the Gate's mint).
import type { Decision, GateRequestInput, Sha256Hash, TaintLabel, TaskOutcome } from "../contracts/index.js";
import type { ModelTool } from "./model.js";

/** An opaque execution ticket: only the Gate mints one, only an executor redeems it. */
export type TicketLike = object;

/** The Gate's answer for one proposal. A ticket is present only for allow/modify. */
export interface GateVerdict<T extends TicketLike = TicketLike> {
  decision: Decision;
  decisionId: string;
  /** Human-readable reasons and reason codes; fed back to the model on denial (OATS §4.5). */
  reasons: readonly string[];
  policyIds?: readonly string[];
  ticket?: T;
  /** Parameters after a `modify` rewrite, for the record. */
  parameters?: Readonly<Record<string, unknown>>;
  /** The Gate quarantined the run: nothing more will be allowed, the loop stops. */
  quarantined?: boolean;
}

/** What the loop reports back after a call ran, so the Gate's session context accumulates it. */
export interface ObservedResult {
  taintLabels: readonly TaintLabel[];
  output: unknown;
  evidenceHash?: Sha256Hash;
  /** How the execution ended (APAE counts it as a task_* trust event). */
  outcome?: TaskOutcome;
  /** What the execution used (network, filesystem), as the executor reported it. */
  usage?: Readonly<Record<string, number>>;
}

export interface GatePort<T extends TicketLike = TicketLike> {
  decide(request: GateRequestInput, options?: { signal?: AbortSignal }): Promise<GateVerdict<T>>;
  /** Optional: feeds an executed call's output (taint, data for provenance) back into the Gate's context. */
  recordResult?(decisionId: string, result: ObservedResult): Promise<unknown>;
  /** Optional: drops a ticketed decision that will not be executed (a hook vetoed it). */
  release?(decisionId: string): void;
  /**
   * Optional: meters the run's usage outside a call (a completed iteration, a model's tokens)
   * against its OATS §9.2 budgets; resolves to the reason codes of the budgets now spent.
   */
  recordUsage?(run: RunRef, usage: LoopUsage): Promise<readonly string[]>;
}

/** Whose run a usage report is for. */
export interface RunRef {
  runId: string;
  principalId: string;
}

/** What the loop meters: completed iterations and model tokens. */
export interface LoopUsage {
  iterations?: number;
  tokens?: number;
}

export type ExecutionOutcome =
  | {
      ok: true;
      /** The tool's output as data; it is shown to the model as an observation. */
      output: unknown;
      /** Taint carried by the output (web pages, retrieved documents, ...). */
      taintLabels?: readonly TaintLabel[];
      evidenceHash?: Sha256Hash;
      durationMs?: number;
      /** What the execution used (network requests/bytes, filesystem writes). */
      usage?: Readonly<Record<string, number>>;
    }
  | {
      ok: false;
      code: string;
      /** Full detail: journaled; the agent sees `agentErrorText(message)`, tainted as tool output. */
      message: string;
      /** Taint of text in the message that came from the tool (an HTTP error body, ...). */
      taintLabels?: readonly TaintLabel[];
      evidenceHash?: Sha256Hash;
      durationMs?: number;
      usage?: Readonly<Record<string, number>>;
    };

export interface ExecutorPort<T extends TicketLike = TicketLike> {
  execute(ticket: T, options?: { signal?: AbortSignal }): Promise<ExecutionOutcome>;
}

/** OATS §8.2 loop events, as the journal receives them. */
export interface LoopEvent {
  type:
    | "LoopStarted"
    | "ReasoningComplete"
    | "PolicyEvaluated"
    | "ToolsDispatched"
    | "ObservationsCollected"
    | "LoopTerminated"
    | "RecoveryTriggered";
  run_id: string;
  trace_id: string;
  body: Record<string, unknown>;
}

export interface JournalPort {
  append(event: LoopEvent): unknown;
}

/** Where a proposed call becomes a structured Gate request, or is refused as inexpressible. */
export type ResolvedCall =
  | {
      ok: true;
      toolClass: string;
      action: string;
      tool: string;
      parameters: Record<string, unknown>;
    }
  | { ok: false; code: string; message: string };

export interface ToolCatalog {
  /** The model-visible tool schemas (from contracts, never templates). */
  modelTools(): readonly ModelTool[];
  /** Validates a proposed call against its contract; unknown tools and bad arguments are coded refusals. */
  resolve(name: string, args: Record<string, unknown>): ResolvedCall;
}
