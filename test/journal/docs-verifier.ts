// An independent verifier, written from docs/journal.md alone (§1 entry format, §1.1
// batch signatures, "Keys and rotation", §2 order of checks and signed heads, §2.1
// batch-signed entries, §8 segment format). It imports nothing from src/: only
// node:crypto. test/journal/segment-verifier.test.ts checks that it agrees with
// `warden journal verify` on real journals and tampered copies.
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export type Verdict = { ok: true; checked: number } | { ok: false; seq: number; reason: string };
export interface Batch {
  payloads: Buffer[];
}
export interface Head {
  seq: number;
  hash: string;
  key_id: string;
  signature: string;
  [k: string]: unknown;
}

export const H = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();

/** RFC 8785 for the values JSON.parse gives (finite numbers, plain objects). */
export function jcs(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(o[k])}`)
    .join(",")}}`;
}

const MAGIC: Record<string, 1 | 2> = { "WJSEG01\n": 1, "WJSEG02\n": 2 };

/**
 * §8.2, format 2: what the commit record's sha256 covers — per entry, its hash (the 64
 * hex digits after the last `,"hash":"sha256:`) as 32 bytes, its signature's length
 * (u16) and the signature (from after the last `,"signature":"` to the next `"`); null
 * when a payload holds no such members.
 */
export function commitInput(payloads: Buffer[]): Buffer | null {
  const parts: Buffer[] = [];
  for (const p of payloads) {
    const h = p.lastIndexOf(',"hash":"sha256:');
    const hex = h < 0 ? "" : p.toString("latin1", h + 16, h + 80);
    const s = p.lastIndexOf(',"signature":"');
    const e = s < 0 ? -1 : p.indexOf('"', s + 14);
    if (!/^[0-9a-f]{64}$/.test(hex) || p[h + 80] !== 0x22 || s < h + 81 || e < 0) return null;
    const len = Buffer.alloc(2);
    len.writeUInt16BE(e - s - 14);
    parts.push(Buffer.from(hex, "hex"), len, p.subarray(s + 14, e));
  }
  return Buffer.concat(parts);
}

/** §8.1–8.2: the batches of one segment file and its format; `broken` where the framing is. */
export function readBatches(
  buf: Buffer,
  firstSeq: number,
): { batches: Batch[]; broken: boolean; version: 1 | 2 } {
  const batches: Batch[] = [];
  const version = MAGIC[buf.subarray(0, 8).toString("latin1")];
  if (version === undefined || buf.length < 16 || buf.readBigUInt64BE(8) !== BigInt(firstSeq)) {
    return { batches, broken: true, version: 2 };
  }
  let at = 16;
  while (at < buf.length) {
    const start = at;
    const payloads: Buffer[] = [];
    while (at + 5 <= buf.length && buf[at] === 0x45) {
      const len = buf.readUInt32BE(at + 1);
      payloads.push(buf.subarray(at + 5, at + 5 + len));
      at += 5 + len;
    }
    const covered = version === 1 ? buf.subarray(start, at) : commitInput(payloads);
    const ok =
      covered !== null &&
      at + 53 <= buf.length &&
      buf[at] === 0x43 &&
      buf.readUInt32BE(at + 1) === 48 &&
      buf.readUInt32BE(at + 13) === payloads.length &&
      buf.readUInt32BE(at + 17) === at - start &&
      H(covered).equals(buf.subarray(at + 21, at + 53));
    if (!ok || payloads.length === 0) return { batches, broken: true, version };
    batches.push({ payloads });
    at += 53;
  }
  return { batches, broken: false, version };
}

/** §1: RFC 7638 thumbprint of an Ed25519 public key. */
export function keyIdOf(pub: KeyObject): string {
  const { x } = pub.export({ format: "jwk" }) as { x: string };
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}

const BATCH_RE = /^mt1\.([1-9][0-9]*)\.([1-9][0-9]*)\.([A-Za-z0-9_-]{86})((?:\.[A-Za-z0-9_-]{43})*)$/;

/** §2.1 step 3: the root a leaf's path folds to in a tree of `n` leaves, or null. */
export function fold(leaf: Buffer, index: number, n: number, path: Buffer[]): Buffer | null {
  if (index < 0 || index >= n) return null;
  let fn = index;
  let sn = n - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = H(Buffer.from([1]), p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) [fn, sn] = [fn >> 1, sn >> 1];
    } else r = H(Buffer.from([1]), r, p);
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 ? r : null;
}

type Entry = Record<string, unknown> & { seq: number; hash: string; key_id: string; signature: string };
interface Open {
  first: number;
  size: number;
  sig: string;
}

/** The walk of §2 over the entries of a journal, against a keyring and an optional signed head. */
class Walk {
  n = 1;
  prev = `sha256:${"0".repeat(64)}`;
  current: string | null = null;
  open: Open | null = null;
  verified = new Set<string>();
  hashes = new Map<number, string>();
  readonly trusted = new Map<string, KeyObject>();

  constructor(keyring: KeyObject[]) {
    for (const k of keyring) this.trusted.set(keyIdOf(k), k);
  }

