// Warden's delegation grants: a chain of links (maker → deployer → agent → sub-agent), each
// a canonical JSON payload signed by its delegator's key (Ed25519 or P-256). Link 1 is
// signed by a trusted root key; link n+1 must be signed by the key link n delegated to,
// name link n's delegate as its delegator, carry link n's hash (no splicing from another
// chain), and grant no more than link n. Verification answers with a value: the effective
// grant, or the first failure with its code, its 1-based link number and, for a widening,
// the field. A compromised middle key can therefore only narrow what it already holds.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { canonicalJson, type Sha256Hash, sha256Of } from "../../contracts/index.js";
import {
  type KeyPair,
  keyIdOf,
  parsePublicKey,
  signCanonical,
  toPublicKey,
  verifyCanonical,
} from "../../crypto/index.js";
import { DelegatedGrant, type DelegatedGrantInput, type GrantField, widening } from "./grant.js";

export const DELEGATION_LINK_TYPE = "warden-delegation/v1";
export const DEFAULT_MAX_DEPTH = 3;
/** Links in a chain beyond this are refused before any signature is checked. */
const HARD_MAX_DEPTH = 16;

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/@-]*$/);
const Jwk = z.record(z.string().max(16), z.string().max(256));

export const DelegationPayload = z.strictObject({
  typ: z.literal(DELEGATION_LINK_TYPE),
  delegator: Id,
  delegator_key: Jwk,
  delegate: Id,
  delegate_key: Jwk,
  grant: DelegatedGrant,
  /** The previous link's hash (absent on link 1). */
  prev: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/)
    .optional(),
  /** Seconds since the epoch. */
  iat: z.number().int().nonnegative(),
});
export type DelegationPayload = z.infer<typeof DelegationPayload>;

export const DelegationLink = z.strictObject({
  payload: DelegationPayload,
  /** base64url signature over the canonical JSON of the payload, by the delegator's key. */
  sig: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/),
});
export type DelegationLink = z.infer<typeof DelegationLink>;

export type DelegationRefusalCode =
  | "ERR_DELEGATION_INVALID"
  | "ERR_DELEGATION_WIDENS"
  | "ERR_DELEGATION_DEPTH"
  | "ERR_DELEGATION_BROKEN"
  | "ERR_DELEGATION_EXPIRED";

export type ChainVerification =
  | {
      ok: true;
      /** The last link's grant: what the final delegate may do. */
      grant: DelegatedGrant;
      delegate: string;
      delegator: string;
      depth: number;
      /** The last link's hash (journal it; a chain is identified by it). */
      hash: Sha256Hash;
      /** The last link's issue time (seconds since the epoch). */
      issuedAt: number;
    }
  | { ok: false; code: DelegationRefusalCode; link: number; field?: GrantField; message: string };

function jwkOf(key: KeyObject): Record<string, string> {
  const jwk = toPublicKey(key).export({ format: "jwk" }) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const k of ["crv", "kty", "x", "y"]) if (typeof jwk[k] === "string") out[k] = jwk[k] as string;
  return out;
}

export function linkHash(link: DelegationLink): Sha256Hash {
  return sha256Of(link);
}

export interface IssueLinkInput {
  /** Who delegates, and the key that signs (the root key, or the key the previous link delegated to). */
  delegator: { id: string; key: KeyPair };
  delegate: { id: string; publicKey: KeyObject };
  grant: DelegatedGrantInput;
  /** The link this one extends (absent for link 1). */
  prev?: DelegationLink;
  /** Seconds since the epoch (default now). */
  iat?: number;
}

/** Signs one link. Issuing does not check narrowing: verification does, for every link. */
export function issueLink(input: IssueLinkInput): DelegationLink {
  const payload = DelegationPayload.parse({
    typ: DELEGATION_LINK_TYPE,
    delegator: input.delegator.id,
    delegator_key: jwkOf(input.delegator.key.publicKey),
    delegate: input.delegate.id,
    delegate_key: jwkOf(input.delegate.publicKey),
    grant: input.grant,
    ...(input.prev !== undefined ? { prev: linkHash(input.prev) } : {}),
    iat: input.iat ?? Math.floor(Date.now() / 1000),
  });
  return { payload, sig: signCanonical(input.delegator.key.privateKey, payload) };
}

