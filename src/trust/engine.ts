// The APAE trust engine: trust tables per trusting principal over a TrustStore, updated by
// trust events (AIMD per §Trust Scoring), with the quarantine protocol's state machine
// (§Quarantine). The clock is injected; every change comes back as data (the steps with
// before/after and the ECT each came from, the protocol ECTs to emit) for the caller to
// journal (journal-events.ts) and to emit at its assurance level (ect.ts).
import { TrustError } from "../contracts/index.js";
import { DEFAULT_TRUST_CONFIG, type TrustConfig } from "./config.js";
import type { TrustStore } from "./store.js";
import {
  applyEvent,
  type Confidence,
  confidenceOf,
  decayedScore,
  freshRow,
  settle,
  TRUST_EVENTS,
  type Transition,
  type TrustEmission,
  type TrustEventKind,
  type TrustRow,
  type TrustStatus,
  type TrustStep,
} from "./table.js";

export interface TrustEngineOptions {
  store: TrustStore;
  config?: TrustConfig;
  /** Milliseconds since the epoch (default Date.now). */
  clock?: () => number;
}

/** A row as it stands at a moment: due expiry and idle decay applied. */
export interface TrustView {
  truster: string;
  subject: string;
  score: number;
  interactions: number;
  confidence: Confidence;
  status: TrustStatus;
  quarantineUntil: number | null;
  quarantineCount: number;
  lastInteraction: number | null;
  propagatedHops: number | null;
}

/** What one call changed: the row after, the derivation steps, the ECTs to emit. */
export interface TrustChange {
  view: TrustView;
  steps: TrustStep[];
  emitted: TrustEmission[];
}

export interface TrustEventInput {
  subject: string;
  event: TrustEventKind;
  /** Whose table (default: the deployment itself, `self_id`). */
  truster?: string;
  /** The jti of the ECT the event was derived from. */
  ect?: string | null;
  /** When it happened (default: the clock). */
  at?: number;
}

const EVENT_SET: ReadonlySet<string> = new Set(TRUST_EVENTS);
const MAX_ID = 1024;

function checkId(what: string, id: string): void {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID) {
    throw new TrustError("ERR_TRUST_EVENT_INVALID", `${what} must be a string of 1..${MAX_ID} characters`);
  }
}

/** The row seen at `now` without writing: a due expiry and decay applied. */
export function viewOf(row: TrustRow, now: number, cfg: TrustConfig): TrustView {
  const settled = settle(row, now, cfg).row;
  return {
    truster: settled.truster,
    subject: settled.subject,
    score: decayedScore(settled, now, cfg),
    interactions: settled.interactions,
    confidence: confidenceOf(settled.interactions),
    status: settled.status,
    quarantineUntil: settled.quarantineUntil,
    quarantineCount: settled.quarantineCount,
    lastInteraction: settled.lastInteraction,
    propagatedHops: settled.propagatedHops,
  };
}

export class TrustEngine {
  readonly config: TrustConfig;
  readonly store: TrustStore;
  readonly #clock: () => number;

  constructor(options: TrustEngineOptions) {
    this.store = options.store;
    this.config = options.config ?? DEFAULT_TRUST_CONFIG;
    this.#clock = options.clock ?? Date.now;
  }

  now(): number {
    return this.#clock();
  }

  /** Applies one trust event to `truster`'s row for `subject`. */
  async apply(input: TrustEventInput): Promise<TrustChange> {
    const truster = input.truster ?? this.config.self_id;
    checkId("subject", input.subject);
    checkId("truster", truster);
    if (!EVENT_SET.has(input.event)) {
      throw new TrustError(
        "ERR_TRUST_EVENT_INVALID",
        `unknown trust event ${String(input.event).slice(0, 64)}`,
      );
    }
    const at = input.at ?? this.#clock();
    return this.transition(truster, input.subject, at, (row, now) =>
      applyEvent(row, input.event, now, this.config, input.ect ?? null),
    );
  }

  /**
   * Runs one transition on a row atomically in the store. A time earlier than the row's
   * last change (clock skew between replicas) is taken as that time: scores never move
   * backwards in time.
   */
  async transition(
    truster: string,
    subject: string,
    at: number,
    step: (row: TrustRow, now: number) => Transition,
  ): Promise<TrustChange> {
    return this.store.update(truster, subject, (stored) => {
      const row = stored ?? freshRow(truster, subject, at, this.config);
      const now = Math.max(at, row.anchor);
      const t = step(row, now);
      const result = { view: viewOf(t.row, now, this.config), steps: t.steps, emitted: t.emitted };
      // A step that changed nothing about a row never stored leaves no row behind.
      const untouched = stored === undefined && t.steps.length === 0 && t.emitted.length === 0;
      return untouched ? { result } : { row: t.row, result };
    });
  }

  /** `truster`'s view of `subject` now; an unknown subject has the initial score. */
  async view(
    subject: string,
    truster: string = this.config.self_id,
    at: number = this.#clock(),
  ): Promise<TrustView> {
    const row = await this.store.get(truster, subject);
    return viewOf(row ?? freshRow(truster, subject, at, this.config), at, this.config);
  }

  /** The view of a subject `truster` has never seen (the initial score), without I/O. */
  freshView(subject: string, truster: string = this.config.self_id, at: number = this.#clock()): TrustView {
    return viewOf(freshRow(truster, subject, at, this.config), at, this.config);
  }

  /** Every row as it stands at `at`. */
  async table(at: number = this.#clock()): Promise<TrustView[]> {
    return (await this.store.list()).map((r) => viewOf(r, at, this.config));
  }

  /** Ends every quarantine due by `at` (score reset, recovery ECT), soonest first. */
  async tick(at: number = this.#clock()): Promise<TrustChange[]> {
    const changes: TrustChange[] = [];
    for (const due of await this.store.dueQuarantines(at)) {
      const change = await this.transition(due.truster, due.subject, at, (row, now) =>
        settle(row, now, this.config),
      );
      if (change.steps.length > 0) changes.push(change);
    }
    return changes;
  }
}
