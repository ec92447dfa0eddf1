// Lifting a principal quarantine (issue 37): a quarantine a behavioural rule, the denial
// threshold, the output screening or an operator set on a principal ends only on an
// approver's signed record of scope `warden:principal_quarantine_lift` — the same rules as
// APAE's early trust lift (src/runtime apae-lift.ts): canonical JSON signed with one of the
// approver's Ed25519 keys (configured, or registered from the console's browser), presented
// by that approver's own operator credential, naming the principal and the quarantine it
// lifts by id (a hash of its trigger), so a record cannot be replayed against a later
// quarantine or another principal. The lift is journaled (`warden.principal.quarantine_lifted`,
// with the signed record) before it takes effect; in distributed mode the record is saved
// with the cleared shared state and every other replica verifies it itself before dropping
// its cached quarantine (`adoptPrincipalLift`). A trust quarantine is lifted by the trust lift.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import type { PrincipalStateStore, Principals, QuarantineTrigger } from "../context/index.js";
import { type Sha256Hash, sha256Of } from "../contracts/index.js";
import { keyIdOf, keyTypeOf, signCanonical, verifyCanonical } from "../crypto/index.js";
import type { ApproverKeyring, Journal } from "../journal/index.js";
import { type LiftCode, parseIsoTime } from "../trust/index.js";

export const PRINCIPAL_LIFT_SCOPE = "warden:principal_quarantine_lift";
export const PRINCIPAL_LIFT_EVENT = "warden.principal.quarantine_lifted";
/** A presented record older than this is refused (re-sign it). */
export const PRINCIPAL_LIFT_MAX_AGE_MS = 24 * 3600_000;

const Id = z.string().min(1).max(1024);
const Hash = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const PrincipalLiftSchema = z.strictObject({
  scope: z.string().min(1).max(128),
  principal: Id,
  /** The quarantine lifted: `quarantineIdOf` its trigger (listed by GET /v1/quarantines). */
  quarantine_id: Hash,
  /** The approver who signs and presents the record. */
  approver_id: z.string().min(1).max(128),
  approver_key_id: z.string().min(1).max(256),
  issued_at: z.string().min(1).max(64),
  reason: z.string().min(10).max(1024),
});
export type PrincipalLift = z.infer<typeof PrincipalLiftSchema>;

export const SignedPrincipalLiftSchema = z.strictObject({
  lift: PrincipalLiftSchema,
  signature: z.string().min(1).max(512),
});
export type SignedPrincipalLift = z.infer<typeof SignedPrincipalLiftSchema>;

/** The `warden.principal.quarantine_lifted` body: the signed record and what it lifted. */
export const PrincipalLiftBodySchema = z.strictObject({
  principal_id: Id,
  quarantine_id: Hash,
  /** The lifted quarantine's trigger type and the run that entered it. */
  trigger: z.string().max(64),
  run_id: z.string().max(1024),
  approver: z.string().min(1).max(128),
  approver_key_id: z.string().min(1).max(256),
  issued_at: z.string().min(1).max(64),
  reason: z.string().min(1).max(1024),
  signature: z.string().min(1).max(512),
  /** presented: to this replica; shared_state: another replica's lift, verified and adopted here. */
  via: z.enum(["presented", "shared_state"]),
});
export type PrincipalLiftBody = z.infer<typeof PrincipalLiftBodySchema>;

/** The id of a principal's quarantine: the hash of who, which run, what and when. */
export function quarantineIdOf(principalId: string, q: QuarantineTrigger & { runId: string }): Sha256Hash {
  return sha256Of({ principal: principalId, run_id: q.runId, type: q.type, at: q.at, reason: q.reason });
}

/** Signs a lift record with an approver's Ed25519 key (the approver's tool; tests). */
export function signPrincipalLift(
  lift: Omit<PrincipalLift, "approver_key_id" | "scope">,
  approver: { privateKey: KeyObject; publicKey: KeyObject },
): SignedPrincipalLift {
  const full: PrincipalLift = {
    scope: PRINCIPAL_LIFT_SCOPE,
    ...lift,
    approver_key_id: keyIdOf(approver.publicKey),
  };
  return { lift: full, signature: signCanonical(approver.privateKey, full) };
}

export type PrincipalLiftOutcome =
  | { ok: true; principalId: string; quarantineId: string; trigger: string; approver: string; seq: number }
  | { ok: false; code: LiftCode; message: string };

type Refusal = Extract<PrincipalLiftOutcome, { ok: false }>;
const refuse = (code: LiftCode, message: string): Refusal => ({ ok: false, code, message });

