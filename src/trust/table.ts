// The trust table's arithmetic, as pure functions over one row (one truster's view of
// one subject): APAE §Trust Scoring (AIMD, the event table, decay, confidence) and
// §Quarantine (floors, doubling durations, expiry). The engine (engine.ts) only loads a
// row, calls these, and stores what they return, so the simulate CLI, the runtime and
// the tests all run the same code. Every change comes back as a step (what happened,
// before, after) so a score can be re-derived from the journal.
import type { TrustConfig } from "./config.js";

export const TRUST_EVENTS = [
  "task_success",
  "task_partial",
  "task_failure",
  "task_timeout",
  "policy_violation",
  "attestation_invalid",
  "rollback_triggered",
] as const;
export type TrustEventKind = (typeof TRUST_EVENTS)[number];

export type Confidence = "low" | "medium" | "high";
export type TrustStatus = "active" | "quarantined";

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** One truster's record of one subject. Times are milliseconds since the epoch. */
export interface TrustRow {
  truster: string;
  subject: string;
  /** The score as of `anchor` (decay after idleness is computed from it, never stored). */
  score: number;
  /** Trust events applied (direct observations). */
  interactions: number;
  lastInteraction: number | null;
  /** When `score` was last set by an event, an expiry or a lift: decay counts from here. */
  anchor: number;
  status: TrustStatus;
  quarantineUntil: number | null;
  quarantineCount: number;
  /** The 24 h window of the increase cap: when it opened, how much was gained in it. */
  gainWindowStart: number | null;
  gainInWindow: number;
  /** Set when the score came from a peer's assertion (the hops it travelled), else null. */
  propagatedHops: number | null;
}

export type TrustStepKind =
  | TrustEventKind
  | "decay"
  | "quarantine_expired"
  | "quarantine_lifted"
  | "quarantine_notice"
  | "trust_assertion";

/** One line of a score's derivation. */
export interface TrustStep {
  kind: TrustStepKind;
  time: number;
  /** The ECT the step came from (the event's, the assertion's, the lift's), if any. */
  ect: string | null;
  before: number;
  after: number;
  /** Why the arithmetic is not the plain formula (increase cap, direct precedence, ...). */
  note?: string;
}

export type EmittedAct = "apae:quarantine" | "apae:trust_revoke";

/** A protocol ECT the engine asks to be emitted (quarantine entry/recovery, revocation). */
export interface TrustEmission {
  time: number;
  execAct: EmittedAct;
  truster: string;
  subject: string;
  ext: Record<string, string | number>;
}

export interface Transition {
  row: TrustRow;
  steps: TrustStep[];
  emitted: TrustEmission[];
}

