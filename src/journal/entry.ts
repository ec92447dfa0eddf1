// The journal entry: its fields, the exact bytes that are hashed and signed, and
// sealing (hash + Ed25519 signature). An independent verifier needs nothing but
// this file's rules and merkle.ts's, which docs/journal.md restates: hash = sha256
// over RFC 8785 canonical JSON of the entry without `hash` and `signature`;
// signature = Ed25519 over the canonical JSON of the entry without `signature`,
// base64url — or, in batch mode, a signature over the Merkle root of the entry's
// batch with the entry's inclusion proof (merkle.ts).
import * as nodeCrypto from "node:crypto";
import { createHash, type KeyObject, sign as nodeSign } from "node:crypto";
import { z } from "zod";
import { canonicalJson, SHA256_HASH_PATTERN, type Sha256Hash, TRACE_ID_PATTERN } from "../contracts/index.js";
import { MAX_SIGNATURE_LENGTH, parseBatchSignature } from "./merkle.js";

/** prev_hash of entry 1: `sha256:` followed by 64 zeros. */
export const GENESIS_HASH: Sha256Hash = `sha256:${"0".repeat(64)}`;

/** One journal entry as stored, exported and verified. Field names are wire names. */
export interface JournalEntry {
  seq: number;
  time: string;
  type: string;
  run_id: string | null;
  trace_id: string | null;
  body: Record<string, unknown>;
  prev_hash: Sha256Hash;
  hash: Sha256Hash;
  key_id: string;
  signature: string;
}

/** An entry with the canonical JSON text of its body, as stores persist it. */
export interface SealedEntry {
  entry: JournalEntry;
  bodyJson: string;
}

/** The head of a chain: enough to extend it or to compare it with a signed head. */
export interface JournalHead {
  seq: number;
  hash: Sha256Hash;
  time: string;
  key_id: string;
}

export const EVENT_TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/;
/** Printable ASCII without spaces: ids stay greppable and can never hide control characters. */
export const RUN_ID_PATTERN = /^[\x21-\x7e]{1,256}$/;
/** UTC with milliseconds, exactly what Date.prototype.toISOString writes. */
export const ENTRY_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** RFC 7638 thumbprint: 32 bytes of SHA-256, base64url without padding. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** A 64-byte Ed25519 signature, base64url without padding (entry mode, signed heads). */
export const ED25519_SIGNATURE_PATTERN = /^[A-Za-z0-9_-]{86}$/;
/**
 * An entry's signature: an Ed25519 signature (entry mode), or a batch signature
 * `mt1.<first_seq>.<size>.<signature>[.<path element>]*` (merkle.ts; the schema
 * also checks its number bounds with parseBatchSignature).
 */
export const SIGNATURE_PATTERN =
  /^(?:[A-Za-z0-9_-]{86}|mt1\.[1-9][0-9]{0,15}\.[1-9][0-9]{0,3}\.[A-Za-z0-9_-]{85}[AQgw](?:\.[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]){0,12})$/;

const hashString = z.string().regex(SHA256_HASH_PATTERN) as unknown as z.ZodType<Sha256Hash, string>;

/** The shape of an entry; bodies are checked separately against the event type registry. */
export const JournalEntrySchema = z.strictObject({
  seq: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  time: z.string().regex(ENTRY_TIME_PATTERN),
  type: z.string().regex(EVENT_TYPE_PATTERN),
  run_id: z.string().regex(RUN_ID_PATTERN).nullable(),
  trace_id: z.string().regex(TRACE_ID_PATTERN).nullable(),
  body: z.record(z.string(), z.unknown()),
  prev_hash: hashString,
  hash: hashString,
  key_id: z.string().regex(KEY_ID_PATTERN),
  signature: z
    .string()
    .max(MAX_SIGNATURE_LENGTH)
    .regex(SIGNATURE_PATTERN)
    .refine((s) => s.length === 86 || parseBatchSignature(s) !== null, "batch signature out of bounds"),
});

type Unsealed = Omit<JournalEntry, "hash" | "signature" | "body">;

const str = JSON.stringify;
const nullableStr = (s: string | null): string => (s === null ? "null" : str(s));

// The fields are restricted to ASCII patterns (checked by JournalEntrySchema or by
// the journal before sealing), for which JSON.stringify is exactly RFC 8785's
// string form, so the canonical text can be assembled without re-walking the body.
// Keys appear in RFC 8785 order: body, hash, key_id, prev_hash, run_id, seq,
// signature, time, trace_id, type.

/** Canonical JSON of the entry without `hash` and `signature`: the bytes that are hashed. */
export function hashedText(e: Unsealed, bodyJson: string): string {
  return (
    `{"body":${bodyJson},"key_id":${str(e.key_id)},"prev_hash":${str(e.prev_hash)},` +
    `"run_id":${nullableStr(e.run_id)},"seq":${e.seq},"time":${str(e.time)},` +
    `"trace_id":${nullableStr(e.trace_id)},"type":${str(e.type)}}`
  );
}

