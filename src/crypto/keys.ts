// Key pairs: Ed25519 (journal, messages) and ECDSA P-256 (contracts, credentials).
// Key ids are RFC 7638 JWK thumbprints; fingerprints are SchemaPin-style
// `sha256:<hex of SPKI DER>`. Private key files are written 0600 and refused when
// group- or world-readable, the same rule ssh applies.
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  type webcrypto,
} from "node:crypto";
import { CryptoError } from "../contracts/index.js";

export type JsonWebKey = webcrypto.JsonWebKey;

export type KeyType = "ed25519" | "p256";
export const KEY_TYPES: readonly KeyType[] = ["ed25519", "p256"];

export interface KeyPair {
  type: KeyType;
  /** RFC 7638 thumbprint of the public JWK (base64url SHA-256). */
  keyId: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface PublicKeyInfo {
  type: KeyType;
  keyId: string;
  /** `sha256:` + hex SHA-256 of the DER SubjectPublicKeyInfo (SchemaPin fingerprint). */
  fingerprint: `sha256:${string}`;
  publicKeyPem: string;
  publicJwk: JsonWebKey;
}

/** The Warden key type of a node KeyObject, or an ERR_CRYPTO_KEY_TYPE error. */
export function keyTypeOf(key: KeyObject): KeyType {
  if (key.asymmetricKeyType === "ed25519") return "ed25519";
  if (key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1") return "p256";
  throw new CryptoError(
    "ERR_CRYPTO_KEY_TYPE",
    `unsupported key type ${key.asymmetricKeyType ?? key.type}${
      key.asymmetricKeyType === "ec" ? ` (${key.asymmetricKeyDetails?.namedCurve})` : ""
    }; Warden uses Ed25519 and ECDSA P-256`,
  );
}

export function toPublicKey(key: KeyObject): KeyObject {
  return key.type === "private" ? createPublicKey(key) : key;
}

/** RFC 7638 JWK thumbprint: SHA-256 over the required members in lexicographic order. */
export function keyIdOf(key: KeyObject): string {
  const pub = toPublicKey(key);
  const jwk = pub.export({ format: "jwk" });
  const type = keyTypeOf(pub);
  const members =
    type === "ed25519"
      ? `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`
      : `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
  return createHash("sha256").update(members).digest("base64url");
}

export function fingerprintOf(key: KeyObject): `sha256:${string}` {
  const der = toPublicKey(key).export({ format: "der", type: "spki" });
  return `sha256:${createHash("sha256").update(der).digest("hex")}`;
}

export function generateKeyPair(type: KeyType): KeyPair {
  const { privateKey, publicKey } =
    type === "ed25519"
      ? generateKeyPairSync("ed25519")
      : type === "p256"
        ? generateKeyPairSync("ec", { namedCurve: "prime256v1" })
        : (() => {
            throw new CryptoError("ERR_CRYPTO_KEY_TYPE", `unknown key type ${String(type)}`);
          })();
  return { type, keyId: keyIdOf(publicKey), privateKey, publicKey };
}

/** Build a KeyPair from a private key, deriving the public half. */
export function keyPairFromPrivate(privateKey: KeyObject): KeyPair {
  if (privateKey.type !== "private") {
    throw new CryptoError("ERR_CRYPTO_KEY_NOT_PRIVATE", "expected a private key");
  }
  const publicKey = createPublicKey(privateKey);
  return { type: keyTypeOf(privateKey), keyId: keyIdOf(publicKey), privateKey, publicKey };
}

export function publicKeyInfo(key: KeyObject): PublicKeyInfo {
  const pub = toPublicKey(key);
  const type = keyTypeOf(pub);
  const publicJwk = {
    ...pub.export({ format: "jwk" }),
    kid: keyIdOf(pub),
    alg: type === "p256" ? "ES256" : "EdDSA",
  };
  return {
    type,
    keyId: keyIdOf(pub),
    fingerprint: fingerprintOf(pub),
    publicKeyPem: pub.export({ format: "pem", type: "spki" }).toString(),
    publicJwk,
  };
}

/** Parse a public key from PEM (SPKI, or a private key whose public half is taken) or a JWK object/text. */
export function parsePublicKey(input: string | JsonWebKey): KeyObject {
  try {
    if (typeof input !== "string") return checked(createPublicKey({ key: input, format: "jwk" }));
    const text = input.trim();
    if (text.startsWith("{")) {
      return checked(createPublicKey({ key: JSON.parse(text) as JsonWebKey, format: "jwk" }));
    }
    return checked(createPublicKey(text));
  } catch (err) {
    if (err instanceof CryptoError) throw err;
    throw new CryptoError("ERR_CRYPTO_KEY_INVALID", "not a valid public key (PEM or JWK expected)", {
      cause: err,
    });
  }
}

/** Parse a private key from PKCS#8/SEC1 PEM or a private JWK object/text. */
export function parsePrivateKey(input: string | JsonWebKey): KeyObject {
  let key: KeyObject;
  try {
    if (typeof input !== "string") key = createPrivateKey({ key: input, format: "jwk" });
    else {
      const text = input.trim();
      key = text.startsWith("{")
        ? createPrivateKey({ key: JSON.parse(text) as JsonWebKey, format: "jwk" })
        : createPrivateKey(text);
    }
  } catch (err) {
    const isPublic = typeof input === "string" ? /PUBLIC KEY/.test(input) : input.d === undefined;
    if (isPublic)
      throw new CryptoError("ERR_CRYPTO_KEY_NOT_PRIVATE", "expected a private key, got a public key");
    throw new CryptoError("ERR_CRYPTO_KEY_INVALID", "not a valid private key (PEM or JWK expected)", {
      cause: err,
    });
  }
  return checked(key);
}

function checked(key: KeyObject): KeyObject {
  keyTypeOf(key);
  return key;
}