/** Shape, scope, presenter, time, the approver's key and the signature; a refusal changes nothing. */
export function checkPrincipalLift(
  input: unknown,
  ring: ApproverKeyring | undefined,
  o: { by?: string; now?: number },
): SignedPrincipalLift | Refusal {
  const parsed = SignedPrincipalLiftSchema.safeParse(input);
  if (!parsed.success) {
    const bare = (input ?? {}) as { lift?: unknown; signature?: unknown };
    if (PrincipalLiftSchema.safeParse(bare.lift).success && (bare.signature ?? "") === "")
      return refuse("ERR_TRUST_LIFT_UNSIGNED", "the lift record carries no approver signature");
    return refuse("ERR_TRUST_LIFT_INVALID", "not a signed principal quarantine lift record");
  }
  const { lift, signature } = parsed.data;
  if (lift.scope !== PRINCIPAL_LIFT_SCOPE)
    return refuse("ERR_TRUST_LIFT_SCOPE", `a principal quarantine lift needs scope ${PRINCIPAL_LIFT_SCOPE}`);
  if (o.by !== undefined && lift.approver_id !== o.by)
    return refuse("ERR_TRUST_LIFT_APPROVER_UNKNOWN", "a lift is presented by the approver who signed it");
  if (o.now !== undefined) {
    const issued = parseIsoTime(lift.issued_at);
    if (issued === undefined || issued > o.now + 60_000 || issued < o.now - PRINCIPAL_LIFT_MAX_AGE_MS)
      return refuse("ERR_TRUST_LIFT_INVALID", "issued_at is not a recent past RFC 3339 time");
  }
  const key = ring?.key(lift.approver_id, lift.approver_key_id);
  if (key === undefined || keyTypeOf(key) !== "ed25519" || keyIdOf(key) !== lift.approver_key_id)
    return refuse("ERR_TRUST_LIFT_APPROVER_UNKNOWN", "the lift is not signed by one of the approver's keys");
  if (!verifyCanonical(key, lift, signature))
    return refuse("ERR_TRUST_LIFT_SIGNATURE_INVALID", "the lift's signature does not verify");
  return parsed.data;
}

export interface PrincipalLiftDeps {
  principals: Principals;
  /** Configured and browser-registered approver keys (shared by every replica in distributed mode). */
  ring: ApproverKeyring | undefined;
  journal: Pick<Journal, "append">;
  /** The principal state store (shared in distributed mode), read back by `adoptPrincipalLift`. */
  store?: PrincipalStateStore;
  clock: () => number;
}

/** What a lift saves in the shared principal state for the other replicas to verify. */
const Evidence = z.strictObject({ kind: z.literal("principal_lift"), signed: SignedPrincipalLiftSchema });

function body(
  signed: SignedPrincipalLift,
  q: QuarantineTrigger & { runId: string },
  via: PrincipalLiftBody["via"],
): PrincipalLiftBody {
  const l = signed.lift;
  return {
    principal_id: l.principal,
    quarantine_id: l.quarantine_id,
    trigger: q.type,
    run_id: q.runId,
    approver: l.approver_id,
    approver_key_id: l.approver_key_id,
    issued_at: l.issued_at,
    reason: l.reason,
    signature: signed.signature,
    via,
  };
}

/** Verifies and applies an approver's signed lift presented by `by`; every refusal is coded. */
export async function liftPrincipal(
  d: PrincipalLiftDeps,
  record: unknown,
  by: string,
): Promise<PrincipalLiftOutcome> {
  const checked = checkPrincipalLift(record, d.ring, { by, now: d.clock() });
  if ("ok" in checked) return checked;
  const principal = checked.lift.principal;
  await d.principals.load(principal);
  const q = d.principals.quarantineOf(principal);
  if (q === undefined) return refuse("ERR_TRUST_NOT_QUARANTINED", `${principal} is not quarantined`);
  if (q.type === "trust_score")
    return refuse("ERR_TRUST_LIFT_SCOPE", "a trust quarantine is lifted with apae:quarantine_lift");
  if (quarantineIdOf(principal, q) !== checked.lift.quarantine_id)
    return refuse("ERR_TRUST_LIFT_STALE", "the lift names another quarantine of this principal");
  // Journaled (durable) first; then the shared state is cleared, with the record as evidence.
  const entry = await d.journal.append({
    type: PRINCIPAL_LIFT_EVENT,
    body: { ...body(checked, q, "presented") },
  });
  await d.principals.lift(principal, { kind: "principal_lift", signed: checked });
  return {
    ok: true,
    principalId: principal,
    quarantineId: checked.lift.quarantine_id,
    trigger: q.type,
    approver: checked.lift.approver_id,
    seq: entry.seq,
  };
}

export type PrincipalAdopted = { lifted: true; seq: number } | { lifted: false; why: string };

/**
 * Distributed mode: another replica lifted `principalId` and saved the signed record in the
 * shared principal state. This replica checks the record itself (the approver's key — the
 * shared browser keys included —, the signature, the principal, the quarantine it holds) and
 * only then drops its cached quarantine, journaled. Nothing is lifted on a read alone.
 */
export async function adoptPrincipalLift(
  d: PrincipalLiftDeps,
  principalId: string,
): Promise<PrincipalAdopted> {
  const held = d.principals.quarantineOf(principalId);
  if (held === undefined || held.type === "trust_score")
    return { lifted: false, why: "no principal quarantine here" };
  if (d.store === undefined) return { lifted: false, why: "no principal state store" };
  const rec = await d.store.load(principalId);
  if (rec === undefined || rec.quarantine !== undefined || rec.lift === undefined)
    return { lifted: false, why: "the shared state holds no lift" };
  const ev = Evidence.safeParse(rec.lift);
  if (!ev.success) return { lifted: false, why: "the shared lift is not a principal lift" };
  const checked = checkPrincipalLift(ev.data.signed, d.ring, {});
  if ("ok" in checked) return { lifted: false, why: checked.code };
  if (
    checked.lift.principal !== principalId ||
    checked.lift.quarantine_id !== quarantineIdOf(principalId, held)
  )
    return { lifted: false, why: "the shared lift names another quarantine" };
  const entry = await d.journal.append({
    type: PRINCIPAL_LIFT_EVENT,
    body: { ...body(checked, held, "shared_state") },
  });
  d.principals.forget(principalId);
  return { lifted: true, seq: entry.seq };
}
