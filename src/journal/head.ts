// Signed heads. A hash chain cannot show that its tail was cut off: the shorter
// chain is still a valid chain. So the journal's head (seq, hash, time) is signed
// and kept somewhere else (a ticket, a WORM bucket, another system's log); a later
// verification with that head proves nothing before it was removed or rewritten.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { canonicalBytes, isoTime, JournalError, SHA256_HASH_PATTERN } from "../contracts/index.js";
import { type KeyPair, sign, verify } from "../crypto/index.js";
import { ED25519_SIGNATURE_PATTERN, ENTRY_TIME_PATTERN, type JournalHead, KEY_ID_PATTERN } from "./entry.js";

/** Domain separation: a head signature can never be mistaken for an entry signature. */
export const HEAD_KIND = "warden.journal.head";

export const SignedHeadSchema = z.strictObject({
  kind: z.literal(HEAD_KIND),
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  hash: z.string().regex(SHA256_HASH_PATTERN),
  /** Time of the head entry. */
  time: z.string().regex(ENTRY_TIME_PATTERN),
  /** When the head was signed. */
  signed_at: z.string().regex(ENTRY_TIME_PATTERN),
  key_id: z.string().regex(KEY_ID_PATTERN),
  signature: z.string().regex(ED25519_SIGNATURE_PATTERN),
});
export type SignedHead = z.infer<typeof SignedHeadSchema>;

/** Signs a head with the journal's key: Ed25519 over the canonical JSON of every field but `signature`. */
export function signHead(head: JournalHead, signer: KeyPair, now: Date = new Date()): SignedHead {
  const unsigned = {
    kind: HEAD_KIND,
    seq: head.seq,
    hash: head.hash,
    time: head.time,
    signed_at: isoTime(now),
    key_id: signer.keyId,
  } as const;
  const signature = sign(signer.privateKey, canonicalBytes(unsigned)).toString("base64url");
  return { ...unsigned, signature };
}

export type HeadCheck =
  | { ok: true; head: SignedHead }
  | { ok: false; code: "ERR_JOURNAL_HEAD_INVALID"; message: string };

/** Parses and verifies a signed head; `keyFor` returns the trusted public key for a key id. */
export function verifyHead(value: unknown, keyFor: (keyId: string) => KeyObject | undefined): HeadCheck {
  const parsed = SignedHeadSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      code: "ERR_JOURNAL_HEAD_INVALID",
      message: `not a signed journal head (${issue?.path.join(".") || "root"}: ${issue?.message ?? "invalid"})`,
    };
  }
  const { signature, ...unsigned } = parsed.data;
  const key = keyFor(unsigned.key_id);
  if (key === undefined) {
    return {
      ok: false,
      code: "ERR_JOURNAL_HEAD_INVALID",
      message: `head signed by unknown key ${unsigned.key_id}`,
    };
  }
  const sig = Buffer.from(signature, "base64url");
  if (sig.toString("base64url") !== signature || !verify(key, canonicalBytes(unsigned), sig)) {
    return { ok: false, code: "ERR_JOURNAL_HEAD_INVALID", message: "head signature does not verify" };
  }
  return { ok: true, head: parsed.data };
}

/** Throws ERR_JOURNAL_HEAD_INVALID unless `value` has the shape of a signed head (signature unchecked). */
export function parseSignedHead(value: unknown): SignedHead {
  const parsed = SignedHeadSchema.safeParse(value);
  if (!parsed.success) throw new JournalError("ERR_JOURNAL_HEAD_INVALID", "not a signed journal head");
  return parsed.data;
}
