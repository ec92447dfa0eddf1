// The capability token's wire form: a compact JWS (RFC 7515) signed by the runtime key —
// EdDSA for an Ed25519 key, ES256 for a P-256 one — over a canonical JSON (RFC 8785)
// payload. The header is fixed (alg, typ, kid): a token whose header differs in any byte
// is refused, so "alg: none", a foreign kid or an added "jwk" never reach verification.
// Decoding is strict: size-capped, base64url only, canonical payload bytes, a strict
// schema; every failure is one answer (ERR_CAPABILITY_INVALID) that never echoes the token.
import type { KeyObject } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "../../contracts/index.js";
import { type KeyPair, keyIdOf, keyTypeOf, sign, verify } from "../../crypto/index.js";
import { Constraints } from "./constraints.js";

export const CAPABILITY_TOKEN_TYPE = "warden-cap+jws";
/** Tokens longer than this are refused before any decoding. */
export const MAX_TOKEN_LENGTH = 16_384;

const Name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/);

/** What the token lets its holder call: one contract by name, or a tool class (and action). */
export const CapabilityScope = z.union([
  z.strictObject({ tool: Name }),
  z.strictObject({ toolClass: Name, action: Name.optional() }),
]);
export type CapabilityScope = z.infer<typeof CapabilityScope>;

export const CapabilityPayload = z.strictObject({
  /** Token id (a UUID): the key its uses are counted under. */
  jti: z.uuid(),
  /** Issuer: the runtime key's id. */
  iss: z.string().min(1).max(128),
  /** The principal the run belongs to. */
  sub: Name,
  run: z.string().min(1).max(128),
  scope: CapabilityScope,
  constraints: Constraints,
  max_uses: z.number().int().min(1).max(1_000_000),
  /** Seconds since the epoch (JWT NumericDate), like exp. */
  iat: z.number().int().nonnegative(),
  exp: z.number().int().positive(),
});
export type CapabilityPayload = z.infer<typeof CapabilityPayload>;

function b64(s: string): string {
  return Buffer.from(s, "utf8").toString("base64url");
}

function algOf(key: KeyObject): "EdDSA" | "ES256" {
  return keyTypeOf(key) === "ed25519" ? "EdDSA" : "ES256";
}

/** The one header a token signed by this key may carry, encoded. */
export function headerFor(publicKey: KeyObject): string {
  return b64(canonicalJson({ alg: algOf(publicKey), kid: keyIdOf(publicKey), typ: CAPABILITY_TOKEN_TYPE }));
}

export function signToken(signer: KeyPair, payload: CapabilityPayload): string {
  const input = `${headerFor(signer.publicKey)}.${b64(canonicalJson(payload))}`;
  const sig = sign(signer.privateKey, Buffer.from(input, "ascii"), { ecdsaEncoding: "raw" });
  return `${input}.${sig.toString("base64url")}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The verified payload, or undefined for anything not issued by this key exactly as
 * issued (forged, tampered, re-encoded, another key, malformed).
 */
export function openToken(
  publicKey: KeyObject,
  expectedHeader: string,
  token: string,
): CapabilityPayload | undefined {
  if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  const [header, body, sig] = parts as [string, string, string];
  if (header !== expectedHeader || !B64URL.test(body) || !B64URL.test(sig)) return undefined;
  const ok = verify(publicKey, Buffer.from(`${header}.${body}`, "ascii"), Buffer.from(sig, "base64url"), {
    ecdsaEncoding: "raw",
  });
  if (!ok) return undefined;
  let data: unknown;
  try {
    const text = Buffer.from(body, "base64url").toString("utf8");
    data = JSON.parse(text);
    // Only the canonical bytes the issuer wrote are accepted (no second encoding of one payload).
    if (canonicalJson(data) !== text) return undefined;
  } catch {
    return undefined;
  }
  const parsed = CapabilityPayload.safeParse(data);
  return parsed.success ? parsed.data : undefined;
}
