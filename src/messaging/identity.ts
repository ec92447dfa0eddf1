// Messaging identities: every agent that sends or receives governed messages has an
// Ed25519 signing key (authenticity) and an X25519 agreement key (confidentiality).
// The directory holds the public halves by principal id; a sender's key is always
// resolved from it, never taken from the message. Private halves stay with their agent.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { MessagingError } from "../contracts/index.js";
import { generateKeyPair, keyIdOf, parsePublicKey } from "../crypto/index.js";

/** What the directory knows of an agent: its public keys. */
export interface MessagingIdentity {
  id: string;
  /** Ed25519 public key that verifies the agent's message signatures. */
  signing: KeyObject;
  /** X25519 public key messages to the agent are encrypted for. */
  agreement: KeyObject;
  /** RFC 7638 thumbprint of the signing key (the `key_id` in envelopes). */
  keyId: string;
}

/** An agent's own keys (private halves included). */
export interface MessagingKeys extends MessagingIdentity {
  signingPrivate: KeyObject;
  agreementPrivate: KeyObject;
}

/** The public keys of an identity as PEM text (configuration files, the example). */
export interface MessagingIdentityPem {
  signing: string;
  agreement: string;
}

export function generateMessagingKeys(id: string): MessagingKeys {
  const s = generateKeyPair("ed25519");
  const a = generateKeyPairSync("x25519");
  return {
    id,
    signing: s.publicKey,
    agreement: a.publicKey,
    keyId: keyIdOf(s.publicKey),
    signingPrivate: s.privateKey,
    agreementPrivate: a.privateKey,
  };
}

/** PEM texts of the private halves, for an agent that keeps its keys in files. */
export function exportMessagingKeys(k: MessagingKeys): MessagingIdentityPem {
  return {
    signing: k.signingPrivate.export({ format: "pem", type: "pkcs8" }).toString(),
    agreement: k.agreementPrivate.export({ format: "pem", type: "pkcs8" }).toString(),
  };
}

export function importMessagingKeys(id: string, pem: MessagingIdentityPem): MessagingKeys {
  const signingPrivate = createPrivateKey(pem.signing);
  const agreementPrivate = createPrivateKey(pem.agreement);
  if (signingPrivate.asymmetricKeyType !== "ed25519" || agreementPrivate.asymmetricKeyType !== "x25519")
    throw new MessagingError("ERR_MESSAGE_SENDER_UNKNOWN", "messaging keys must be Ed25519 and X25519");
  const signing = createPublicKey(signingPrivate);
  return {
    id,
    signing,
    agreement: createPublicKey(agreementPrivate),
    keyId: keyIdOf(signing),
    signingPrivate,
    agreementPrivate,
  };
}

export function publicPem(k: MessagingIdentity): MessagingIdentityPem {
  return {
    signing: k.signing.export({ format: "pem", type: "spki" }).toString(),
    agreement: k.agreement.export({ format: "pem", type: "spki" }).toString(),
  };
}

/** A raw X25519 public key's 32 bytes. */
export function rawX25519(key: KeyObject): Buffer {
  const jwk = key.export({ format: "jwk" });
  if (jwk.crv !== "X25519" || typeof jwk.x !== "string")
    throw new MessagingError("ERR_MESSAGE_MALFORMED", "not an X25519 public key");
  return Buffer.from(jwk.x, "base64url");
}

export function x25519FromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 32) throw new MessagingError("ERR_MESSAGE_MALFORMED", "an X25519 key is 32 bytes");
  return createPublicKey({ key: { kty: "OKP", crv: "X25519", x: raw.toString("base64url") }, format: "jwk" });
}

/** Public identities by principal id. Registration is explicit and never silently replaces a key. */
export class IdentityDirectory {
  readonly #byId = new Map<string, MessagingIdentity>();

  register(id: string, keys: { signing: KeyObject; agreement: KeyObject }): MessagingIdentity {
    if (this.#byId.has(id))
      throw new MessagingError("ERR_MESSAGE_FORBIDDEN", `messaging identity ${id} is already registered`);
    if (keys.signing.asymmetricKeyType !== "ed25519" || keys.agreement.asymmetricKeyType !== "x25519")
      throw new MessagingError("ERR_MESSAGE_SENDER_UNKNOWN", "messaging keys must be Ed25519 and X25519");
    const signing = keys.signing.type === "private" ? createPublicKey(keys.signing) : keys.signing;
    const agreement = keys.agreement.type === "private" ? createPublicKey(keys.agreement) : keys.agreement;
    const identity = { id, signing, agreement, keyId: keyIdOf(signing) };
    this.#byId.set(id, identity);
    return identity;
  }

  /** Registers from PEM public keys (the runtime configuration's `messaging.identities`). */
  registerPem(id: string, pem: MessagingIdentityPem): MessagingIdentity {
    return this.register(id, {
      signing: parsePublicKey(pem.signing),
      agreement: createPublicKey(pem.agreement),
    });
  }

  get(id: string): MessagingIdentity | undefined {
    return this.#byId.get(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  ids(): string[] {
    return [...this.#byId.keys()].sort();
  }
}
