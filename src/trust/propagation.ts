// Trust assertions (APAE §Trust Assertions as ECT, §Trust Propagation): a peer A shares its
// score for B in a signed `apae:trust_assertion` ECT; the receiving truster C sets
// c_score_for_b = max(c_score_for_b, a_score × trust_of_a × attenuation), unless C has
// observed B directly (direct observations take precedence), and never for an assertion
// that has already travelled the configured maximum of hops. The ECT must already have
// been verified (verifyEct) and must be signed: unsigned assertions are refused at any level.
import { z } from "zod";
import type { TrustConfig } from "./config.js";
import type { EctClaims } from "./ect.js";
import type { TrustChange, TrustEngine } from "./engine.js";
import { decayedScore, round12, type Transition, type TrustRow } from "./table.js";

export const TRUST_ASSERTION = "apae:trust_assertion";

const AssertionExt = z.looseObject({
  "apae.subject": z.string().min(1).max(1024),
  "apae.trust_score": z.number().min(0).max(1),
  "apae.interactions": z.number().int().min(0),
  "apae.confidence": z.enum(["low", "medium", "high"]),
  "apae.hops": z.number().int().min(0).max(64),
});

export type AssertionOutcome =
  | { ok: true; change: TrustChange }
  | { ok: false; code: "ERR_TRUST_ASSERTION_INVALID" | "ERR_TRUST_ASSERTION_HOPS"; message: string };

export interface ReceivedAssertion {
  claims: EctClaims;
  /** From verifyEct: only signed (L2/L3) assertions are taken. */
  signed: boolean;
}

/** The pure transition: one assertion onto the receiving truster's row for the subject. */
export function applyAssertion(
  row: TrustRow,
  a: { score: number; trustOfAsserter: number; hops: number; ect: string },
  now: number,
  cfg: TrustConfig,
): Transition {
  const before = decayedScore(row, now, cfg);
  const base = { kind: "trust_assertion" as const, time: now, ect: a.ect, before };
  if (row.interactions > 0) {
    return {
      row,
      steps: [{ ...base, after: row.score, note: "direct observations take precedence" }],
      emitted: [],
    };
  }
  const candidate = round12(a.score * a.trustOfAsserter * cfg.attenuation);
  if (candidate <= before)
    return { row, steps: [{ ...base, after: before, note: "own score is higher" }], emitted: [] };
  const next: TrustRow = { ...row, score: candidate, anchor: now, propagatedHops: a.hops + 1 };
  return { row: next, steps: [{ ...base, after: candidate }], emitted: [] };
}

/** Applies a verified trust assertion to `truster`'s table (default: the deployment's). */
export async function receiveAssertion(
  engine: TrustEngine,
  received: ReceivedAssertion,
  truster: string = engine.config.self_id,
  at: number = engine.now(),
): Promise<AssertionOutcome> {
  const { claims } = received;
  if (!received.signed) {
    return {
      ok: false,
      code: "ERR_TRUST_ASSERTION_INVALID",
      message: "trust assertions must be signed (L2/L3)",
    };
  }
  const ext = AssertionExt.safeParse(claims.ext);
  if (claims.exec_act !== TRUST_ASSERTION || !ext.success) {
    return {
      ok: false,
      code: "ERR_TRUST_ASSERTION_INVALID",
      message: "not an apae:trust_assertion with its claims",
    };
  }
  const subject = ext.data["apae.subject"];
  if (subject === claims.iss || subject === truster || claims.iss === truster) {
    return {
      ok: false,
      code: "ERR_TRUST_ASSERTION_INVALID",
      message: "an assertion about oneself or the receiver is not taken",
    };
  }
  const hops = ext.data["apae.hops"];
  if (hops + 1 > engine.config.max_hops) {
    return {
      ok: false,
      code: "ERR_TRUST_ASSERTION_HOPS",
      message: `assertion has travelled ${hops} hops; the maximum is ${engine.config.max_hops}`,
    };
  }
  const asserter = await engine.view(claims.iss, truster, at);
  const input = {
    score: ext.data["apae.trust_score"],
    trustOfAsserter: asserter.score,
    hops,
    ect: claims.jti,
  };
  const change = await engine.transition(truster, subject, at, (row, now) =>
    applyAssertion(row, input, now, engine.config),
  );
  return { ok: true, change };
}

/** The ext of an assertion about `subject` from a view of it (for emitting one). */
export function assertionExt(view: {
  subject: string;
  score: number;
  interactions: number;
  confidence: string;
  propagatedHops: number | null;
}) {
  return {
    "apae.subject": view.subject,
    "apae.trust_score": view.score,
    "apae.interactions": view.interactions,
    "apae.confidence": view.confidence,
    "apae.hops": view.propagatedHops ?? 0,
  };
}
