// An independent verifier, written from docs/journal.md alone (§1 entry format, §2
// order of checks and signed heads, §8 segment format): it imports nothing from
// src/journal. It must agree with `warden journal verify` (the real CLI, in a child
// process) on a real journal and on tampered copies — a body byte (raw, and re-framed
// so the commit record matches), a deleted entry, swapped entries, a replaced
// signature, and a tail cut off against a signed head.
import { execFileSync } from "node:child_process";
import { createHash, type KeyObject, sign, verify } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { openJournal, SegmentJournalStore, signHead } from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { gateDecision, policyDecision, RUN, tempDir } from "./helpers.js";

// ---- the verifier, from the docs ------------------------------------------------
type Verdict = { ok: true; checked: number } | { ok: false; seq: number; reason: string };
interface Batch {
  payloads: Buffer[];
}

const H = (...parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest();

/** RFC 8785 for the values JSON.parse gives (finite numbers, plain objects). */
function jcs(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(o[k])}`)
    .join(",")}}`;
}

/** §8.1–8.2: the batches of one segment file; null where the framing is broken. */
function readBatches(buf: Buffer, firstSeq: number): { batches: Batch[]; broken: boolean } {
  const batches: Batch[] = [];
  if (buf.subarray(0, 8).toString("latin1") !== "WJSEG01\n" || buf.readBigUInt64BE(8) !== BigInt(firstSeq)) {
    return { batches, broken: true };
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
    const ok =
      at + 53 <= buf.length &&
      buf[at] === 0x43 &&
      buf.readUInt32BE(at + 1) === 48 &&
      buf.readUInt32BE(at + 13) === payloads.length &&
      buf.readUInt32BE(at + 17) === at - start &&
      H(buf.subarray(start, at)).equals(buf.subarray(at + 21, at + 53));
    if (!ok || payloads.length === 0) return { batches, broken: true };
    batches.push({ payloads });
    at += 53;
  }
  return { batches, broken: false };
}

function keyIdOf(pub: KeyObject): string {
  const { x } = pub.export({ format: "jwk" }) as { x: string };
  return createHash("sha256").update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest("base64url");
}

interface Head {
  seq: number;
  hash: string;
  signature: string;
  [k: string]: unknown;
}

/** §1, §2 (entry-mode signatures), §8.4, against one trusted key and an optional signed head. */
function independentVerify(dir: string, pub: KeyObject, head?: Head): Verdict {
  const kid = keyIdOf(pub);
  const names = readdirSync(dir)
    .filter((f) => /^\d{20}\.wjs$/.test(f))
    .sort();
  let n = 1;
  let prev = `sha256:${"0".repeat(64)}`;
  const hashes = new Map<number, string>();
  for (const name of names) {
    const { batches, broken } = readBatches(readFileSync(join(dir, name)), Number(name.slice(0, 20)));
    for (const b of batches) {
      for (const p of b.payloads) {
        const e = JSON.parse(p.toString("utf8")) as Record<string, unknown>;
        if (e.seq !== n) return { ok: false, seq: n, reason: "seq_gap" };
        if (e.prev_hash !== prev) return { ok: false, seq: n, reason: "chain_broken" };
        if (e.key_id !== kid) return { ok: false, seq: n, reason: "unknown_key" };
        const { hash, signature, ...hashed } = e;
        if (hash !== `sha256:${createHash("sha256").update(jcs(hashed)).digest("hex")}`) {
          return { ok: false, seq: n, reason: "hash_mismatch" };
        }
        const signed = Buffer.from(jcs({ ...hashed, hash }));
        if (!verify(null, signed, pub, Buffer.from(String(signature), "base64url"))) {
          return { ok: false, seq: n, reason: "signature_invalid" };
        }
        hashes.set(n, String(hash));
        prev = String(hash);
        n++;
      }
    }
    if (broken) return { ok: false, seq: n, reason: "schema_invalid" };
  }
  if (head !== undefined) {
    const { signature, ...unsigned } = head;
    if (!verify(null, Buffer.from(jcs(unsigned)), pub, Buffer.from(signature, "base64url"))) {
      return { ok: false, seq: n, reason: "head_invalid" };
    }
    if (head.seq > n - 1) return { ok: false, seq: n, reason: "truncated" };
    if (hashes.get(head.seq) !== head.hash) return { ok: false, seq: head.seq, reason: "head_mismatch" };
  }
  return { ok: true, checked: n - 1 };
}

