// Semantic drift (OATS §7.4, E3): how far each structured action has moved from the run's
// original request, per action and cumulatively, and what the Gate does when it moved too
// far. Scored before judgement (an embedder may be remote, so this is the one await of
// the stage); the verdict only ever tightens the policy's decision.

import { actionText, distance, type Embedder } from "../context/index.js";
import type { Decision, GateRequest } from "../contracts/index.js";
import type { PolicyOutcome } from "../policy/index.js";
import { BoundedMap } from "./bounded-map.js";

/** A drift level's thresholds: the action is held or refused when its drift exceeds one. */
export interface DriftLevels {
  defer?: number | undefined;
  step_up?: number | undefined;
  deny?: number | undefined;
}

export type DriftTier = "low" | "medium" | "high" | "critical" | "default";

export interface DriftOptions {
  embedder: Embedder;
  /** Per-action thresholds by the contract's risk tier (`default`: a call without one). */
  thresholds?: Partial<Record<DriftTier, DriftLevels | undefined>>;
  /** Thresholds on the cumulative drift, by tier. */
  cumulative?: Partial<Record<DriftTier, DriftLevels | undefined>>;
  /** Weight of the newest action in the cumulative drift (EWMA, default 0.5). */
  smoothing?: number;
  /** Runs whose state is kept (default 1024; an evicted run starts again from its request). */
  maxRuns?: number;
}

/** The drift of one action. */
export interface DriftScore {
  /** 1 − cosine(original request, action), in [0, 1]. */
  action: number;
  /** Exponentially weighted mean of the run's per-action drift, this action included. */
  cumulative: number;
  /** Actions of the run scored so far, this one included. */
  steps: number;
  embedder: string;
}

export type DriftResult = { kind: "scored"; score: DriftScore } | { kind: "failed" } | { kind: "none" };

/**
 * Default thresholds, calibrated on test/fixtures/drift with the lexical embedder
 * (docs/policy.md#semantic-drift states the precision and recall they give there).
 */
export const DEFAULT_DRIFT_THRESHOLDS: Record<DriftTier, DriftLevels> = {
  low: { defer: 0.9 },
  medium: { step_up: 0.8 },
  high: { step_up: 0.75, deny: 0.95 },
  critical: { step_up: 0.7, deny: 0.9 },
  default: { step_up: 0.8 },
};

/** The per-action drift above which the calibration counts an action as flagged (medium tier). */
export const DRIFT_FLAG_THRESHOLD = 0.8;

export const DEFAULT_CUMULATIVE_THRESHOLDS: Record<DriftTier, DriftLevels> = {
  low: {},
  medium: { step_up: 0.85 },
  high: { step_up: 0.8 },
  critical: { deny: 0.85 },
  default: { step_up: 0.85 },
};

interface RunState {
  original: string;
  vector: Promise<Float32Array>;
  ewma: number;
  steps: number;
}

export class DriftTracker {
  readonly #o: DriftOptions;
  readonly #runs: BoundedMap<string, RunState>;

  constructor(o: DriftOptions) {
    const s = o.smoothing ?? 0.5;
    if (!(s > 0 && s <= 1)) throw new RangeError("drift smoothing must be in (0, 1]");
    this.#o = o;
    this.#runs = new BoundedMap(o.maxRuns ?? 1024);
  }

  get embedderId(): string {
    return this.#o.embedder.id;
  }

