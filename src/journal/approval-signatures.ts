// Approvals signed by the approver (DARE HITLDecisionRecord, OATS §7.5): the statement an
// approver signs with its own Ed25519 key, the keyring of configured approver keys, and
// the offline check of every `dare.hitl.decision` entry of a journal against it.
//
// The statement binds what GATE's "signature over the decision object" leaves open: the
// decision it answers and when. {v, decision_id, action, approver_id, justification,
// time, parameters_hash?} in canonical JSON, so a signature for one decision cannot be
// moved onto another record, and a modify's rewritten parameters are covered too (their
// hash travels in the record as the condition `parameters_hash:<hash>`).
import type { KeyObject } from "node:crypto";
import { createPublicKey } from "node:crypto";
import {
  canonicalBytes,
  type HITLDecisionRecord,
  HITLDecisionRecordSchema,
  type Sha256Hash,
} from "../contracts/index.js";
import { keyIdOf, parsePublicKey, sign, verify } from "../crypto/index.js";
import type { JournalEntry } from "./entry.js";
import type { MalformedRecord } from "./store.js";

export const APPROVAL_STATEMENT_VERSION = "warden.approval.v1";
export const PARAMETERS_CONDITION = "parameters_hash:";

export interface ApprovalStatement {
  decision_id: string;
  action: "approve" | "deny" | "modify";
  approver_id: string;
  justification: string;
  /** ISO time the approver signed at. */
  time: string;
  parameters_hash?: Sha256Hash;
}

export function approvalStatementBytes(s: ApprovalStatement): Buffer {
  return canonicalBytes({ v: APPROVAL_STATEMENT_VERSION, ...s });
}

/** What an approver sends with its verdict. */
export interface SignedApproval {
  decisionId: string;
  keyId: string;
  /** base64url Ed25519 signature over approvalStatementBytes. */
  signature: string;
  time: string;
}

/** Signs a statement with the approver's private key (the approver's side: a CLI, a console). */
export function signApproval(s: ApprovalStatement, privateKey: KeyObject): SignedApproval {
  return {
    decisionId: s.decision_id,
    keyId: keyIdOf(privateKey),
    signature: sign(privateKey, approvalStatementBytes(s)).toString("base64url"),
    time: s.time,
  };
}

/** Configured approver public keys by approver principal id. */
export class ApproverKeyring {
  readonly #keys = new Map<string, Map<string, KeyObject>>();

  /** From `approvers: { <principal>: [<PEM>, …] }`; Ed25519 keys only. */
  static fromPem(config: Readonly<Record<string, readonly string[]>>): ApproverKeyring {
    const ring = new ApproverKeyring();
    for (const [id, pems] of Object.entries(config))
      for (const pem of pems) ring.add(id, parsePublicKey(pem));
    return ring;
  }

  add(approverId: string, key: KeyObject): void {
    const pub = key.type === "private" ? createPublicKey(key) : key;
    if (pub.asymmetricKeyType !== "ed25519") throw new TypeError("approver keys are Ed25519");
    const mine = this.#keys.get(approverId) ?? new Map<string, KeyObject>();
    this.#keys.set(approverId, mine);
    mine.set(keyIdOf(pub), pub);
  }

  /** The approver holding a key id, and the key (a lift read back from shared state names only the key). */
  byKeyId(keyId: string): { approverId: string; key: KeyObject } | undefined {
    for (const [approverId, keys] of this.#keys) {
      const key = keys.get(keyId);
      if (key !== undefined) return { approverId, key };
    }
    return undefined;
  }

  /** Drops one of the approver's keys (a revoked browser key): it verifies nothing after. */
  remove(approverId: string, keyId: string): void {
    this.#keys.get(approverId)?.delete(keyId);
  }

  /** The approver's key with that id; undefined for a key that is not this approver's. */
  key(approverId: string, keyId: string): KeyObject | undefined {
    return this.#keys.get(approverId)?.get(keyId);
  }

  get size(): number {
    return this.#keys.size;
  }
}

