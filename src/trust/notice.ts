// Receiving a peer's quarantine broadcast (APAE §Quarantine Protocol: "Agents receiving the
// quarantine notification MUST update their trust table and MUST NOT delegate new tasks to
// the quarantined agent until the quarantine expires or is lifted"). The notice is the
// peer's signed `apae:quarantine` ECT; verified by the caller (verifyEct with the peer's
// key), it quarantines the subject in the receiver's table until the peer's
// `apae.quarantine_until`. The receiver's own quarantine count is not raised (the
// escalation is the issuer's), and expiry works as for any quarantine (recovery score,
// recovery ECT).
import { z } from "zod";
import type { EctClaims } from "./ect.js";
import type { TrustChange, TrustEngine } from "./engine.js";
import type { Transition, TrustRow } from "./table.js";

export const QUARANTINE_ACT = "apae:quarantine";

const NoticeExt = z.looseObject({
  "apae.subject": z.string().min(1).max(1024),
  "apae.to_state": z.literal("quarantined"),
  "apae.quarantine_until": z.iso.datetime({ offset: true }),
  "apae.reason": z.string().max(2048).optional(),
});

export type NoticeOutcome =
  | { ok: true; change: TrustChange }
  | { ok: false; code: "ERR_TRUST_ASSERTION_INVALID"; message: string };

/** The pure transition: `row` quarantined until `until` (never shortened by a notice). */
export function applyNotice(row: TrustRow, until: number, ect: string, now: number): Transition {
  // The score is kept as it stands: a notice changes the status, not the arithmetic.
  const base = { kind: "quarantine_notice" as const, time: now, ect, before: row.score, after: row.score };
  if (row.status === "quarantined" && (row.quarantineUntil ?? 0) >= until) {
    return { row, steps: [{ ...base, note: "already quarantined at least as long" }], emitted: [] };
  }
  const next: TrustRow = { ...row, status: "quarantined", quarantineUntil: until, anchor: now };
  return {
    row: next,
    steps: [{ ...base, note: `quarantined by a peer's notice until ${new Date(until).toISOString()}` }],
    emitted: [],
  };
}

/**
 * Applies a verified quarantine notice to `truster`'s table (default: the deployment's).
 * Refused: unsigned, not an `apae:quarantine` entering quarantine, already expired, or about
 * the issuer itself or the receiver.
 */
export async function receiveQuarantineNotice(
  engine: TrustEngine,
  received: { claims: EctClaims; signed: boolean },
  truster: string = engine.config.self_id,
  at: number = engine.now(),
): Promise<NoticeOutcome> {
  const { claims } = received;
  const bad = (message: string): NoticeOutcome => ({
    ok: false,
    code: "ERR_TRUST_ASSERTION_INVALID",
    message,
  });
  if (!received.signed) return bad("quarantine notices must be signed (L2/L3)");
  const ext = NoticeExt.safeParse(claims.ext);
  if (claims.exec_act !== QUARANTINE_ACT || !ext.success) {
    return bad("not an apae:quarantine entering quarantine, with its claims");
  }
  const subject = ext.data["apae.subject"];
  if (subject === claims.iss || subject === truster)
    return bad("a notice about its issuer or the receiver is not taken");
  const until = Date.parse(ext.data["apae.quarantine_until"]);
  if (until <= at) return bad("the notice's quarantine has already ended");
  const change = await engine.transition(truster, subject, at, (row, now) =>
    applyNotice(row, until, claims.jti, now),
  );
  return { ok: true, change };
}
