// The session's hash chain: every event hashes its predecessor, so the run's history is
// tamper-evident. Memory is bounded: only the newest `retain` events are kept in memory;
// older ones are rolled into the anchor (the seq and `prev` hash of the oldest retained
// event), so a verifier holding the journal (where every event was written when it was
// appended) can still check the retained tail against it. Appending is O(1) amortized.

import type { Decision, Sha256Hash, TaintLabel } from "../contracts/index.js";
import { sha256Of } from "../contracts/index.js";
import type { WindowEvent } from "./behaviour.js";
import type { ResourceUsage } from "./budgets.js";
import { iso } from "./util.js";

export interface SessionCounters {
  proposed: number;
  allowed: number;
  denied: number;
  deferred: number;
  executed: number;
  stepUps: number;
  modified: number;
}

export function newCounters(): SessionCounters {
  return { proposed: 0, allowed: 0, denied: 0, deferred: 0, executed: 0, stepUps: 0, modified: 0 };
}

/** Counts a recorded decision. */
export function countDecision(c: SessionCounters, decision: Decision): void {
  c.proposed++;
  if (decision === "allow") c.allowed++;
  else if (decision === "deny") c.denied++;
  else if (decision === "defer") c.deferred++;
  else if (decision === "step_up") c.stepUps++;
  else c.modified++;
}

/** What triggered a quarantine, as journaled. */
export interface QuarantineTrigger {
  type: "behavioral_rule" | "denial_threshold" | "manual" | "trust_score" | "output_screening";
  ruleId?: string;
  reason: string;
  counters: SessionCounters;
  matchedEvents: WindowEvent[];
  at: string;
}

/** Why a run is quarantined from outside its own rules: an operator (`manual`) or the Gate's output screening. */
export type QuarantineCause = { type: "manual" } | { type: "output_screening"; ruleId?: string };

export type EventBody =
  | {
      type: "session.opened";
      runId: string;
      principalId: string;
      originalRequestHash?: Sha256Hash;
      parentRun?: string;
    }
  | {
      type: "call.decided";
      call: number;
      toolClass: string;
      action: string;
      tool?: string;
      principalId: string;
      requestHash: Sha256Hash;
      decision: Decision;
      reasonCodes: string[];
      taint: TaintLabel[];
      provenance: { path: string; kind: string; outputs: number[] }[];
      behaviour: string[];
    }
  | { type: "call.resolved"; call: number; decision: "allow" | "deny"; reasonCodes: string[] }
  | {
      type: "call.result";
      call: number;
      outputHash?: Sha256Hash;
      classification: string;
      taint: TaintLabel[];
      tokens?: number;
      cost?: number;
      /** What the execution used (budgets.ts): settled against the run's budgets. */
      resources?: ResourceUsage;
    }
  | { type: "usage"; tokens?: number; cost?: number; resources?: ResourceUsage }
  | { type: "quarantine"; trigger: QuarantineTrigger };

/** One link of the session's hash chain. `hash` = sha256 of the canonical event without `hash`. */
export type SessionEvent = EventBody & { seq: number; at: string; prev: Sha256Hash; hash: Sha256Hash };

export const GENESIS_HASH: Sha256Hash = `sha256:${"0".repeat(64)}` as Sha256Hash;

/** Where a retained tail of a chain starts: the seq of its first event and the hash it links to. */
export interface ChainAnchor {
  seq: number;
  prev: Sha256Hash;
}

export const GENESIS_ANCHOR: ChainAnchor = Object.freeze({ seq: 0, prev: GENESIS_HASH });

export class EventChain {
  readonly #retain: number;
  /** Retained events; the live ones start at #start (compacted in batches, so shifts are amortized). */
  #events: SessionEvent[] = [];
  #start = 0;
  #next = 0;
  #head: Sha256Hash = GENESIS_HASH;

  constructor(retain: number) {
    this.#retain = retain;
  }

  /** Sequence number the next event gets (= events ever appended). */
  get length(): number {
    return this.#next;
  }

  /** Events in the retained tail. */
  get retained(): number {
    return this.#events.length - this.#start;
  }

  /** Events held in memory: the tail plus a rolled prefix not yet dropped (at most 2 × retain). */
  get held(): number {
    return this.#events.length;
  }

  get head(): Sha256Hash {
    return this.#head;
  }

  /** Where the retained tail starts. */
  anchor(): ChainAnchor {
    const first = this.#events[this.#start];
    return first === undefined ? { seq: this.#next, prev: this.#head } : { seq: first.seq, prev: first.prev };
  }

  append(body: EventBody, at: number): SessionEvent {
    // `body` is always a fresh literal of the caller's own: it becomes the event in place
    // instead of being copied twice (once without the hash, once with it).
    const unsigned = Object.assign(body, { seq: this.#next, at: iso(at), prev: this.#head });
    const event = Object.assign(unsigned, { hash: sha256Of(unsigned) }) as SessionEvent;
    this.#events.push(event);
    this.#next++;
    this.#head = event.hash;
    if (this.retained > this.#retain) {
      this.#start++;
      // Drop the rolled prefix once it is as large as the retained part: O(1) amortized.
      if (this.#start >= this.#retain) {
        this.#events = this.#events.slice(this.#start);
        this.#start = 0;
      }
    }
    return event;
  }

  /** Retained events with seq >= `from`, oldest first (the live objects; callers copy). */
  since(from: number): SessionEvent[] {
    const first = this.#events[this.#start]?.seq ?? this.#next;
    return this.#events.slice(this.#start + Math.max(0, from - first));
  }
}

export type ChainVerification =
  | { ok: true; head: Sha256Hash; length: number }
  | { ok: false; code: "seq_gap" | "prev_mismatch" | "hash_mismatch"; seq: number; message: string };

/**
 * Recomputes a session chain (e.g. from the journal): every event hashes its predecessor.
 * A retained tail is checked against its anchor (from `Session.chainAnchor()` or the journal).
 */
export function verifyContextChain(
  events: readonly SessionEvent[],
  anchor: ChainAnchor = GENESIS_ANCHOR,
): ChainVerification {
  let prev = anchor.prev;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const seq = anchor.seq + i;
    if (e.seq !== seq)
      return { ok: false, code: "seq_gap", seq, message: `expected seq ${seq}, found ${e.seq}` };
    if (e.prev !== prev)
      return { ok: false, code: "prev_mismatch", seq, message: `event ${seq} does not link to ${seq - 1}` };
    const { hash, ...unsigned } = e;
    let actual: string;
    try {
      actual = sha256Of(unsigned);
    } catch {
      return { ok: false, code: "hash_mismatch", seq, message: `event ${seq} is not canonical JSON` };
    }
    if (actual !== hash)
      return { ok: false, code: "hash_mismatch", seq, message: `event ${seq} was altered` };
    prev = hash;
  }
  return { ok: true, head: prev, length: anchor.seq + events.length };
}
