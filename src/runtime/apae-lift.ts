// Early quarantine lift in the runtime (APAE §Quarantine Expiry and Recovery: "an operator
// MAY lift a quarantine early by issuing a HITL override with scope apae:quarantine_lift").
// The record is checked by the trust layer (`liftQuarantine`: shape, scope, a configured
// approver's Ed25519 key, signature, the current quarantine episode), which ends the trust
// table's quarantine; the trust change is journaled, then a `warden.apae.lift` entry holding
// the signed record itself (an auditor re-verifies it from the journal), and only then is the
// principal quarantine the Gate enforces lifted — through the principal state store, so in
// distributed mode the shared row is cleared for every node (docs/distributed.md). Only a
// principal quarantine the trust score caused is lifted; one an operator or a behavioural
// rule set stays (reported as `principalHeld`).
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import type { PrincipalStateStore, Principals } from "../context/index.js";
import { RuntimeError } from "../contracts/index.js";
import { keyIdOf, parsePublicKey } from "../crypto/index.js";
import type { ApproverKeyring, EventTypeRegistry, Journal } from "../journal/index.js";
import {
  type LiftCode,
  liftQuarantine,
  type SignedLift,
  SignedLiftSchema,
  type TrustChange,
  type TrustEngine,
} from "../trust/index.js";

export const APAE_LIFT_EVENT = "warden.apae.lift";

const Id = z.string().min(1).max(1024);

/** A `warden.apae.lift` entry: the approver's signed record and what it lifted. */
export const ApaeLiftBodySchema = z.strictObject({
  truster: Id,
  subject: Id,
  quarantine_count: z.number().int().min(1),
  approver_key_id: z.string().min(1).max(256),
  /** The approver principal the key is configured for. */
  approver: Id,
  issued_at: z.string().min(1).max(64),
  reason: z.string().min(1).max(1024),
  /** The approver's signature over the canonical record (verifiable from the journal). */
  signature: z.string().min(1).max(512),
  /** True when the principal quarantine the Gate enforces was lifted too. */
  principal_lifted: z.boolean(),
  /** The trigger type of a principal quarantine left in force (set by an operator or a rule), else null. */
  principal_held: z.string().max(64).nullable(),
  /** presented: to this replica; shared_state: another replica's lift, verified and adopted here. */
  via: z.enum(["presented", "shared_state"]),
});
export type ApaeLiftBody = z.infer<typeof ApaeLiftBodySchema>;

export function registerApaeLiftEventType(registry: Pick<EventTypeRegistry, "has" | "register">): void {
  if (!registry.has(APAE_LIFT_EVENT)) registry.register(APAE_LIFT_EVENT, ApaeLiftBodySchema);
}

/** An approver key: whose it is, and the key. */
export interface LiftApprover {
  approver: string;
  key: KeyObject;
}

/** The configured approvers' keys by key id (`approvers: {<principal>: [<PEM>…]}`). */
export function liftApprovers(
  approvers: Readonly<Record<string, readonly string[]>> | undefined,
): ReadonlyMap<string, LiftApprover> {
  const map = new Map<string, LiftApprover>();
  for (const [approver, pems] of Object.entries(approvers ?? {})) {
    for (const pem of pems) {
      const key = parsePublicKey(pem);
      if (key.asymmetricKeyType !== "ed25519")
        throw new RuntimeError("ERR_RUNTIME_CONFIG_INVALID", "approvers: keys must be Ed25519 public keys");
      map.set(keyIdOf(key), { approver, key });
    }
  }
  return map;
}

export type EarlyLift =
  | {
      ok: true;
      subject: string;
      quarantineCount: number;
      approver: string;
      principalLifted: boolean;
      principalHeld: string | null;
      /** The journal sequence number of the `warden.apae.lift` entry. */
      seq: number;
    }
  | { ok: false; code: LiftCode; message: string };

export interface LiftDeps {
  engine: TrustEngine;
  approvers: ReadonlyMap<string, LiftApprover>;
  principals: Principals;
  journal: Pick<Journal, "append">;
  /** Journals the trust change and refreshes the deployment's cached row. */
  settle(change: TrustChange): Promise<void>;
  /** The principal state store (shared in distributed mode), read back by `adoptLift`. */
  store?: PrincipalStateStore;
  /** The approvers' keyring (browser keys shared by every replica): `adoptLift` verifies with it too. */
  keyring?: ApproverKeyring;
}

/** The lift's dependencies from the runtime's APAE parts. */
export function liftDeps(
  engine: TrustEngine,
  p: {
    approvers?: Readonly<Record<string, readonly string[]>>;
    sessions: { principals: Principals };
    journal: Pick<Journal, "append">;
    principalStore?: PrincipalStateStore;
    keyring?: ApproverKeyring | undefined;
  },
  settle: (change: TrustChange) => Promise<void>,
): LiftDeps {
  return {
    engine,
    approvers: liftApprovers(p.approvers),
    principals: p.sessions.principals,
    journal: p.journal,
    settle,
    ...(p.principalStore !== undefined ? { store: p.principalStore } : {}),
    ...(p.keyring !== undefined ? { keyring: p.keyring } : {}),
  };
}

export interface LiftOptions {
  /** The authenticated approver presenting the record: only that approver's keys count. */
  by?: string;
  /**
   * More keys of that approver (key id → Ed25519 public key), e.g. those registered from the
   * approval console's browser; they count only with `by`.
   */
  keys?: ReadonlyMap<string, KeyObject>;
}

