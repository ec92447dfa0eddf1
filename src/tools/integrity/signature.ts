// SchemaPin signature primitives: ECDSA P-256, DER, standard base64, over the
// schemapin-v1 canonical bytes. Two conventions exist in the wild and they are not
// interchangeable:
//   "double" (SchemaPin JS and Python, Warden's default): the signed message is the
//            32-byte SHA-256 of the canonical bytes, then ECDSA-with-SHA-256 hashes again;
//   "single" (SchemaPin Go, and every signed trust bundle): the signed message is the
//            canonical bytes themselves.
// The verifier chooses the mode; nothing in a signature or document can switch it.
import { createHash, type KeyObject } from "node:crypto";
import { ecdsaDerToRaw, sign, verify } from "../../crypto/index.js";
import { schemapinCanonicalBytes } from "./canonical.js";
import { fail } from "./result.js";

export type HashMode = "double" | "single";
export const HASH_MODES: readonly HashMode[] = ["double", "single"];

/** Longest standard-base64 text of a DER P-256 signature (72 bytes) is 96 characters. */
const MAX_SIGNATURE_CHARS = 96;
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Throws ERR_INTEGRITY_KEY_TYPE unless `key` is an ECDSA P-256 key. */
export function assertP256(key: KeyObject, what = "key"): void {
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    fail(
      "ERR_INTEGRITY_KEY_TYPE",
      `${what} is ${key.asymmetricKeyType ?? key.type}${curve ? ` (${curve})` : ""}; SchemaPin needs ECDSA P-256`,
    );
  }
}

/** The message ECDSA-with-SHA-256 is applied to, for canonical bytes in a given mode. */
export function signedMessage(canonical: Uint8Array, mode: HashMode): Uint8Array {
  return mode === "double" ? createHash("sha256").update(canonical).digest() : canonical;
}

/**
 * Decodes a SchemaPin signature: strict standard base64 (canonical padding, no
 * whitespace or URL alphabet) holding a strict DER ECDSA P-256 signature. Throws
 * ERR_INTEGRITY_SIGNATURE_ENCODING otherwise.
 */
export function decodeSignature(text: unknown): Buffer {
  if (typeof text !== "string" || text.length === 0) {
    fail("ERR_INTEGRITY_SIGNATURE_ENCODING", "signature must be a non-empty base64 string");
  }
  if (text.length > MAX_SIGNATURE_CHARS || !STD_BASE64.test(text)) {
    fail("ERR_INTEGRITY_SIGNATURE_ENCODING", "signature is not standard base64 of a DER ECDSA signature");
  }
  const der = Buffer.from(text, "base64");
  // Non-zero padding bits would let many strings decode to one signature.
  if (der.toString("base64") !== text) {
    fail("ERR_INTEGRITY_SIGNATURE_ENCODING", "signature base64 is not canonical");
  }
  try {
    ecdsaDerToRaw(der);
  } catch (err) {
    fail("ERR_INTEGRITY_SIGNATURE_ENCODING", "signature is not a well-formed DER ECDSA P-256 signature", err);
  }
  return der;
}

/** Signs the canonical form of `value`; returns standard base64 of a DER signature. */
export function signSchemaPin(privateKey: KeyObject, value: unknown, mode: HashMode = "double"): string {
  assertP256(privateKey, "signing key");
  const message = signedMessage(schemapinCanonicalBytes(value), mode);
  return sign(privateKey, message, { ecdsaEncoding: "der" }).toString("base64");
}

/**
 * Checks a signature over canonical bytes; throws ERR_INTEGRITY_SIGNATURE_ENCODING for a
 * malformed signature and ERR_INTEGRITY_SIGNATURE_INVALID when it does not verify.
 */
export function checkSignature(
  publicKey: KeyObject,
  canonical: Uint8Array,
  signature: string,
  mode: HashMode,
): void {
  assertP256(publicKey, "verification key");
  const der = decodeSignature(signature);
  if (!verify(publicKey, signedMessage(canonical, mode), der, { ecdsaEncoding: "der" })) {
    fail(
      "ERR_INTEGRITY_SIGNATURE_INVALID",
      `signature does not verify (${mode}-hash mode): the signed content or the key differs`,
    );
  }
}
