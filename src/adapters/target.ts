// What a governed tool calls through: library mode (a composed runtime in this process)
// or HTTP mode (a sidecar). Both answer one outcome union, so a framework adapter is the
// same code in either mode.
import { mergeTaint } from "../context/index.js";
import { AdapterError, TaintLabel } from "../contracts/index.js";
import type { ModelTool } from "../tools/index.js";
import type { GovernedOutcome } from "./outcome.js";

export interface CallOptions {
  /** The framework's cancellation (a step-up wait ends with it, journaled as cancelled). */
  signal?: AbortSignal;
  /** W3C trace id for the journal, when the framework has one. */
  traceId?: string;
}

export interface GovernedTarget {
  readonly mode: "library" | "http";
  /** The model's view of a contract (name, description, typed parameters), or undefined. */
  modelTool(name: string): ModelTool | undefined;
  /** The run calls are made in (created by the runtime or the sidecar on first use). */
  runId(): Promise<string>;
  /** One governed call with the model's structured arguments. Never throws for a refusal. */
  call(tool: string, args: Record<string, unknown>, options?: CallOptions): Promise<GovernedOutcome>;
}

/**
 * The run's accumulated taint, carried into every later request (as the ORGA loop's
 * context accumulator does): once the agent has seen untrusted content, everything it
 * proposes next is judged with that content's labels. Labels only ever join, never leave.
 */
export class TaintCarry {
  #labels: TaintLabel[] = [];

  /** Adds the labels an outcome carried (the output's taint as Warden recorded it). */
  observe(outcome: GovernedOutcome): void {
    if (outcome.kind !== "allowed" && outcome.kind !== "fault") return;
    const parsed = outcome.taint.flatMap((l) => {
      const r = TaintLabel.safeParse({
        source: l.source,
        origin: l.origin,
        ...(l.confidence !== undefined ? { confidence: l.confidence } : {}),
      });
      return r.success ? [r.data] : [];
    });
    this.#labels = mergeTaint(this.#labels, parsed);
  }

  labels(): TaintLabel[] {
    return this.#labels.map((l) => ({ ...l }));
  }
}

/**
 * The run a target's calls are made in: the one it was given, or one started on first use
 * (concurrent first calls share the start; a failed start is forgotten so a later call
 * may try again).
 */
export class RunOnce {
  readonly #start: () => Promise<string>;
  #run: Promise<string> | undefined;

  constructor(start: () => Promise<string>, given?: string) {
    this.#start = start;
    if (given !== undefined) this.#run = Promise.resolve(given);
  }

  get(): Promise<string> {
    this.#run ??= this.#start().catch((err: unknown) => {
      this.#run = undefined;
      throw err;
    });
    return this.#run;
  }
}

const DEFAULT_WAIT_MS = 60_000;

/** A wait bound in milliseconds (default 60 s), 1 ms to 24 h. */
export function checkWait(ms: number | undefined): number {
  const v = ms ?? DEFAULT_WAIT_MS;
  if (!Number.isSafeInteger(v) || v < 1 || v > 24 * 3_600_000)
    throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", "the wait bound must be 1 ms to 24 h");
  return v;
}