export interface VerifyChainOptions {
  /** Keys trusted to sign link 1 (the makers). */
  roots: readonly KeyObject[];
  /** Most links allowed (default 3: maker → deployer → agent → sub-agent). */
  maxDepth?: number;
  /** Seconds since the epoch. */
  now: number;
}

const fail = (
  code: DelegationRefusalCode,
  link: number,
  message: string,
  field?: GrantField,
): ChainVerification => ({ ok: false, code, link, message, ...(field !== undefined ? { field } : {}) });

function keyId(jwk: Record<string, string>): string | undefined {
  try {
    return keyIdOf(parsePublicKey(jwk));
  } catch {
    return undefined;
  }
}

/** Verifies a chain (untrusted input: parsed here). */
export function verifyChain(raw: unknown, o: VerifyChainOptions): ChainVerification {
  const max = Math.min(o.maxDepth ?? DEFAULT_MAX_DEPTH, HARD_MAX_DEPTH);
  if (!Array.isArray(raw) || raw.length === 0)
    return fail("ERR_DELEGATION_INVALID", 0, "not a chain of links");
  if (raw.length > max) return fail("ERR_DELEGATION_DEPTH", max + 1, `a chain of at most ${max} links`);
  const roots = new Set(o.roots.map((k) => keyIdOf(k)));
  let prev: DelegationLink | undefined;
  for (const [i, item] of raw.entries()) {
    const n = i + 1;
    const parsed = DelegationLink.safeParse(item);
    if (!parsed.success) return fail("ERR_DELEGATION_INVALID", n, "malformed link");
    const link = parsed.data;
    const p = link.payload;
    const signerId = keyId(p.delegator_key);
    if (signerId === undefined) return fail("ERR_DELEGATION_INVALID", n, "delegator key is not a valid key");
    if (prev === undefined) {
      if (!roots.has(signerId))
        return fail("ERR_DELEGATION_BROKEN", n, "link 1 is not signed by a trusted root");
      if (p.prev !== undefined) return fail("ERR_DELEGATION_BROKEN", n, "link 1 names a previous link");
    } else {
      const q = prev.payload;
      if (p.delegator !== q.delegate || signerId !== keyId(q.delegate_key))
        return fail("ERR_DELEGATION_BROKEN", n, "the delegator is not the previous link's delegate");
      if (p.prev !== linkHash(prev))
        return fail("ERR_DELEGATION_BROKEN", n, "the previous link's hash differs");
    }
    // The signature covers the payload as sent (the parse may fill defaults).
    const signed = (item as { payload: unknown }).payload;
    if (!verifyCanonical(parsePublicKey(p.delegator_key), signed, link.sig))
      return fail("ERR_DELEGATION_INVALID", n, "signature does not verify under the delegator's key");
    if (prev !== undefined) {
      const field = widening(prev.payload.grant, p.grant);
      if (field !== undefined)
        return fail("ERR_DELEGATION_WIDENS", n, `link ${n} grants more ${field} than link ${n - 1}`, field);
    }
    if (p.grant.expiresAt <= o.now) return fail("ERR_DELEGATION_EXPIRED", n, `link ${n} has expired`);
    prev = link;
  }
  const last = prev!;
  return {
    ok: true,
    grant: last.payload.grant,
    delegate: last.payload.delegate,
    delegator: last.payload.delegator,
    depth: raw.length,
    hash: linkHash(last),
    issuedAt: last.payload.iat,
  };
}

/** The canonical JSON of a chain (what a host sends; what `verifyChain` takes once parsed). */
export function chainJson(chain: readonly DelegationLink[]): string {
  return canonicalJson(chain);
}