export type ApprovalCheck =
  | { ok: true }
  | { ok: false; code: "ERR_APPROVAL_SIGNATURE_INVALID" | "ERR_APPROVAL_UNSIGNED"; message: string };

export function checkApprovalSignature(
  ring: ApproverKeyring,
  s: ApprovalStatement,
  keyId: string | undefined,
  signature: string,
): ApprovalCheck {
  if (keyId === undefined || signature.length === 0)
    return {
      ok: false,
      code: "ERR_APPROVAL_UNSIGNED",
      message: "the decision is not signed by its approver",
    };
  const key = ring.key(s.approver_id, keyId);
  if (key === undefined)
    return {
      ok: false,
      code: "ERR_APPROVAL_SIGNATURE_INVALID",
      message: "the key is not one of this approver's",
    };
  const sig = Buffer.from(signature, "base64url");
  if (sig.toString("base64url") !== signature || !verify(key, approvalStatementBytes(s), sig))
    return {
      ok: false,
      code: "ERR_APPROVAL_SIGNATURE_INVALID",
      message: "the approver's signature does not verify",
    };
  return { ok: true };
}

/** The statement a HITLDecisionRecord's signature must cover. */
export function statementOf(r: HITLDecisionRecord): ApprovalStatement | undefined {
  const action = r.decision.action;
  if (action !== "approve" && action !== "deny" && action !== "modify") return undefined;
  const ph = r.decision.conditions?.find((c) => c.startsWith(PARAMETERS_CONDITION));
  return {
    decision_id: r.context.policy_decision_id,
    action,
    approver_id: r.decision.approver_id,
    justification: r.decision.justification,
    time: r.time,
    ...(ph !== undefined ? { parameters_hash: ph.slice(PARAMETERS_CONDITION.length) as Sha256Hash } : {}),
  };
}

export interface ApprovalFailure {
  seq: number;
  code: "ERR_APPROVAL_SIGNATURE_INVALID" | "ERR_APPROVAL_UNSIGNED" | "ERR_APPROVAL_REPLAYED";
  message: string;
}

export interface ApprovalReport {
  ok: boolean;
  checked: number;
  failures: ApprovalFailure[];
}

/**
 * Checks every `dare.hitl.decision` entry: signed by a configured key of the approver it
 * names, over the statement of its own decision, and no signature used twice.
 * Runs beside verifyJournal (which checks the chain and the runtime's signatures).
 */
export async function verifyApprovalSignatures(
  entries: AsyncIterable<JournalEntry | MalformedRecord | unknown> | Iterable<unknown>,
  ring: ApproverKeyring,
): Promise<ApprovalReport> {
  const failures: ApprovalFailure[] = [];
  const seen = new Set<string>();
  let checked = 0;
  for await (const raw of entries) {
    // Store rows and JSONL lines alike; anything else is the chain verifier's concern.
    const e = raw as { type?: unknown; seq?: unknown; body?: unknown };
    if (typeof e !== "object" || e === null || typeof e.seq !== "number") continue;
    if (e.type !== "dare.hitl.decision" && e.type !== "gate.hitl.decision") continue;
    checked++;
    const parsed = HITLDecisionRecordSchema.safeParse(e.body);
    const s = parsed.success ? statementOf(parsed.data) : undefined;
    if (!parsed.success || s === undefined) {
      failures.push({
        seq: e.seq,
        code: "ERR_APPROVAL_UNSIGNED",
        message: "not a signed approve/deny/modify record",
      });
      continue;
    }
    const ev = parsed.data.evidence;
    const c = checkApprovalSignature(ring, s, ev.signing_key_id, ev.signature);
    if (!c.ok) failures.push({ seq: e.seq, code: c.code, message: c.message });
    else if (seen.has(ev.signature))
      failures.push({
        seq: e.seq,
        code: "ERR_APPROVAL_REPLAYED",
        message: "this approver signature was used before",
      });
    seen.add(ev.signature);
  }
  return { ok: failures.length === 0, checked, failures };
}