/** Canonical JSON of the entry without `signature`: the bytes that are signed. */
export function signedText(e: Unsealed & { hash: string }, bodyJson: string): string {
  return (
    `{"body":${bodyJson},"hash":${str(e.hash)},"key_id":${str(e.key_id)},"prev_hash":${str(e.prev_hash)},` +
    `"run_id":${nullableStr(e.run_id)},"seq":${e.seq},"time":${str(e.time)},` +
    `"trace_id":${nullableStr(e.trace_id)},"type":${str(e.type)}}`
  );
}

// crypto.hash (Node >= 20.12) is a one-shot digest at half the cost of a Hash
// object; the journal computes one per entry on the appending thread.
const oneShot = (nodeCrypto as { hash?: (alg: string, data: string, enc: "hex") => string }).hash;
const sha256Text: (s: string) => string =
  typeof oneShot === "function"
    ? (s) => oneShot("sha256", s, "hex")
    : (s) => createHash("sha256").update(s, "utf8").digest("hex");

// The hashed text is the body's text between a short head and tail: its UTF-8 bytes are
// written into one reused buffer and hashed there, instead of first joining a copy of the
// whole text (a string as long as the entry, per entry) that the hash then encodes again.
// Same bytes, same digest (tested); a text too large for the buffer is joined as before.
const oneShotBytes = oneShot as ((alg: string, data: Uint8Array, enc: "hex") => string) | undefined;
const SCRATCH_MAX = 1024 * 1024;
const BODY_HEAD = '{"body":';
let scratch: Buffer | null = null;

function hashedBytesDigest(e: Unsealed, bodyJson: string): string | null {
  if (oneShotBytes === undefined) return null;
  const tail =
    `,"key_id":${str(e.key_id)},"prev_hash":${str(e.prev_hash)},` +
    `"run_id":${nullableStr(e.run_id)},"seq":${e.seq},"time":${str(e.time)},` +
    `"trace_id":${nullableStr(e.trace_id)},"type":${str(e.type)}}`;
  // At most 3 UTF-8 bytes per UTF-16 code unit.
  const max = 3 * (BODY_HEAD.length + bodyJson.length + tail.length);
  if (max > SCRATCH_MAX) return null;
  if (scratch === null || scratch.length < max)
    scratch = Buffer.allocUnsafeSlow(Math.max(16 * 1024, 2 ** Math.ceil(Math.log2(max))));
  let at = scratch.write(BODY_HEAD, 0, "utf8");
  at += scratch.write(bodyJson, at, "utf8");
  at += scratch.write(tail, at, "utf8");
  return oneShotBytes("sha256", scratch.subarray(0, at), "hex");
}

export function entryHash(e: Unsealed, bodyJson: string): Sha256Hash {
  return `sha256:${hashedBytesDigest(e, bodyJson) ?? sha256Text(hashedText(e, bodyJson))}`;
}

/**
 * The hash of an entry and the text its signature covers, in one pass: the two
 * texts share everything but the `hash` member, so the pieces are built once.
 * Equal to entryHash() and signedText() (tested).
 */
export function hashAndSignedText(e: Unsealed, bodyJson: string): { hash: Sha256Hash; signed: string } {
  const head = `{"body":${bodyJson},`;
  const tail =
    `"key_id":${str(e.key_id)},"prev_hash":${str(e.prev_hash)},` +
    `"run_id":${nullableStr(e.run_id)},"seq":${e.seq},"time":${str(e.time)},` +
    `"trace_id":${nullableStr(e.trace_id)},"type":${str(e.type)}}`;
  const hash: Sha256Hash = `sha256:${sha256Text(head + tail)}`;
  return { hash, signed: `${head}"hash":"${hash}",${tail}` };
}

/** Hashes and signs an entry whose fields are already validated. */
export function sealEntry(
  fields: Unsealed,
  body: Record<string, unknown>,
  bodyJson: string,
  privateKey: KeyObject,
): SealedEntry {
  const hash = entryHash(fields, bodyJson);
  const signature = nodeSign(
    null,
    Buffer.from(signedText({ ...fields, hash }, bodyJson), "utf8"),
    privateKey,
  ).toString("base64url");
  return {
    entry: {
      seq: fields.seq,
      time: fields.time,
      type: fields.type,
      run_id: fields.run_id,
      trace_id: fields.trace_id,
      body,
      prev_hash: fields.prev_hash,
      hash,
      key_id: fields.key_id,
      signature,
    },
    bodyJson,
  };
}

/** The canonical JSON line of a whole entry (the JSONL export format). */
export function entryJson(e: JournalEntry): string {
  return canonicalJson(e);
}
