// Circuit breakers (OATS §9.3): a tool that keeps failing is cut off so an agent's
// retry loop cannot hammer it. closed -> open after N consecutive failures ->
// half_open after a cool-down, admitting a bounded number of trial calls; a trial
// failure reopens, enough trial successes close. The clock is injectable so tests
// never sleep, and every transition is reported (the executors journal it).
import { ExecutorError } from "../contracts/index.js";

export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerOptions {
  /** Consecutive failures that open the breaker (default 5). */
  failureThreshold?: number;
  /** How long an open breaker rejects before admitting trials (default 30 s). */
  coolDownMs?: number;
  /** Trial calls admitted while half-open (default 1). */
  halfOpenMaxCalls?: number;
  /** Trial successes needed to close again (default 1, at most halfOpenMaxCalls). */
  halfOpenSuccesses?: number;
  now?: () => number;
}

export interface BreakerTransition {
  tool: string;
  from: BreakerState;
  to: BreakerState;
  consecutiveFailures: number;
  at: number;
}

export type BreakerAdmission =
  | { ok: true; permit: BreakerPermit }
  | { ok: false; state: BreakerState; retryAfterMs: number };

/** One admitted call; report its outcome exactly once. */
export interface BreakerPermit {
  success(): void;
  failure(): void;
  /** The call ended without telling us anything about the tool's health (e.g. it was cancelled). */
  release(): void;
}

function positiveInt(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isInteger(n) || n < 1) {
    throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", `${name} must be a positive integer`);
  }
  return n;
}

export class CircuitBreaker {
  readonly tool: string;
  readonly #threshold: number;
  readonly #coolDownMs: number;
  readonly #trialCalls: number;
  readonly #trialSuccesses: number;
  readonly #now: () => number;
  readonly #onTransition: ((t: BreakerTransition) => void) | undefined;
  #state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  #trialsAdmitted = 0;
  #trialsSucceeded = 0;

  constructor(tool: string, options: BreakerOptions = {}, onTransition?: (t: BreakerTransition) => void) {
    this.tool = tool;
    this.#threshold = positiveInt("failureThreshold", options.failureThreshold, 5);
    const cool = options.coolDownMs ?? 30_000;
    if (!Number.isFinite(cool) || cool < 0) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "coolDownMs must be a non-negative number");
    }
    this.#coolDownMs = cool;
    this.#trialCalls = positiveInt("halfOpenMaxCalls", options.halfOpenMaxCalls, 1);
    this.#trialSuccesses = positiveInt("halfOpenSuccesses", options.halfOpenSuccesses, 1);
    if (this.#trialSuccesses > this.#trialCalls) {
      throw new ExecutorError("ERR_EXEC_CONFIG_INVALID", "halfOpenSuccesses cannot exceed halfOpenMaxCalls");
    }
    this.#now = options.now ?? Date.now;
    this.#onTransition = onTransition;
  }

  /** Current state, moving open -> half_open when the cool-down has passed. */
  get state(): BreakerState {
    if (this.#state === "open" && this.#now() - this.#openedAt >= this.#coolDownMs) {
      this.#move("half_open");
    }
    return this.#state;
  }

  get consecutiveFailures(): number {
    return this.#failures;
  }

  /** Ask to run one call. An open breaker (or a half-open one out of trials) says no without running anything. */
  admit(): BreakerAdmission {
    const state = this.state;
    if (state === "open") {
      return { ok: false, state, retryAfterMs: Math.max(0, this.#openedAt + this.#coolDownMs - this.#now()) };
    }
    if (state === "half_open") {
      if (this.#trialsAdmitted >= this.#trialCalls) return { ok: false, state, retryAfterMs: 0 };
      this.#trialsAdmitted++;
    }
    const trial = state === "half_open";
    let settled = false;
    const settle = (fn: () => void) => () => {
      if (settled) return;
      settled = true;
      fn();
    };
    return {
      ok: true,
      permit: {
        success: settle(() => this.#onSuccess(trial)),
        failure: settle(() => this.#onFailure(trial)),
        release: settle(() => {
          if (trial && this.#state === "half_open") this.#trialsAdmitted--;
        }),
      },
    };
  }

  #onSuccess(trial: boolean): void {
    if (trial) {
      if (this.#state !== "half_open") return;
      this.#trialsSucceeded++;
      if (this.#trialsSucceeded >= this.#trialSuccesses) {
        this.#failures = 0;
        this.#move("closed");
      }
      return;
    }
    if (this.#state === "closed") this.#failures = 0;
  }

  #onFailure(trial: boolean): void {
    this.#failures++;
    if (trial) {
      if (this.#state === "half_open") this.#open();
      return;
    }
    if (this.#state === "closed" && this.#failures >= this.#threshold) this.#open();
  }

  #open(): void {
    this.#openedAt = this.#now();
    this.#move("open");
  }

  #move(to: BreakerState): void {
    const from = this.#state;
    if (from === to) return;
    this.#state = to;
    this.#trialsAdmitted = 0;
    this.#trialsSucceeded = 0;
    this.#onTransition?.({
      tool: this.tool,
      from,
      to,
      consecutiveFailures: this.#failures,
      at: this.#now(),
    });
  }
}

/** One breaker per tool name, created on first use with shared options. */
export class BreakerRegistry {
  readonly #options: BreakerOptions;
  readonly #breakers = new Map<string, CircuitBreaker>();
  readonly #listeners = new Set<(t: BreakerTransition) => void>();

  constructor(options: BreakerOptions = {}) {
    // Validate once, eagerly: a bad option is a deployment error, not a per-call one.
    new CircuitBreaker("(validation)", options);
    this.#options = options;
  }

  for(tool: string): CircuitBreaker {
    let b = this.#breakers.get(tool);
    if (b === undefined) {
      b = new CircuitBreaker(tool, this.#options, (t) => {
        for (const l of this.#listeners) l(t);
      });
      this.#breakers.set(tool, b);
    }
    return b;
  }

  /** Subscribe to transitions of every breaker; returns an unsubscribe function. */
  onTransition(listener: (t: BreakerTransition) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
