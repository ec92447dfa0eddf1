// Sealing and opening inter-agent messages (OATS §10.2). seal: an ephemeral X25519 key
// agreement with the recipient's key, HKDF-SHA256 (salt: the nonce; info: version,
// sender, recipient) into an AES-256-GCM key; the canonical header is the additional
// data; the sender's Ed25519 key signs GATE's signing input over header and ciphertext.
// open checks, in order: downgrade, shape, recipient, sender identity and key, signature,
// time window, decryption, and last the nonce (only an authentic message may spend one).
import {
  createCipheriv,
  createDecipheriv,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from "node:crypto";
import {
  canonicalBytes,
  isoTime,
  type JsonValue,
  MessagingError,
  newNonce,
  parseStrictJson,
  uuidv7,
} from "../contracts/index.js";
import { sign, verify } from "../crypto/index.js";
import type { IdentityDirectory, MessagingIdentity, MessagingKeys } from "./identity.js";
import { rawX25519, x25519FromRaw } from "./identity.js";
import type { ClaimResult, NonceStore, SyncNonceStore } from "./nonce-store.js";
import {
  headerAad,
  MAX_PAYLOAD_BYTES,
  type MessageHeader,
  type PayloadType,
  type Primitive,
  parseSealed,
  type SealedMessage,
  signingInput,
  WIRE_VERSION,
} from "./wire.js";

export const DEFAULT_TTL_MS = 60_000;
export const DEFAULT_SKEW_MS = 30_000;
/** The longest validity a message may claim (a longer one is refused as expired-by-design). */
export const MAX_TTL_MS = 15 * 60_000;

export interface SealInput {
  recipient: string;
  primitive: Primitive;
  payloadType: PayloadType;
  payload: JsonValue;
  taskId?: string;
  runId?: string;
  depth?: number;
  ttlMs?: number;
}

function aeadKey(shared: Buffer, h: MessageHeader): Buffer {
  const info = canonicalBytes({ v: WIRE_VERSION, sender: h.sender, recipient: h.recipient, epk: h.epk });
  return Buffer.from(hkdfSync("sha256", shared, Buffer.from(h.nonce, "base64url"), info, 32));
}

/** Seals `input` from `sender` for `recipient` (whose public keys come from the directory). */
export function seal(
  input: SealInput,
  sender: MessagingKeys,
  recipient: MessagingIdentity,
  now: number,
): SealedMessage {
  const plaintext = canonicalBytes(input.payload);
  if (plaintext.length > MAX_PAYLOAD_BYTES)
    throw new MessagingError("ERR_MESSAGE_MALFORMED", `payload larger than ${MAX_PAYLOAD_BYTES} bytes`);
  // What the recipient's strict parser would refuse (a "__proto__" key, …) is refused here,
  // never sealed into a message nobody can open.
  try {
    parseStrictJson(plaintext.toString("utf8"), { maxLength: MAX_PAYLOAD_BYTES });
  } catch {
    throw new MessagingError("ERR_MESSAGE_MALFORMED", "the payload is not strict JSON");
  }
  if (recipient.id !== input.recipient)
    throw new MessagingError("ERR_MESSAGE_WRONG_RECIPIENT", "the recipient's keys are another identity's");
  const eph = generateKeyPairSync("x25519");
  const ttl = Math.min(input.ttlMs ?? DEFAULT_TTL_MS, MAX_TTL_MS);
  const header: MessageHeader = {
    message_id: uuidv7(now),
    sender: sender.id,
    recipient: input.recipient,
    primitive: input.primitive,
    payload_type: input.payloadType,
    task_id: input.taskId ?? uuidv7(now),
    ...(input.runId !== undefined ? { run_id: input.runId } : {}),
    depth: input.depth ?? 0,
    nonce: newNonce(),
    time: isoTime(now),
    expires_at: isoTime(now + ttl),
    key_id: sender.keyId,
    epk: rawX25519(eph.publicKey).toString("base64url"),
  };
  const key = aeadKey(diffieHellman({ privateKey: eph.privateKey, publicKey: recipient.agreement }), header);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(headerAad(header));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  const body = {
    iv: iv.toString("base64url"),
    ciphertext: ct.toString("base64url"),
    tag: cipher.getAuthTag().toString("base64url"),
  };
  const signature = sign(sender.signingPrivate, signingInput(header, body)).toString("base64url");
  // Parsed back: what seal returns is exactly what open accepts (sizes, encodings).
  return parseSealed({
    v: WIRE_VERSION,
    alg: "EdDSA+X25519-HKDF-SHA256-A256GCM",
    header,
    ...body,
    signature,
  });
}

export interface VerifyOptions {
  now: number;
  skewMs?: number;
}

/**
 * The checks the communication gate can make without the recipient's private key:
 * downgrade, shape, sender identity and key, signature, time window. Returns the parsed message.
 */
export function verifySealed(value: unknown, directory: IdentityDirectory, o: VerifyOptions): SealedMessage {
  const m = parseSealed(value);
  const h = m.header;
  const sender = directory.get(h.sender);
  if (sender === undefined)
    throw new MessagingError(
      "ERR_MESSAGE_SENDER_UNKNOWN",
      "the sender is not a registered messaging identity",
    );
  if (h.key_id !== sender.keyId)
    throw new MessagingError(
      "ERR_MESSAGE_SENDER_UNKNOWN",
      "the signing key is not the sender's registered key",
    );
  if (!verify(sender.signing, signingInput(h, m), Buffer.from(m.signature, "base64url")))
    throw new MessagingError("ERR_MESSAGE_TAMPERED", "the sender's signature does not verify");
  checkWindow(h, o);
  return m;
}

function checkWindow(h: MessageHeader, o: VerifyOptions): void {
  const skew = o.skewMs ?? DEFAULT_SKEW_MS;
  const time = Date.parse(h.time);
  const expires = Date.parse(h.expires_at);
  if (!(expires > time) || expires - time > MAX_TTL_MS)
    throw new MessagingError("ERR_MESSAGE_EXPIRED", "the message's validity window is invalid");
  if (o.now > expires + skew) throw new MessagingError("ERR_MESSAGE_EXPIRED", "the message has expired");
  if (time > o.now + skew)
    throw new MessagingError("ERR_MESSAGE_EXPIRED", "the message is dated in the future");
}

/** Until when a message's nonce must be remembered. */
export function nonceHorizon(h: MessageHeader, skewMs = DEFAULT_SKEW_MS): number {
  return Date.parse(h.expires_at) + skewMs;
}

/** The key a message's nonce is recorded under, in a scope (the gate, or one recipient). */
export const nonceKey = (scope: string, h: MessageHeader): string => `${scope}:${h.sender}:${h.nonce}`;

/** Throws the claim's refusal, coded; returns on "claimed". */
export function refuseUnclaimed(r: ClaimResult): void {
  if (r === "replayed") throw new MessagingError("ERR_MESSAGE_REPLAYED", "this message was seen before");
  if (r === "full")
    throw new MessagingError("ERR_MESSAGE_INBOX_FULL", "the nonce store is full of unexpired nonces");
}

export function claimNonce(store: SyncNonceStore, scope: string, h: MessageHeader, o: VerifyOptions): void {
  refuseUnclaimed(store.claim(nonceKey(scope, h), nonceHorizon(h, o.skewMs), o.now));
}

/** claimNonce over a store that may answer asynchronously (the gate's, maybe shared by replicas). */
export async function claimNonceAsync(
  store: NonceStore,
  scope: string,
  h: MessageHeader,
  o: VerifyOptions,
): Promise<void> {
  refuseUnclaimed(await store.claim(nonceKey(scope, h), nonceHorizon(h, o.skewMs), o.now));
}

export interface OpenOptions extends VerifyOptions {
  directory: IdentityDirectory;
  nonces: SyncNonceStore;
}

export interface Opened {
  header: MessageHeader;
  payload: JsonValue;
}

/** Opens a sealed message as `me`; every refusal is a coded MessagingError. */
export function open(value: unknown, me: MessagingKeys, o: OpenOptions): Opened {
  const pre = parseSealed(value);
  if (pre.header.recipient !== me.id)
    throw new MessagingError("ERR_MESSAGE_WRONG_RECIPIENT", "the message is sealed for another recipient");
  const m = verifySealed(value, o.directory, o);
  const h = m.header;
  let plaintext: Buffer;
  try {
    const epk = x25519FromRaw(Buffer.from(h.epk, "base64url"));
    const key = aeadKey(diffieHellman({ privateKey: me.agreementPrivate, publicKey: epk }), h);
    const d = createDecipheriv("aes-256-gcm", key, Buffer.from(m.iv, "base64url"));
    d.setAAD(headerAad(h));
    d.setAuthTag(Buffer.from(m.tag, "base64url"));
    plaintext = Buffer.concat([d.update(Buffer.from(m.ciphertext, "base64url")), d.final()]);
  } catch {
    throw new MessagingError("ERR_MESSAGE_TAMPERED", "the message does not decrypt");
  }
  let payload: JsonValue;
  try {
    payload = parseStrictJson(plaintext.toString("utf8"), { maxLength: MAX_PAYLOAD_BYTES }) as JsonValue;
  } catch {
    throw new MessagingError("ERR_MESSAGE_MALFORMED", "the payload is not JSON");
  }
  claimNonce(o.nonces, `open:${me.id}`, h, o);
  return { header: h, payload };
}

/** Opens the wire text (strict JSON) of a sealed message. */
export function openText(text: string, me: MessagingKeys, o: OpenOptions): Opened {
  let value: unknown;
  try {
    value = parseStrictJson(text, { maxLength: 4 * MAX_PAYLOAD_BYTES });
  } catch {
    throw new MessagingError("ERR_MESSAGE_MALFORMED", "the sealed message is not strict JSON");
  }
  return open(value, me, o);
}
