// Early quarantine lift (APAE §Quarantine Expiry and Recovery): an approver ends a
// quarantine before it expires with a signed HITL override of scope `apae:quarantine_lift`.
// The record is canonical JSON signed with the approver's Ed25519 key; it names the
// truster, the subject and the quarantine episode (its count), so a lift for one
// quarantine cannot be replayed against a later one. Only configured approver keys count.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { isoTime, TrustError } from "../contracts/index.js";
import { keyIdOf, keyTypeOf, signCanonical, verifyCanonical } from "../crypto/index.js";
import type { TrustChange, TrustEngine } from "./engine.js";
import { endQuarantine, settle } from "./table.js";
import { parseIsoTime } from "./time.js";

export const LIFT_SCOPE = "apae:quarantine_lift";

export const QuarantineLiftSchema = z.strictObject({
  scope: z.string().min(1).max(128),
  truster: z.string().min(1).max(1024),
  subject: z.string().min(1).max(1024),
  /** The quarantine episode lifted (the subject's quarantine_count when it was entered). */
  quarantine_count: z.number().int().min(1),
  approver_key_id: z.string().min(1).max(256),
  issued_at: z.string().min(1).max(64),
  reason: z.string().min(1).max(1024),
});
export type QuarantineLift = z.infer<typeof QuarantineLiftSchema>;

export const SignedLiftSchema = z.strictObject({
  lift: QuarantineLiftSchema,
  signature: z.string().min(1).max(512),
});
export type SignedLift = z.infer<typeof SignedLiftSchema>;

export type LiftCode =
  | "ERR_TRUST_LIFT_INVALID"
  | "ERR_TRUST_LIFT_UNSIGNED"
  | "ERR_TRUST_LIFT_SCOPE"
  | "ERR_TRUST_LIFT_APPROVER_UNKNOWN"
  | "ERR_TRUST_LIFT_SIGNATURE_INVALID"
  | "ERR_TRUST_LIFT_STALE"
  | "ERR_TRUST_NOT_QUARANTINED";

export type LiftOutcome = { ok: true; change: TrustChange } | { ok: false; code: LiftCode; message: string };

/** Signs a lift record with an approver's Ed25519 private key (the approver's tool; tests). */
export function signLift(
  lift: Omit<QuarantineLift, "approver_key_id">,
  approver: { privateKey: KeyObject; publicKey: KeyObject },
): SignedLift {
  const full: QuarantineLift = { ...lift, approver_key_id: keyIdOf(approver.publicKey) };
  return { lift: full, signature: signCanonical(approver.privateKey, full) };
}

const refuse = (code: LiftCode, message: string): LiftOutcome => ({ ok: false, code, message });

/** Checks the record and its signature against the configured approver keys (key id → Ed25519 public key). */
function checkSignedLift(
  input: unknown,
  approvers: ReadonlyMap<string, KeyObject>,
  now: number,
): LiftOutcome | SignedLift {
  const parsed = SignedLiftSchema.safeParse(input);
  const bare = input !== null && typeof input === "object" && !Array.isArray(input) ? input : {};
  const sig = (bare as { signature?: unknown }).signature;
  if (!parsed.success && QuarantineLiftSchema.safeParse((bare as { lift?: unknown }).lift).success) {
    if (sig === undefined || sig === null || sig === "")
      return refuse("ERR_TRUST_LIFT_UNSIGNED", "the lift record carries no approver signature");
  }
  if (!parsed.success) return refuse("ERR_TRUST_LIFT_INVALID", "not a signed quarantine lift record");
  const { lift, signature } = parsed.data;
  if (lift.scope !== LIFT_SCOPE) return refuse("ERR_TRUST_LIFT_SCOPE", `a lift needs scope ${LIFT_SCOPE}`);
  const issued = parseIsoTime(lift.issued_at);
  if (issued === undefined || issued > now + 60_000)
    return refuse("ERR_TRUST_LIFT_INVALID", "issued_at is not a past RFC 3339 time");
  const key = approvers.get(lift.approver_key_id);
  if (key === undefined || keyTypeOf(key) !== "ed25519" || keyIdOf(key) !== lift.approver_key_id) {
    return refuse("ERR_TRUST_LIFT_APPROVER_UNKNOWN", "the lift is not signed by a configured approver key");
  }
  if (!verifyCanonical(key, lift, signature))
    return refuse("ERR_TRUST_LIFT_SIGNATURE_INVALID", "the lift's signature does not verify");
  return parsed.data;
}

/** Lifts a quarantine early on a valid signed record; every refusal is coded. */
export async function liftQuarantine(
  engine: TrustEngine,
  input: unknown,
  approvers: ReadonlyMap<string, KeyObject>,
  at: number = engine.now(),
): Promise<LiftOutcome> {
  const checked = checkSignedLift(input, approvers, at);
  if ("ok" in checked) return checked;
  const { lift } = checked;
  let refusal: LiftOutcome | undefined;
  const change = await engine.transition(lift.truster, lift.subject, at, (row, now) => {
    const current = settle(row, now, engine.config).row;
    if (current.status !== "quarantined") {
      refusal = refuse("ERR_TRUST_NOT_QUARANTINED", `${lift.subject} is not quarantined`);
      return { row, steps: [], emitted: [] };
    }
    if (current.quarantineCount !== lift.quarantine_count) {
      refusal = refuse("ERR_TRUST_LIFT_STALE", "the lift names another quarantine episode");
      return { row, steps: [], emitted: [] };
    }
    const note = `approver ${lift.approver_key_id} at ${isoTime(now)}: ${lift.reason}`;
    return endQuarantine(current, now, engine.config, { kind: "quarantine_lifted", ect: null, note });
  });
  return refusal ?? { ok: true, change };
}

/** Refuses misuse loudly: an approver map whose ids do not match their keys. */
export function approverKeyMap(keys: readonly KeyObject[]): ReadonlyMap<string, KeyObject> {
  const map = new Map<string, KeyObject>();
  for (const k of keys) {
    if (keyTypeOf(k) !== "ed25519")
      throw new TrustError("ERR_TRUST_CONFIG_INVALID", "approver keys are Ed25519 public keys");
    map.set(keyIdOf(k), k);
  }
  return map;
}
