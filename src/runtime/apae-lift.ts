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
import type { Principals } from "../context/index.js";
import { RuntimeError } from "../contracts/index.js";
import { keyIdOf, parsePublicKey } from "../crypto/index.js";
import type { EventTypeRegistry, Journal } from "../journal/index.js";
import {
  type LiftCode,
  liftQuarantine,
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
}

export interface LiftOptions {
  /** The authenticated approver presenting the record: only that approver's keys count. */
  by?: string;
}

/** Verifies and applies an approver-signed lift; every refusal is coded and changes nothing. */
export async function earlyLift(d: LiftDeps, record: unknown, o: LiftOptions = {}): Promise<EarlyLift> {
  const keys = new Map<string, KeyObject>();
  for (const [id, a] of d.approvers) if (o.by === undefined || a.approver === o.by) keys.set(id, a.key);
  const shaped = SignedLiftSchema.safeParse(record);
  const self = d.engine.config.self_id;
  if (shaped.success && shaped.data.lift.truster !== self) {
    return {
      ok: false,
      code: "ERR_TRUST_LIFT_INVALID",
      message: `the lift names truster ${shaped.data.lift.truster}, not this deployment (${self})`,
    };
  }
  const r = await liftQuarantine(d.engine, record, keys);
  if (!r.ok || !shaped.success) return r.ok ? { ok: false, code: "ERR_TRUST_LIFT_INVALID", message: "" } : r;
  await d.settle(r.change);
  const { lift, signature } = shaped.data;
  const { scope: _scope, ...fields } = lift;
  const held = d.principals.quarantineOf(lift.subject);
  const lifts = held?.type === "trust_score";
  const body: ApaeLiftBody = {
    ...fields,
    approver: d.approvers.get(lift.approver_key_id)?.approver ?? "",
    signature,
    principal_lifted: lifts,
    principal_held: held === undefined || lifts ? null : held.type,
  };
  const entry = await d.journal.append({ type: APAE_LIFT_EVENT, body: { ...body } });
  if (lifts) await d.principals.lift(lift.subject);
  return {
    ok: true,
    subject: lift.subject,
    quarantineCount: lift.quarantine_count,
    approver: body.approver,
    principalLifted: lifts,
    principalHeld: body.principal_held,
    seq: entry.seq,
  };
}