  /** Scores one action against the run's original request; `none` when the run states none. */
  async score(request: GateRequest, original: string | undefined): Promise<DriftResult> {
    if (original === undefined || original.length === 0) return { kind: "none" };
    // The run's first original request is its intent: a later call that states another
    // one (an agent restating "what the user asked" as its own action) is still scored
    // against the first.
    let run = this.#runs.get(request.runId);
    if (run === undefined) {
      run = { original, vector: this.#one(original), ewma: 0, steps: 0 };
      this.#runs.set(request.runId, run);
    }
    const text = actionText(request);
    let d: number;
    try {
      const [orig, act] = await Promise.all([run.vector, this.#one(text)]);
      d = distance(orig, act);
    } catch {
      // A failed request embedding is retried on the run's next call.
      if (this.#runs.get(request.runId) === run && run.steps === 0) this.#runs.delete(request.runId);
      return { kind: "failed" };
    }
    const s = this.#o.smoothing ?? 0.5;
    run.ewma = run.steps === 0 ? d : s * d + (1 - s) * run.ewma;
    run.steps++;
    return {
      kind: "scored",
      score: { action: round3(d), cumulative: round3(run.ewma), steps: run.steps, embedder: this.embedderId },
    };
  }

  /** The strictest level the score exceeds for a contract of `tier`, with its reason code. */
  verdict(score: DriftScore, tier: string | undefined): { decision: Decision; reason: string } | undefined {
    const t = (tier ?? "default") as DriftTier;
    const perAction = pick(this.#o.thresholds, DEFAULT_DRIFT_THRESHOLDS, t);
    const cumulative = pick(this.#o.cumulative, DEFAULT_CUMULATIVE_THRESHOLDS, t);
    const a = level(perAction, score.action);
    const c = level(cumulative, score.cumulative);
    if (a === undefined && c === undefined) return undefined;
    if (c === undefined || (a !== undefined && STRICTNESS[a] >= STRICTNESS[c]))
      return { decision: a as Decision, reason: "drift_exceeded" };
    return { decision: c, reason: "drift_cumulative_exceeded" };
  }

  async #one(text: string): Promise<Float32Array> {
    const [v] = await this.#o.embedder.embed([text]);
    if (v === undefined) throw new Error("embedder returned nothing");
    return v;
  }
}

const STRICTNESS = { defer: 1, step_up: 2, deny: 3 } as const;
type Level = keyof typeof STRICTNESS;

function pick(
  configured: DriftOptions["thresholds"],
  defaults: Record<DriftTier, DriftLevels>,
  t: DriftTier,
): DriftLevels {
  if (configured === undefined) return defaults[t] ?? defaults.default;
  return configured[t] ?? configured.default ?? {};
}

function level(l: DriftLevels, v: number): Level | undefined {
  if (l.deny !== undefined && v > l.deny) return "deny";
  if (l.step_up !== undefined && v > l.step_up) return "step_up";
  if (l.defer !== undefined && v > l.defer) return "defer";
  return undefined;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

const DECISION_STRICTNESS: Record<Decision, number> = { allow: 0, modify: 0, defer: 1, step_up: 2, deny: 3 };

/**
 * The policy's outcome tightened by a drift verdict: an allow or modify becomes the
 * verdict (a rewrite is kept for what may later run), a hold becomes a stricter hold or
 * a denial; a denial stays. Never loosens.
 */
export function applyDrift(
  outcome: PolicyOutcome,
  v: { decision: Decision; reason: string },
  timeoutMs: number,
): PolicyOutcome {
  if (DECISION_STRICTNESS[v.decision] <= DECISION_STRICTNESS[outcome.decision]) return outcome;
  const out: PolicyOutcome = {
    ...outcome,
    decision: v.decision,
    reasonCodes: [...outcome.reasonCodes, v.reason],
    matchedRules: [
      ...outcome.matchedRules,
      {
        id: "drift",
        source: "builtin",
        decision: v.decision,
        reason: "semantic drift from the original request",
      },
    ],
  };
  if (v.decision === "step_up") {
    out.stepUp = outcome.stepUp ?? { approverRole: "approver", timeoutMs };
    delete out.defer;
  }
  if (v.decision === "defer") out.defer = outcome.defer ?? { timeoutMs };
  if (v.decision === "deny") delete out.modify;
  return out;
}

/** The drift stage of one admitted call: the run's pinned original request, else the request's own. */
export function scoreDrift(
  deps: {
    o: { drift?: DriftTracker };
    sessions: { get(runId: string): { originalRequest?: string | undefined } | undefined };
  },
  a: { request: GateRequest; checked: GateRequest; session?: { originalRequest?: string | undefined } },
): Promise<DriftResult> {
  const tracker = deps.o.drift;
  if (tracker === undefined) return Promise.resolve({ kind: "none" });
  const original =
    a.session?.originalRequest ??
    deps.sessions.get(a.request.runId)?.originalRequest ??
    a.checked.originalRequest;
  return tracker.score(a.checked, original);
}
