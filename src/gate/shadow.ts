// Shadow policies (docs/policy.md#shadow-policies): a second bundle deployed beside the
// enforcing one that decides nothing. Every decision the enforcing bundle makes is offered
// here with the exact PolicyInput it saw; the shadow bundle evaluates it off the decision
// path (a bounded queue drained on a later turn of the event loop), and every disagreement
// is journaled as `warden.policy.shadow_diff` with both verdicts, the rule ids and both
// bundle hashes. A full queue sheds the newest offers and says so in the journal
// (`warden.policy.shadow_dropped`); a shadow bundle that throws is recorded as the deny the
// Gate would have made of it. Nothing here can change, delay or fail an enforcing decision.
import {
  POLICY_SHADOW_DIFF,
  POLICY_SHADOW_DROPPED,
  type Sha256Hash,
  type ShadowVerdict,
} from "../contracts/index.js";
import type { PolicyInput, PolicyOutcome } from "../policy/index.js";
import type { GateJournal, GatePolicy } from "./options.js";

export const SHADOW_QUEUE_DEFAULT = 4096;
const BATCH = 256;
const MAX_IDS = 64;

export interface ShadowOptions {
  /** Offers kept waiting for evaluation; beyond it they are dropped and counted (default 4096). */
  maxQueue?: number;
}

export interface ShadowStats {
  evaluated: number;
  disagreed: number;
  dropped: number;
  /** Diff entries the journal refused (the shadow report is then incomplete; counted, never retried). */
  journalFailed: number;
  queued: number;
}

interface Offer {
  decisionId: string;
  traceId: string;
  input: PolicyInput;
  enforced: PolicyOutcome;
}

/** The shadow bundle and its queue; one per Gate. */
export class ShadowPolicy {
  readonly policy: GatePolicy;
  readonly #journal: GateJournal;
  readonly #max: number;
  #queue: Offer[] = [];
  #droppedUnreported = 0;
  #draining: Promise<void> | undefined;
  readonly #stats: ShadowStats = { evaluated: 0, disagreed: 0, dropped: 0, journalFailed: 0, queued: 0 };

  constructor(policy: GatePolicy, journal: GateJournal, options: ShadowOptions = {}) {
    this.policy = policy;
    this.#journal = journal;
    this.#max = Math.max(1, options.maxQueue ?? SHADOW_QUEUE_DEFAULT);
  }

  get policyBundleHash(): Sha256Hash {
    return this.policy.policyBundleHash;
  }

  stats(): ShadowStats {
    return { ...this.#stats, queued: this.#queue.length };
  }

  /** O(1) on the decision path: queue the enforcing verdict and its input for later. */
  offer(at: { decisionId: string; traceId: string }, input: PolicyInput, enforced: PolicyOutcome): void {
    if (this.#queue.length >= this.#max) {
      this.#stats.dropped++;
      this.#droppedUnreported++;
    } else this.#queue.push({ decisionId: at.decisionId, traceId: at.traceId, input, enforced });
    this.#draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  /** Resolves once every offer made so far is evaluated and its diff journaled (tests, close). */
  async settle(): Promise<void> {
    while (this.#draining !== undefined) await this.#draining;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0 || this.#droppedUnreported > 0) {
        const batch = this.#queue.splice(0, BATCH);
        const writes: Promise<unknown>[] = [];
        for (const o of batch) {
          const w = this.#judge(o);
          if (w !== undefined) writes.push(w);
        }
        if (this.#droppedUnreported > 0) writes.push(this.#reportDropped());
        await Promise.all(writes);
        // Yield between batches so a flood of offers never starves the decision path.
        if (this.#queue.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#draining = undefined;
    }
  }

  #judge(o: Offer): Promise<unknown> | undefined {
    let shadow: PolicyOutcome;
    try {
      shadow = this.policy.evaluate(o.input);
    } catch {
      shadow = errorOutcome(this.policy.policyBundleHash);
    }
    this.#stats.evaluated++;
    if (shadow.decision === o.enforced.decision) return undefined;
    this.#stats.disagreed++;
    const r = o.input.request;
    return this.#journal
      .appendBuilt({
        type: POLICY_SHADOW_DIFF,
        run_id: r.runId,
        trace_id: o.traceId,
        body: {
          decision_id: o.decisionId,
          principal_id: r.principalId,
          tool_class: r.toolClass,
          action: r.action,
          ...(r.tool !== undefined ? { tool: r.tool } : {}),
          enforced: verdictOf(o.enforced),
          shadow: verdictOf(shadow),
        },
      })
      .catch(() => {
        this.#stats.journalFailed++;
      });
  }

  #reportDropped(): Promise<unknown> {
    const dropped = this.#droppedUnreported;
    this.#droppedUnreported = 0;
    return this.#journal
      .appendBuilt({
        type: POLICY_SHADOW_DROPPED,
        body: { dropped, policy_bundle_hash: this.policy.policyBundleHash },
      })
      .catch(() => {
        this.#stats.journalFailed++;
      });
  }
}

/** One bundle's verdict as a diff entry records it (bounded). */
export function verdictOf(o: PolicyOutcome): ShadowVerdict {
  return {
    decision: o.decision,
    reason_codes: o.reasonCodes.slice(0, MAX_IDS).map(clip),
    rule_ids: o.matchedRules.slice(0, MAX_IDS).map((m) => clip(m.id)),
    policy_bundle_hash: o.policyBundleHash,
  };
}

const clip = (s: string): string => (s.length === 0 ? "-" : s.slice(0, 4096));

function errorOutcome(policyBundleHash: Sha256Hash): PolicyOutcome {
  return {
    decision: "deny",
    reasonCodes: ["policy_error"],
    matchedRules: [{ id: "gate", source: "builtin", decision: "deny", reason: "policy_error" }],
    obligations: [],
    policyBundleHash,
  };
}