  /** One entry; a failure reason, or null. */
  step(e: Entry): string | null {
    if (e.seq !== this.n) return "seq_gap";
    if (e.prev_hash !== this.prev) return "chain_broken";
    const key = this.trusted.get(e.key_id);
    if (key === undefined || (this.current !== null && e.key_id !== this.current)) return "unknown_key";
    const { hash, signature, ...hashed } = e;
    if (hash !== `sha256:${createHash("sha256").update(jcs(hashed)).digest("hex")}`) return "hash_mismatch";
    const rotation = e.type === "warden.journal.key_rotated";
    const bad = signature.startsWith("mt1.") ? this.batch(e, key, rotation) : this.single(e, key);
    if (bad !== null) return bad;
    if (rotation) {
      const b = e.body as {
        previous_key_id: string;
        new_key_id: string;
        new_public_key: Record<string, string>;
      };
      const next = createPublicKey({ key: b.new_public_key, format: "jwk" });
      if (b.previous_key_id !== e.key_id || keyIdOf(next) !== b.new_key_id) return "schema_invalid";
      this.trusted.set(b.new_key_id, next);
      this.current = b.new_key_id;
    } else this.current = e.key_id;
    this.hashes.set(this.n, hash);
    this.prev = hash;
    this.n++;
    return null;
  }

  single(e: Entry, key: KeyObject): string | null {
    if (this.open !== null) return "signature_invalid";
    const { signature, ...signed } = e;
    const sig = Buffer.from(signature, "base64url");
    if (sig.toString("base64url") !== signature) return "signature_invalid";
    return verify(null, Buffer.from(jcs(signed)), key, sig) ? null : "signature_invalid";
  }

  batch(e: Entry, key: KeyObject, rotation: boolean): string | null {
    const m = BATCH_RE.exec(e.signature);
    if (m === null) return "schema_invalid";
    const [first, size, sig] = [Number(m[1]), Number(m[2]), m[3]!];
    const path = m[4]!
      .split(".")
      .slice(1)
      .map((p) => Buffer.from(p, "base64url"));
    const i = e.seq - first;
    if (this.open !== null) {
      if (this.open.first !== first || this.open.size !== size || this.open.sig !== sig)
        return "signature_invalid";
    } else if (i !== 0) return "signature_invalid";
    const leaf = H(Buffer.from([0]), Buffer.from(e.hash.slice(7), "hex"));
    const root = fold(leaf, i, size, path);
    if (root === null) return "signature_invalid";
    const message = jcs({
      alg: "warden.journal.batch.v1",
      first_seq: first,
      key_id: e.key_id,
      root: `sha256:${root.toString("hex")}`,
      size,
    });
    if (!this.verified.has(`${message}\n${sig}`)) {
      if (!verify(null, Buffer.from(message), key, Buffer.from(sig, "base64url"))) return "signature_invalid";
      this.verified.add(`${message}\n${sig}`);
    }
    const closes = i === size - 1;
    if (rotation && !closes) return "signature_invalid";
    this.open = closes ? null : { first, size, sig };
    return null;
  }
}

/** §1, §1.1, §2, §2.1, §8.4 over a segments directory, with a keyring and an optional signed head. */
export function independentVerify(dir: string, keyring: KeyObject[], head?: Head): Verdict {
  const names = readdirSync(dir)
    .filter((f) => /^\d{20}\.wjs$/.test(f))
    .sort();
  const w = new Walk(keyring);
  for (const name of names) {
    const { batches, broken } = readBatches(readFileSync(join(dir, name)), Number(name.slice(0, 20)));
    for (const b of batches) {
      for (const p of b.payloads) {
        const reason = w.step(JSON.parse(p.toString("utf8")) as Entry);
        if (reason !== null) return { ok: false, seq: w.n, reason };
      }
    }
    if (broken) return { ok: false, seq: w.n, reason: "schema_invalid" };
  }
  if (w.open !== null) return { ok: false, seq: w.n, reason: "truncated" };
  if (head !== undefined) {
    const { signature, ...unsigned } = head;
    const key = w.trusted.get(head.key_id);
    if (
      key === undefined ||
      !verify(null, Buffer.from(jcs(unsigned)), key, Buffer.from(signature, "base64url"))
    ) {
      return { ok: false, seq: w.n, reason: "head_invalid" };
    }
    if (head.seq > w.n - 1) return { ok: false, seq: w.n, reason: "truncated" };
    if (w.hashes.get(head.seq) !== head.hash) return { ok: false, seq: head.seq, reason: "head_mismatch" };
  }
  return { ok: true, checked: w.n - 1 };
}

/** Re-encodes batches per §8.2 (an attacker who knows the format fixes the commit records). */
export function encodeSegment(firstSeq: number, batches: Batch[], version: 1 | 2 = 2): Buffer {
  const header = Buffer.alloc(16);
  header.write(`WJSEG0${version}\n`, 0, "latin1");
  header.writeBigUInt64BE(BigInt(firstSeq), 8);
  const parts = [header];
  for (const b of batches) {
    const recs = Buffer.concat(
      b.payloads.flatMap((p) => {
        const f = Buffer.alloc(5);
        f[0] = 0x45;
        f.writeUInt32BE(p.length, 1);
        return [f, p];
      }),
    );
    const c = Buffer.alloc(53);
    c[0] = 0x43;
    c.writeUInt32BE(48, 1);
    const first = JSON.parse(b.payloads[0]!.toString()).seq as number;
    c.writeBigUInt64BE(BigInt(first), 5);
    c.writeUInt32BE(b.payloads.length, 13);
    c.writeUInt32BE(recs.length, 17);
    const covered = version === 1 ? recs : commitInput(b.payloads);
    // A payload without those members can make no batch complete (§8.2): any digest will do.
    H(covered ?? Buffer.alloc(0)).copy(c, 21);
    parts.push(recs, c);
  }
  return Buffer.concat(parts);
}