/** The approvers' keys that count: all, or only those of the approver presenting the record. */
function keysFor(d: LiftDeps, o: LiftOptions): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const [id, a] of d.approvers) if (o.by === undefined || a.approver === o.by) keys.set(id, a.key);
  if (o.by !== undefined) for (const [id, k] of o.keys ?? []) keys.set(id, k);
  return keys;
}

/** Checks the record against this deployment's trust table and applies it there (journaled). */
async function applyToTable(
  d: LiftDeps,
  record: unknown,
  o: LiftOptions = {},
): Promise<{ ok: true; signed: SignedLift } | { ok: false; code: LiftCode; message: string }> {
  const shaped = SignedLiftSchema.safeParse(record);
  const self = d.engine.config.self_id;
  if (shaped.success && shaped.data.lift.truster !== self) {
    const message = `the lift names truster ${shaped.data.lift.truster}, not this deployment (${self})`;
    return { ok: false, code: "ERR_TRUST_LIFT_INVALID", message };
  }
  const r = await liftQuarantine(d.engine, record, keysFor(d, o));
  if (!r.ok) return r;
  await d.settle(r.change);
  // liftQuarantine parsed the same record: it has the shape.
  return shaped.success
    ? { ok: true, signed: shaped.data }
    : { ok: false, code: "ERR_TRUST_LIFT_INVALID", message: "" };
}

function liftBody(
  d: LiftDeps,
  signed: SignedLift,
  held: string | null,
  via: ApaeLiftBody["via"],
  by?: string,
): ApaeLiftBody {
  const { scope: _scope, ...fields } = signed.lift;
  return {
    ...fields,
    // A configured key names its approver; a key passed in `LiftOptions.keys` is `by`'s.
    approver: d.approvers.get(fields.approver_key_id)?.approver ?? by ?? "",
    signature: signed.signature,
    principal_lifted: held === null,
    principal_held: held,
    via,
  };
}

/** Verifies and applies an approver-signed lift; every refusal is coded and changes nothing. */
export async function earlyLift(d: LiftDeps, record: unknown, o: LiftOptions = {}): Promise<EarlyLift> {
  // The principal quarantine as it is before the table changes: in distributed mode the
  // table's own change notification may lift a trust quarantine while this lift is applied.
  const named = SignedLiftSchema.safeParse(record);
  const before = named.success ? d.principals.quarantineOf(named.data.lift.subject) : undefined;
  const r = await applyToTable(d, record, o);
  if (!r.ok) return r;
  const subject = r.signed.lift.subject;
  const quarantine = before ?? d.principals.quarantineOf(subject);
  const lifts = quarantine?.type === "trust_score";
  const held = quarantine === undefined || lifts ? null : quarantine.type;
  const body = liftBody(d, r.signed, held, "presented", o.by);
  const entry = await d.journal.append({ type: APAE_LIFT_EVENT, body: { ...body } });
  // Through the principal state store: in distributed mode the shared row, with the record.
  if (lifts) await d.principals.lift(subject, r.signed);
  return {
    ok: true,
    subject,
    quarantineCount: r.signed.lift.quarantine_count,
    approver: body.approver,
    principalLifted: lifts,
    principalHeld: held,
    seq: entry.seq,
  };
}

export type Adopted = { lifted: true; seq: number } | { lifted: false; why: string };

/**
 * Distributed mode: another replica lifted `principalId` with a signed record it saved in the
 * shared principal state. This replica verifies the record itself (approver key, signature,
 * subject, this deployment as truster), applies it to its own trust table (a table that is
 * not quarantined is fine; one in another quarantine episode keeps the principal held), and
 * drops its cached quarantine, journaled. Nothing is lifted on the strength of a read alone.
 */
export async function adoptLift(d: LiftDeps, principalId: string): Promise<Adopted> {
  const held = d.principals.quarantineOf(principalId);
  if (held?.type !== "trust_score") return { lifted: false, why: "no trust quarantine held here" };
  if (d.store === undefined) return { lifted: false, why: "no principal state store" };
  const rec = await d.store.load(principalId);
  if (rec === undefined || rec.quarantine !== undefined || rec.lift === undefined)
    return { lifted: false, why: "the shared state holds no lift" };
  const shaped = SignedLiftSchema.safeParse(rec.lift);
  if (!shaped.success || shaped.data.lift.subject !== principalId)
    return { lifted: false, why: "the shared lift is not a signed lift of this principal" };
  // Verified here (a table not quarantined still verified the signature first): with a
  // configured approver key, or a console browser key any replica registered.
  const keyId = shaped.data.lift.approver_key_id;
  const browser = d.approvers.has(keyId) ? undefined : d.keyring?.byKeyId(keyId);
  const o: LiftOptions =
    browser === undefined ? {} : { by: browser.approverId, keys: new Map([[keyId, browser.key]]) };
  const local = await applyToTable(d, rec.lift, o);
  if (!local.ok && local.code !== "ERR_TRUST_NOT_QUARANTINED") return { lifted: false, why: local.code };
  const body = liftBody(d, shaped.data, null, "shared_state", o.by);
  const entry = await d.journal.append({ type: APAE_LIFT_EVENT, body: { ...body } });
  d.principals.forget(principalId);
  return { lifted: true, seq: entry.seq };
}