/** Re-encodes batches per §8.2 (an attacker who knows the format fixes the commit records). */
function encodeSegment(firstSeq: number, batches: Batch[]): Buffer {
  const header = Buffer.alloc(16);
  header.write("WJSEG01\n", 0, "latin1");
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
    H(recs).copy(c, 21);
    parts.push(recs, c);
  }
  return Buffer.concat(parts);
}

// ---- the journal and the comparison ------------------------------------------------
const key = generateKeyPair("ed25519");
const other = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let pubFile: string;
let real: string;

beforeAll(async () => {
  t = tempDir("warden-indep-");
  pubFile = saveKeyPair(key, t.dir).publicPem;
  const path = join(t.dir, "real.db");
  const store = SegmentJournalStore.open(path, { segmentBytes: 8192 });
  const j = await openJournal({ store, signer: key });
  for (let round = 0; round < 8; round++) {
    await Promise.all(
      Array.from({ length: 1 + (round % 4) }, (_, i) =>
        i % 2 === 0
          ? j.append({
              type: "dare.policy.decision",
              run_id: RUN,
              body: policyDecision(i % 3 ? "allow" : "deny"),
            })
          : j.append({ type: "warden.gate.decision", run_id: RUN, body: gateDecision() }),
      ),
    );
  }
  await j.close();
  await store.close();
  real = `${path}.segments`;
}, 60_000);
afterAll(() => t.cleanup());

