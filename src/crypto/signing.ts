// Signatures over bytes and over canonical JSON. Ed25519 signs the message itself;
// ES256 is ECDSA P-256 with SHA-256, in DER (X.509/SchemaPin) or raw r||s
// (IEEE P1363 / JWS) encoding. verify never throws on a bad signature: a forged or
// malformed signature is an expected outcome and returns false.
import { createPublicKey, type KeyObject, sign as nodeSign, verify as nodeVerify } from "node:crypto";
import { CryptoError, canonicalBytes } from "../contracts/index.js";
import { keyTypeOf } from "./keys.js";

export type EcdsaEncoding = "der" | "raw";

export interface SignOptions {
  /** ECDSA signature encoding (default "der"); ignored for Ed25519. */
  ecdsaEncoding?: EcdsaEncoding;
}

const dsa = (e: EcdsaEncoding | undefined): "der" | "ieee-p1363" => (e === "raw" ? "ieee-p1363" : "der");

export function sign(privateKey: KeyObject, data: Uint8Array, options: SignOptions = {}): Buffer {
  if (privateKey.type !== "private") {
    throw new CryptoError("ERR_CRYPTO_KEY_NOT_PRIVATE", "signing needs a private key");
  }
  if (keyTypeOf(privateKey) === "ed25519") return nodeSign(null, data, privateKey);
  return nodeSign("sha256", data, { key: privateKey, dsaEncoding: dsa(options.ecdsaEncoding) });
}

export function verify(
  publicKey: KeyObject,
  data: Uint8Array,
  signature: Uint8Array,
  options: SignOptions = {},
): boolean {
  const pub = publicKey.type === "private" ? createPublicKey(publicKey) : publicKey;
  const type = keyTypeOf(pub);
  try {
    if (type === "ed25519") return signature.length === 64 && nodeVerify(null, data, pub, signature);
    if (options.ecdsaEncoding === "raw" && signature.length !== 64) return false;
    return nodeVerify("sha256", data, { key: pub, dsaEncoding: dsa(options.ecdsaEncoding) }, signature);
  } catch {
    return false;
  }
}

/** Sign the canonical JSON bytes of `value`; returns base64url. */
export function signCanonical(privateKey: KeyObject, value: unknown, options?: SignOptions): string {
  return sign(privateKey, canonicalBytes(value), options).toString("base64url");
}

/** Verify a base64url signature over the canonical JSON bytes of `value`. */
export function verifyCanonical(
  publicKey: KeyObject,
  value: unknown,
  signatureB64url: string,
  options?: SignOptions,
): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(signatureB64url)) return false;
  return verify(publicKey, canonicalBytes(value), Buffer.from(signatureB64url, "base64url"), options);
}

function derLength(buf: Uint8Array, at: number): [len: number, next: number] {
  const first = buf[at];
  if (first === undefined) throw badDer();
  if (first < 0x80) return [first, at + 1];
  if (first === 0x81) {
    const len = buf[at + 1];
    if (len === undefined || len < 0x80) throw badDer();
    return [len, at + 2];
  }
  throw badDer();
}

const badDer = () => new CryptoError("ERR_CRYPTO_SIGNATURE_ENCODING", "malformed DER ECDSA signature");

function readInt(buf: Uint8Array, at: number): [Buffer, number] {
  if (buf[at] !== 0x02) throw badDer();
  const [len, start] = derLength(buf, at + 1);
  const end = start + len;
  if (len === 0 || end > buf.length) throw badDer();
  let v = Buffer.from(buf.subarray(start, end));
  if (v[0]! & 0x80) throw badDer(); // negative integers are not valid r/s
  if (v.length > 1 && v[0] === 0 && !(v[1]! & 0x80)) throw badDer(); // non-minimal
  while (v.length > 32 && v[0] === 0) v = v.subarray(1);
  if (v.length > 32) throw badDer();
  return [Buffer.concat([Buffer.alloc(32 - v.length), v]), end];
}

/** Convert a DER ECDSA P-256 signature to raw 64-byte r||s. */
export function ecdsaDerToRaw(der: Uint8Array): Buffer {
  if (der[0] !== 0x30) throw badDer();
  const [len, start] = derLength(der, 1);
  if (start + len !== der.length) throw badDer();
  const [r, next] = readInt(der, start);
  const [s, end] = readInt(der, next);
  if (end !== der.length) throw badDer();
  return Buffer.concat([r, s]);
}

function intDer(v: Uint8Array): Buffer {
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  let body = Buffer.from(v.subarray(i));
  if (body[0]! & 0x80) body = Buffer.concat([Buffer.from([0]), body]);
  return Buffer.concat([Buffer.from([0x02, body.length]), body]);
}

/** Convert a raw 64-byte r||s ECDSA P-256 signature to DER. */
export function ecdsaRawToDer(raw: Uint8Array): Buffer {
  if (raw.length !== 64) {
    throw new CryptoError("ERR_CRYPTO_SIGNATURE_ENCODING", "raw ECDSA P-256 signature must be 64 bytes");
  }
  const body = Buffer.concat([intDer(raw.subarray(0, 32)), intDer(raw.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}