/** Scores are kept to 12 decimals so repeated float arithmetic prints cleanly. */
export function round12(x: number): number {
  return Math.round(x * 1e12) / 1e12;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

export function confidenceOf(interactions: number): Confidence {
  if (interactions >= 100) return "high";
  return interactions >= 10 ? "medium" : "low";
}

/** Length of the `count`-th quarantine: base × 2^(count−1), at most the maximum. */
export function quarantineHours(count: number, cfg: TrustConfig): number {
  return Math.min(cfg.quarantine_max_hours, cfg.quarantine_base_hours * 2 ** Math.max(0, count - 1));
}

export function freshRow(truster: string, subject: string, now: number, cfg: TrustConfig): TrustRow {
  return {
    truster,
    subject,
    score: cfg.initial_score,
    interactions: 0,
    lastInteraction: null,
    anchor: now,
    status: "active",
    quarantineUntil: null,
    quarantineCount: 0,
    gainWindowStart: null,
    gainInWindow: 0,
    propagatedHops: null,
  };
}

/**
 * The score after idleness: once `idle_days` pass without a change, it loses
 * `decay_per_day` per further whole day, never below the initial score. A score at or
 * below the initial one is left alone: waiting must not forgive a penalised peer.
 */
export function decayedScore(row: TrustRow, now: number, cfg: TrustConfig): number {
  if (row.status !== "active" || row.score <= cfg.initial_score) return row.score;
  const idle = now - row.anchor - cfg.idle_days * DAY_MS;
  if (idle < DAY_MS) return row.score;
  const days = Math.floor(idle / DAY_MS);
  return round12(Math.max(cfg.initial_score, row.score - cfg.decay_per_day * days));
}

function recoveryEmission(row: TrustRow, time: number, reason: string): TrustEmission {
  return {
    time,
    execAct: "apae:quarantine",
    truster: row.truster,
    subject: row.subject,
    ext: {
      "apae.subject": row.subject,
      "apae.to_state": "active",
      "apae.score": row.score,
      "apae.quarantine_count": row.quarantineCount,
      "apae.reason": reason,
    },
  };
}

/** Ends the quarantine at `at` (its expiry or a lift): score reset to the recovery score. */
export function endQuarantine(
  row: TrustRow,
  at: number,
  cfg: TrustConfig,
  how: Omit<TrustStep, "before" | "after" | "time">,
): Transition {
  const next: TrustRow = {
    ...row,
    status: "active",
    quarantineUntil: null,
    score: cfg.recovery_score,
    anchor: at,
  };
  const reason =
    how.kind === "quarantine_lifted"
      ? `lifted early${how.note ? ` (${how.note})` : ""}`
      : "quarantine expired";
  return {
    row: next,
    steps: [{ ...how, time: at, before: row.score, after: next.score }],
    emitted: [recoveryEmission(next, at, reason)],
  };
}

/** Applies a due quarantine expiry (at its `until`, however late it is noticed). */
export function settle(row: TrustRow, now: number, cfg: TrustConfig): Transition {
  if (row.status === "quarantined" && row.quarantineUntil !== null && row.quarantineUntil <= now) {
    return endQuarantine(row, row.quarantineUntil, cfg, { kind: "quarantine_expired", ect: null });
  }
  return { row, steps: [], emitted: [] };
}

function increase(
  row: TrustRow,
  amount: number,
  now: number,
  cfg: TrustConfig,
): { row: TrustRow; note?: string } {
  const cap = cfg.max_increase_per_day;
  if (cap === null) return { row: { ...row, score: round12(clamp01(row.score + amount)) } };
  const fresh = row.gainWindowStart === null || now >= row.gainWindowStart + DAY_MS;
  const start = fresh ? now : (row.gainWindowStart as number);
  const gained = fresh ? 0 : row.gainInWindow;
  const allowed = Math.max(0, round12(cap - gained));
  const score = round12(clamp01(row.score + Math.min(amount, allowed)));
  const next = { ...row, score, gainWindowStart: start, gainInWindow: round12(gained + (score - row.score)) };
  return amount > allowed ? { row: next, note: `increase capped at ${cap} per 24 h` } : { row: next };
}

function adjust(
  row: TrustRow,
  kind: TrustEventKind,
  now: number,
  cfg: TrustConfig,
): { row: TrustRow; note?: string } {
  switch (kind) {
    case "task_success":
      return increase(row, cfg.alpha, now, cfg);
    case "task_partial":
      return increase(row, 0.5 * cfg.alpha, now, cfg);
    case "policy_violation":
    case "attestation_invalid":
      return { row: { ...row, score: round12(clamp01(row.score * cfg.beta * cfg.beta)) } };
    default:
      return { row: { ...row, score: round12(clamp01(row.score * cfg.beta)) } };
  }
}

function thresholds(
  before: number,
  row: TrustRow,
  kind: TrustEventKind,
  now: number,
  cfg: TrustConfig,
): Transition {
  const emitted: TrustEmission[] = [];
  const base = { time: now, truster: row.truster, subject: row.subject };
  const fell = `${kind} took the score from ${before} to ${row.score}`;
  if (before >= cfg.revocation_floor && row.score < cfg.revocation_floor) {
    const ext = {
      "apae.subject": row.subject,
      "apae.score": row.score,
      "apae.threshold": cfg.revocation_floor,
      "apae.reason": `${fell}, below the revocation floor`,
    };
    emitted.push({ ...base, execAct: "apae:trust_revoke", ext });
  }
  if (row.status !== "active" || row.score >= cfg.quarantine_floor) return { row, steps: [], emitted };
  const count = row.quarantineCount + 1;
  const until = now + quarantineHours(count, cfg) * HOUR_MS;
  const next: TrustRow = { ...row, status: "quarantined", quarantineUntil: until, quarantineCount: count };
  emitted.push({
    ...base,
    execAct: "apae:quarantine",
    ext: {
      "apae.subject": row.subject,
      "apae.to_state": "quarantined",
      "apae.score": row.score,
      "apae.threshold": cfg.quarantine_floor,
      "apae.quarantine_until": new Date(until).toISOString(),
      "apae.quarantine_count": count,
      "apae.reason": `${fell}, below the quarantine floor`,
    },
  });
  return { row: next, steps: [], emitted };
}

/**
 * One trust event at `now`: a due expiry first, then decay since the last change, then
 * the event's adjustment, then the floors (revocation, quarantine).
 */
export function applyEvent(
  row: TrustRow,
  kind: TrustEventKind,
  now: number,
  cfg: TrustConfig,
  ect: string | null,
): Transition {
  const settled = settle(row, now, cfg);
  const steps = [...settled.steps];
  let current = settled.row;
  const decayed = decayedScore(current, now, cfg);
  if (decayed !== current.score) {
    steps.push({ kind: "decay", time: now, ect: null, before: current.score, after: decayed });
    current = { ...current, score: decayed };
  }
  const before = current.score;
  const adjusted = adjust(current, kind, now, cfg);
  const touched: TrustRow = {
    ...adjusted.row,
    interactions: current.interactions + 1,
    lastInteraction: now,
    anchor: now,
    propagatedHops: null,
  };
  const step: TrustStep = { kind, time: now, ect, before, after: touched.score };
  if (adjusted.note !== undefined) step.note = adjusted.note;
  steps.push(step);
  const t = thresholds(before, touched, kind, now, cfg);
  return { row: t.row, steps, emitted: [...settled.emitted, ...t.emitted] };
}