function warden(dir: string, head?: Head): Verdict {
  const args = [
    resolve(REPO_ROOT, "bin/warden.js"),
    "journal",
    "verify",
    "--db",
    dir,
    "--keys",
    pubFile,
    "--json",
  ];
  if (head !== undefined) {
    const f = join(t.dir, `head-${Math.random()}.json`);
    writeFileSync(f, JSON.stringify(head));
    args.push("--expect-head", f);
  }
  let out: string;
  try {
    out = execFileSync(process.execPath, args, { encoding: "utf8" });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  const r = JSON.parse(out) as { ok: boolean; checked: number; failure?: { seq: number; reason: string } };
  return r.ok
    ? { ok: true, checked: r.checked }
    : { ok: false, seq: r.failure!.seq, reason: r.failure!.reason };
}

/** A copy of the real journal's segments with `edit` applied to the parsed batches of each file. */
function tampered(
  name: string,
  edit: (all: { file: string; first: number; batches: Batch[] }[]) => void,
): string {
  const dir = join(t.dir, `${name}.segments`);
  mkdirSync(dir);
  const files = readdirSync(real)
    .filter((f) => f.endsWith(".wjs"))
    .sort()
    .map((file) => {
      const first = Number(file.slice(0, 20));
      return { file, first, batches: readBatches(readFileSync(join(real, file)), first).batches };
    });
  edit(files);
  for (const f of files) writeFileSync(join(dir, f.file), encodeSegment(f.first, f.batches));
  return dir;
}

const pub = () => key.publicKey;
const flat = (files: { batches: Batch[] }[]) => files.flatMap((f) => f.batches);

describe("an independent verifier written from docs/journal.md agrees with warden journal verify", () => {
  it("on the real journal: intact, same number of entries", () => {
    const mine = independentVerify(real, pub());
    expect(mine).toMatchObject({ ok: true });
    expect(warden(real)).toEqual(mine);
    expect(readdirSync(real).filter((f) => f.endsWith(".wjs")).length).toBeGreaterThan(1);
  });

  it("a body byte changed in place (commit record left as it was): both fail at the altered batch", () => {
    const dir = join(t.dir, "rawbyte.segments");
    cpSync(real, dir, { recursive: true });
    const seg = readdirSync(dir).find((f) => f.endsWith(".wjs"))!;
    const buf = readFileSync(join(dir, seg));
    const at = buf.indexOf('"decision":"allow"', 200) + 13;
    buf[at] = "A".charCodeAt(0);
    writeFileSync(join(dir, seg), buf);
    const mine = independentVerify(dir, pub());
    expect(mine).toMatchObject({ ok: false });
    expect(warden(dir)).toEqual(mine);
  });

  it("a body byte changed and the commit record recomputed: both name the entry (hash_mismatch)", () => {
    const dir = tampered("body", (files) => {
      const b = flat(files)
        .slice(2)
        .find((x) => x.payloads.some((p) => p.includes('"deny"')))!;
      const i = b.payloads.findIndex((p) => p.includes('"deny"'));
      b.payloads[i] = Buffer.from(b.payloads[i]!.toString().replace('"deny"', '"allow"'));
    });
    const mine = independentVerify(dir, pub());
    expect(mine).toMatchObject({ ok: false, reason: "hash_mismatch" });
    expect(warden(dir)).toEqual(mine);
  });

  it("an entry deleted (its batch re-framed): both fail at its seq", () => {
    const dir = tampered("deleted", (files) => {
      const b = flat(files).find((x) => x.payloads.length > 2)!;
      b.payloads.splice(1, 1);
    });
    const mine = independentVerify(dir, pub());
    expect(mine).toMatchObject({ ok: false, reason: "seq_gap" });
    expect(warden(dir)).toEqual(mine);
  });

  it("two entries swapped: both fail at the first of them", () => {
    const dir = tampered("swapped", (files) => {
      const b = flat(files).find((x) => x.payloads.length > 2)!;
      [b.payloads[0], b.payloads[1]] = [b.payloads[1]!, b.payloads[0]!];
    });
    const mine = independentVerify(dir, pub());
    expect(mine).toMatchObject({ ok: false, reason: "seq_gap" });
    expect(warden(dir)).toEqual(mine);
  });

  it("a signature replaced by another key's signature over the same text: both fail at that entry", () => {
    const dir = tampered("resigned", (files) => {
      const b = flat(files)[3]!;
      const e = JSON.parse(b.payloads[0]!.toString()) as Record<string, unknown>;
      const { signature: _old, ...unsigned } = e;
      const forged = sign(null, Buffer.from(jcs(unsigned)), other.privateKey).toString("base64url");
      b.payloads[0] = Buffer.from(jcs({ ...unsigned, signature: forged }));
    });
    const mine = independentVerify(dir, pub());
    expect(mine).toMatchObject({ ok: false, reason: "signature_invalid" });
    expect(warden(dir)).toEqual(mine);
  });

  it("the tail cut off (whole batches, framing intact) against a signed head: both report truncated", () => {
    const segs = readdirSync(real)
      .filter((f) => f.endsWith(".wjs"))
      .sort();
    const lastSeg = segs.at(-1)!;
    const lastBatch = readBatches(readFileSync(join(real, lastSeg)), Number(lastSeg.slice(0, 20))).batches.at(
      -1,
    )!;
    const lastEntry = JSON.parse(lastBatch.payloads.at(-1)!.toString()) as {
      seq: number;
      hash: `sha256:${string}`;
      time: string;
      key_id: string;
    };
    const head = signHead(lastEntry, key) as unknown as Head;
    // The head itself, on the untouched journal, is reached by both.
    expect(warden(real, head)).toEqual(independentVerify(real, pub(), head));
    expect(independentVerify(real, pub(), head)).toMatchObject({ ok: true });
    const dir = tampered("cut", (files) => {
      const lastFile = files.at(-1)!;
      if (lastFile.batches.length > 1) lastFile.batches.pop();
      else files.pop();
    });
    // Without the head the shorter chain is still a valid chain; with it, both see the cut.
    expect(independentVerify(dir, pub())).toMatchObject({ ok: true });
    const mine = independentVerify(dir, pub(), head);
    expect(mine).toMatchObject({ ok: false, reason: "truncated" });
    expect(warden(dir, head)).toEqual(mine);
  });
});
