// The commit record's SHA-256 in segment format 2 (docs/journal.md §8.2): over each
// entry of the batch, in order, its hash as 32 bytes, then its signature's length as
// a u16 and the signature's ASCII bytes. An entry's hash already covers its body, so a
// batch costs one SHA-256 pass per body (the entry hash) where format 1 took two (the
// entry hash, then the commit hash over the records' bytes); the commit record still
// tells a batch whose records are all there, hashes and signatures intact, from one a
// crash tore. A reader finds the two members in a payload by the last occurrence of
// their marks (nothing after the body can hold either), without parsing the body.
import { createHash } from "node:crypto";
import type { SealedEntry } from "./entry.js";

/** What precedes an entry's 64 hex digits of hash in its payload. */
export const HASH_MARK = Buffer.from(',"hash":"sha256:', "latin1");
/** What precedes an entry's signature in its payload. */
export const SIGNATURE_MARK = Buffer.from(',"signature":"', "latin1");
const QUOTE = 0x22;
const HEX64 = /^[0-9a-f]{64}$/;

/** The format-2 commit digest of a batch about to be written. */
export function commitDigestOfSealed(sealed: readonly SealedEntry[]): Buffer {
  let size = 0;
  for (let i = 0; i < sealed.length; i++) size += 34 + sealed[i]!.entry.signature.length;
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < sealed.length; i++) {
    const e = sealed[i]!.entry;
    buf.write(e.hash.substring(7), at, "hex");
    const sig = e.signature;
    buf.writeUInt16BE(sig.length, at + 32);
    at += 34;
    at += buf.write(sig, at, "latin1");
  }
  return createHash("sha256").update(buf.subarray(0, at)).digest();
}

/** Where an entry payload's hash digits and signature are. */
export interface PayloadMarks {
  /** Offset of HASH_MARK (the body ends here). */
  hashAt: number;
  /** The signature: [sigStart, sigEnd). */
  sigStart: number;
  sigEnd: number;
}

/** The marks of a payload, or why it has none (a torn or foreign record). */
export function payloadMarks(p: Buffer): PayloadMarks | string {
  const hashAt = p.lastIndexOf(HASH_MARK);
  if (hashAt < 0) return "holds no hash member";
  const digits = hashAt + HASH_MARK.length;
  if (p[digits + 64] !== QUOTE || !HEX64.test(p.toString("latin1", digits, digits + 64))) {
    return "has a malformed hash member";
  }
  const s = p.lastIndexOf(SIGNATURE_MARK);
  if (s < digits + 65) return "holds no signature member after its hash";
  const sigStart = s + SIGNATURE_MARK.length;
  const sigEnd = p.indexOf(QUOTE, sigStart);
  if (sigEnd < 0 || sigEnd - sigStart > 0xffff) return "has a malformed signature member";
  return { hashAt, sigStart, sigEnd };
}

/** The format-2 commit digest of a batch read back, or why one of its payloads has none. */
export function commitDigestOfPayloads(payloads: readonly Buffer[]): Buffer | string {
  const marks: PayloadMarks[] = [];
  let size = 0;
  for (let i = 0; i < payloads.length; i++) {
    const m = payloadMarks(payloads[i]!);
    if (typeof m === "string") return `entry ${i + 1} of the batch ${m}`;
    marks.push(m);
    size += 34 + m.sigEnd - m.sigStart;
  }
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < payloads.length; i++) {
    const p = payloads[i]!;
    const m = marks[i]!;
    const digits = m.hashAt + HASH_MARK.length;
    buf.write(p.toString("latin1", digits, digits + 64), at, "hex");
    buf.writeUInt16BE(m.sigEnd - m.sigStart, at + 32);
    at += 34;
    at += p.copy(buf, at, m.sigStart, m.sigEnd);
  }
  return createHash("sha256").update(buf).digest();
}

/**
 * Whether a payload's bytes hash to its own hash member: the SHA-256 of the payload
 * without its `hash` and `signature` members — the text §1 hashes, as the payload is
 * canonical. Used on a writer's open for the last batch of the journal, the one batch
 * a crash can leave with its commit record written and a page of its bodies not.
 */
export function payloadHashMatches(p: Buffer): boolean {
  const m = payloadMarks(p);
  if (typeof m === "string") return false;
  const digits = m.hashAt + HASH_MARK.length;
  const sigMember = m.sigStart - SIGNATURE_MARK.length;
  const h = createHash("sha256")
    .update(p.subarray(0, m.hashAt))
    .update(p.subarray(digits + 65, sigMember))
    .update(p.subarray(m.sigEnd + 1))
    .digest("hex");
  return h === p.toString("latin1", digits, digits + 64);
}
