// Runs behaviour verification for agents with signed specs: continuously (each ECT checked
// as it is observed) or periodically (`check(now)` over the ECTs since the last check), per
// the spec's verification_frequency. Each check emits an `apae:compliance_check` ECT (a
// continuous verifier emits one only when an ECT fails: a passing stream is not a stream of
// paperwork), and violations become policy_violation trust events. Installing or changing a
// spec is recorded as an `apae:behavior_spec` ECT chained to the previous one.
import type { KeyObject } from "node:crypto";
import { TrustError } from "../contracts/index.js";
import { applyViolations, type ComplianceResult, complianceInput, verifyBehavior } from "./behavior.js";
import { type BehaviorSpec, CHECKPOINT_ACT, specChangeInput, verifyBehaviorSpec } from "./behavior-spec.js";
import type { EctClaims, EctEmitter } from "./ect.js";
import type { TrustChange, TrustEngine } from "./engine.js";

/** History the rate rule needs (seconds); the checkpoint rule may need more (its max age). */
const RATE_WINDOW_SECONDS = 60;
/** Checkpoints a later action may still name in `par`: the newest few within the hour. */
const CHECKPOINTS_KEPT = 16;
const CHECKPOINT_SECONDS = 3600;

interface Agent {
  spec: BehaviorSpec;
  specEct: string;
  history: EctClaims[];
  pending: EctClaims[];
  lastCheck: number;
}

export interface CheckReport {
  agent: string;
  result: ComplianceResult;
  /** The compliance ECT emitted (null when a continuous check passed). */
  ect: { token: string; claims: EctClaims } | null;
  changes: TrustChange[];
}

export interface BehaviorVerifierOptions {
  engine: TrustEngine;
  emitter: Pick<EctEmitter, "emit">;
  /** Operator keys that may sign specs (key id → Ed25519 public key). */
  specKeys: ReadonlyMap<string, KeyObject>;
  /** `aud` of the compliance and spec ECTs (the deployment's audit audience). */
  audience: string;
}

export class BehaviorVerifier {
  readonly #o: BehaviorVerifierOptions;
  readonly #agents = new Map<string, Agent>();

  constructor(o: BehaviorVerifierOptions) {
    this.#o = o;
  }

  /** Installs or replaces an agent's spec (signed); emits the spec-change ECT. Throws a coded error. */
  async install(signed: unknown): Promise<{ token: string; claims: EctClaims }> {
    const v = verifyBehaviorSpec(signed, this.#o.specKeys);
    if (!v.ok) throw new TrustError(v.code, v.message);
    const prior = this.#agents.get(v.spec.agent_id);
    const ect = await this.#o.emitter.emit(specChangeInput(v.spec, v.hash, this.#o.audience, prior?.specEct));
    this.#agents.set(v.spec.agent_id, {
      spec: v.spec,
      specEct: ect.claims.jti,
      history: prior?.history ?? [],
      pending: [],
      lastCheck: Math.floor(this.#o.engine.now() / 1000),
    });
    return ect;
  }

  /** Every installed spec. */
  specs(): BehaviorSpec[] {
    return [...this.#agents.values()].map((a) => a.spec);
  }

  specOf(agent: string): BehaviorSpec | undefined {
    return this.#agents.get(agent)?.spec;
  }

  /** One ECT from an agent's stream (already verified). Continuous specs are checked now. */
  async observe(c: EctClaims): Promise<CheckReport | null> {
    const a = this.#agents.get(c.iss);
    if (a === undefined) return null;
    if (a.spec.verification_frequency === "periodic") {
      a.pending.push(c);
      return null;
    }
    const result = verifyBehavior(a.spec, [c], a.history);
    this.#remember(a, [c]);
    if (result.status === "passing") return { agent: c.iss, result, ect: null, changes: [] };
    return this.#report(a, result, `${new Date(c.iat * 1000).toISOString()}/PT0S`);
  }

  /** Checks every periodic agent's ECTs since its last check. */
  async check(now: number = this.#o.engine.now()): Promise<CheckReport[]> {
    const out: CheckReport[] = [];
    const nowS = Math.floor(now / 1000);
    for (const a of this.#agents.values()) {
      if (a.spec.verification_frequency !== "periodic") continue;
      const batch = a.pending.splice(0);
      const result = verifyBehavior(a.spec, batch, a.history);
      this.#remember(a, batch);
      const window = `${new Date(a.lastCheck * 1000).toISOString()}/PT${Math.max(0, nowS - a.lastCheck)}S`;
      a.lastCheck = nowS;
      out.push(await this.#report(a, result, window));
    }
    return out;
  }

  /**
   * Keeps only what the rules can still look at: a minute (or the checkpoint rule's max
   * age), plus the newest checkpoints of the hour (a later action may name one in `par`).
   */
  #remember(a: Agent, batch: readonly EctClaims[]): void {
    for (const c of batch) a.history.push(c);
    const horizon = Math.max(RATE_WINDOW_SECONDS, a.spec.constraints.checkpoint_max_age_seconds ?? 10);
    const newest = a.history[a.history.length - 1]?.iat ?? 0;
    let old = 0;
    while (old < a.history.length && (a.history[old] as EctClaims).iat <= newest - horizon) old++;
    if (old === 0) return;
    const checkpoints = a.history
      .slice(0, old)
      .filter((h) => h.exec_act === CHECKPOINT_ACT && h.iat > newest - CHECKPOINT_SECONDS)
      .slice(-CHECKPOINTS_KEPT);
    a.history.splice(0, old, ...checkpoints);
  }

  async #report(a: Agent, result: ComplianceResult, window: string): Promise<CheckReport> {
    const ect = await this.#o.emitter.emit(complianceInput(result, a.spec, window, this.#o.audience));
    const changes = await applyViolations(this.#o.engine, a.spec, result);
    return { agent: a.spec.agent_id, result, ect, changes };
  }
}
