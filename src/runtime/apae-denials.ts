// Which denials are trust events (docs/trust.md, In the runtime): a deny decided by a policy
// rule (YAML or Cedar) is a policy_violation; the Gate's own refusals (budget, admission,
// source "builtin") are not, until the run reaches its denial threshold — from then on every
// denial in that run is (the Gate's per-run threshold, made a client of APAE). Never charged:
// a refusal of a quarantined agent (the quarantine holding) and a trust-threshold denial (the
// trust check itself); charging either would spiral a low-trust agent down.
import { TRUST_THRESHOLD_REASON } from "../policy/index.js";

/** The parts of a `warden.gate.decision` body the charge reads. */
export interface DeniedBody {
  decision: string;
  reason_codes: readonly string[];
  matched_rules: readonly { decision: string; source: string }[];
}

const MAX_RUNS = 65_536;

export class DenialCharges {
  readonly #threshold: number;
  /** Counted denials per run (bounded: the oldest run is forgotten). */
  readonly #perRun = new Map<string, number>();

  constructor(threshold = 5) {
    this.#threshold = threshold;
  }

  /** Whether this decision is a denial the agent is charged for. */
  charged(runId: string, b: DeniedBody | undefined): boolean {
    if (b === undefined || b.decision !== "deny") return false;
    if (b.reason_codes.includes("quarantined") || b.reason_codes.every((c) => c === TRUST_THRESHOLD_REASON))
      return false;
    const n = (this.#perRun.get(runId) ?? 0) + 1;
    this.#perRun.delete(runId);
    this.#perRun.set(runId, n);
    if (this.#perRun.size > MAX_RUNS) this.#perRun.delete(this.#perRun.keys().next().value as string);
    const byRule = b.matched_rules.some((r) => r.decision === "deny" && r.source !== "builtin");
    return byRule || n >= this.#threshold;
  }
}
