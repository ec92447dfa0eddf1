// AgentPin keys: EC P-256 JWKs (§4.4) turned into public keys, the pin hash (§7.4: hex
// SHA-256 of the compact JSON of {crv,kty,x,y}, keys sorted — the RFC 7638 member set in
// hex, kid not hashed) and the SDK key id (hex SHA-256 of the SPKI DER).
import { createHash, createPublicKey, type KeyObject } from "node:crypto";
import { decodeBase64Url } from "./encoding.js";
import type { AgentPinJwk } from "./schemas.js";

const hex = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");

/** A bounded cache: parsing a JWK into a key costs more than verifying with it. */
const KEY_CACHE = new Map<string, KeyObject>();
const KEY_CACHE_MAX = 1024;

/** The public key of an EC P-256 JWK; null when the JWK is not exactly one. */
export function publicKeyOfJwk(jwk: AgentPinJwk): KeyObject | null {
  if (jwk.kty !== "EC" || jwk.crv !== "P-256") return null;
  const cacheKey = `${jwk.x}.${jwk.y}`;
  const hit = KEY_CACHE.get(cacheKey);
  if (hit !== undefined) return hit;
  const x = decodeBase64Url(jwk.x);
  const y = decodeBase64Url(jwk.y);
  if (x === null || y === null || x.length !== 32 || y.length !== 32) return null;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, format: "jwk" });
  } catch {
    return null; // not a point on the curve
  }
  if (KEY_CACHE.size >= KEY_CACHE_MAX) KEY_CACHE.delete(KEY_CACHE.keys().next().value as string);
  KEY_CACHE.set(cacheKey, key);
  return key;
}

/** The pin hash of a JWK: hex SHA-256 of `{"crv":…,"kty":…,"x":…,"y":…}`. */
export function pinHashOf(jwk: Pick<AgentPinJwk, "crv" | "kty" | "x" | "y">): string {
  return hex(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }));
}

/** The SDK's `generate_key_id`: hex SHA-256 of the key's SPKI DER. */
export function spkiKeyIdOf(key: KeyObject): string {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  return hex(pub.export({ format: "der", type: "spki" }));
}

/** The discovery JWK of a P-256 key (§4.4). */
export function agentPinJwkOf(key: KeyObject, kid: string): AgentPinJwk {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const j = pub.export({ format: "jwk" });
  if (j.kty !== "EC" || j.crv !== "P-256" || j.x === undefined || j.y === undefined) {
    throw new TypeError("an AgentPin key must be EC P-256");
  }
  return { kid, kty: "EC", crv: "P-256", x: j.x, y: j.y, use: "sig", key_ops: ["verify"] };
}

export const sha256HexOf = hex;
