// The behaviour verifier (APAE §Verification Against ECT Stream): checks an agent's ECT
// stream against its behaviour spec and says passing / failing with each violation naming
// the offending ECT. Rules: every exec_act is in allowed_actions (checkpoints `atd:checkpoint`
// are always allowed: they are what require_checkpoint_before asks for); at most
// max_actions_per_minute in any 60 s window of iat; no target in ext (`apae.target` /
// `target`, a string or list) matches a forbidden_targets glob; every action named in
// require_checkpoint_before has a checkpoint before it (in its `par`, or issued at most
// checkpoint_max_age_seconds earlier). The result becomes an `apae:compliance_check` ECT,
// and each violation a policy_violation trust event against the agent.

import { type BehaviorSpec, CHECKPOINT_ACT, globMatch } from "./behavior-spec.js";
import type { EctClaims, EctInput } from "./ect.js";
import type { TrustChange, TrustEngine } from "./engine.js";

export const COMPLIANCE_ACT = "apae:compliance_check";

export type ComplianceRule =
  | "allowed_actions"
  | "max_actions_per_minute"
  | "forbidden_targets"
  | "require_checkpoint_before";

export interface Violation {
  rule: ComplianceRule;
  action: string;
  /** The jti of the offending ECT. */
  ect: string;
  description: string;
}

export interface ComplianceResult {
  status: "passing" | "failing";
  violations: Violation[];
  /** The jti of the last ECT checked (the passing check's `par`), or null for an empty stream. */
  latest: string | null;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

function targetsOf(c: EctClaims): string[] {
  const out: string[] = [];
  for (const key of ["apae.target", "target"]) {
    const v = c.ext?.[key];
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === "string") out.push(x);
  }
  return out;
}

function checkOne(spec: BehaviorSpec, c: EctClaims, seen: readonly EctClaims[]): Violation[] {
  const out: Violation[] = [];
  const k = spec.constraints;
  const act = c.exec_act;
  if (act !== CHECKPOINT_ACT && !spec.allowed_actions.includes(act)) {
    out.push({
      rule: "allowed_actions",
      action: act,
      ect: c.jti,
      description: `${act} is not an allowed action`,
    });
  }
  const max = k.max_actions_per_minute;
  // Counted from the newest back, and only as far as the limit needs; a history shorter
  // than the limit cannot exceed it.
  if (max !== undefined && seen.length >= max) {
    let inWindow = 1;
    for (let j = seen.length - 1; j >= 0 && inWindow <= max; j--) {
      const p = seen[j] as EctClaims;
      if (p.iat > c.iat - 60 && p.iat <= c.iat) inWindow++;
    }
    if (inWindow > max) {
      out.push({
        rule: "max_actions_per_minute",
        action: act,
        ect: c.jti,
        description: `${inWindow} actions in the minute up to ${iso(c.iat)} (max ${max})`,
      });
    }
  }
  for (const t of targetsOf(c)) {
    const glob = (k.forbidden_targets ?? []).find((g) => globMatch(g, t));
    if (glob !== undefined) {
      out.push({
        rule: "forbidden_targets",
        action: act,
        ect: c.jti,
        description: `target ${t} matches ${glob}`,
      });
    }
  }
  if (k.require_checkpoint_before?.includes(act)) {
    const age = k.checkpoint_max_age_seconds ?? 10;
    const ok = seen.some(
      (p) =>
        p.exec_act === CHECKPOINT_ACT && (c.par.includes(p.jti) || (p.iat <= c.iat && p.iat >= c.iat - age)),
    );
    if (!ok) {
      out.push({
        rule: "require_checkpoint_before",
        action: act,
        ect: c.jti,
        description: `${act} at ${iso(c.iat)} has no preceding ${CHECKPOINT_ACT} within ${age}s`,
      });
    }
  }
  return out;
}

/** Checks a stream (in issue order) against a spec; `before` is earlier history (rate, checkpoints). */
export function verifyBehavior(
  spec: BehaviorSpec,
  stream: readonly EctClaims[],
  before: readonly EctClaims[] = [],
): ComplianceResult {
  // One ECT (the continuous verifier's case) is checked against `before` as it is: no copy.
  const seen: EctClaims[] | readonly EctClaims[] = stream.length <= 1 ? before : [...before];
  const violations: Violation[] = [];
  for (const c of stream) {
    if (c.iss !== spec.agent_id) continue;
    violations.push(...checkOne(spec, c, seen));
    if (seen !== before) (seen as EctClaims[]).push(c);
  }
  const latest = stream.length === 0 ? null : (stream[stream.length - 1]?.jti ?? null);
  return { status: violations.length === 0 ? "passing" : "failing", violations, latest };
}

/** The `apae:compliance_check` ECT of a result: `par` names the offending ECTs, or the latest checked. */
export function complianceInput(
  result: ComplianceResult,
  spec: BehaviorSpec,
  window: string,
  aud: string | string[],
): EctInput {
  const par =
    result.status === "failing"
      ? [...new Set(result.violations.map((v) => v.ect))]
      : result.latest === null
        ? []
        : [result.latest];
  return {
    exec_act: COMPLIANCE_ACT,
    aud,
    par,
    ext: {
      "apae.compliance_status": result.status,
      "apae.violations": result.violations.map((v) => ({ ...v })),
      "apae.spec_version": spec.spec_version,
      "apae.window": window,
    },
  };
}

/** Each violation as a policy_violation trust event against the agent, citing the offending ECT. */
export async function applyViolations(
  engine: TrustEngine,
  spec: BehaviorSpec,
  result: ComplianceResult,
  truster?: string,
): Promise<TrustChange[]> {
  const changes: TrustChange[] = [];
  for (const v of result.violations) {
    const input = { subject: spec.agent_id, event: "policy_violation" as const, ect: v.ect };
    changes.push(await engine.apply(truster === undefined ? input : { ...input, truster }));
  }
  return changes;
}
