// The docs-only verifier (docs-verifier.ts, written from docs/journal.md alone) against
// `warden journal verify` on a batch-signed (Merkle) segment journal whose key is
// rotated mid-way, and on tampered copies: a body byte, a deleted and swapped entry, a
// batch's root signature replaced, an inclusion path altered, a rotation rewritten to
// hand the chain to another key, an entry signed by the outgoing key after the
// rotation, a tail cut inside a batch, and a tail cut against a signed head.
import { sign } from "node:crypto";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { openJournal, SegmentJournalStore, signHead } from "../../src/journal/index.js";
import { type Batch, fold, H, type Head, independentVerify, jcs, type Verdict } from "./docs-verifier.js";
import { tempDir } from "./helpers.js";
import {
  appendDecisions,
  readSegmentFiles,
  type SegmentFile,
  segmentFiles,
  tamperedCopy,
  wardenVerify,
} from "./verifier-harness.js";

const key = generateKeyPair("ed25519");
const next = generateKeyPair("ed25519");
const other = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let pubFile: string;
let real: string;

beforeAll(async () => {
  t = tempDir("warden-indep-batch-");
  pubFile = saveKeyPair(key, t.dir).publicPem;
  const path = join(t.dir, "real.db");
  const store = SegmentJournalStore.open(path, { segmentBytes: 8192 });
  let j = await openJournal({ store, signer: key, signatureMode: "batch" });
  for (let round = 0; round < 12; round++) {
    if (round === 6) {
      await j.rotateKey(next);
      await j.close();
      j = await openJournal({ store, signer: next, signatureMode: "batch" });
    }
    await appendDecisions(j, 2 + (round % 5));
  }
  await j.close();
  await store.close();
  real = `${path}.segments`;
}, 60_000);
afterAll(() => t.cleanup());

type E = Record<string, unknown> & {
  seq: number;
  hash: string;
  key_id: string;
  signature: string;
  type: string;
};
const parse = (p: Buffer) => JSON.parse(p.toString("utf8")) as E;
const flat = (files: SegmentFile[]) => files.flatMap((f) => f.batches);
const entries = (files: SegmentFile[]) => flat(files).flatMap((b) => b.payloads.map(parse));
const warden = (dir: string, head?: Head): Verdict => wardenVerify(dir, pubFile, t.dir, head);
const tampered = (name: string, edit: (all: SegmentFile[]) => void) =>
  tamperedCopy(real, join(t.dir, `${name}.segments`), edit);
const mine = (dir: string, head?: Head) => independentVerify(dir, [key.publicKey], head);
/** A commit batch holding one Merkle batch of at least 3 entries, signed by `signer`'s key. */
const merkleBatch = (files: SegmentFile[], keyId: string): Batch =>
  flat(files).find((b) => b.payloads.length >= 3 && b.payloads.every((p) => parse(p).key_id === keyId))!;

describe("a verifier written from docs/journal.md agrees with warden journal verify on batch signatures and key rotation", () => {
  it("the real journal: Merkle batches, a rotation, several segments — intact for both", () => {
    const all = tamperedCopy(real, join(t.dir, "reframed.segments"), () => {});
    const es = entries(readSegmentFiles(real));
    expect(es.every((e) => e.signature.startsWith("mt1."))).toBe(true);
    expect(es.some((e) => e.type === "warden.journal.key_rotated")).toBe(true);
    expect(segmentFiles(real).length).toBeGreaterThan(2);
    expect(mine(real)).toEqual({ ok: true, checked: es.length });
    expect(warden(real)).toEqual(mine(real));
    expect(warden(all)).toEqual(mine(real));
  });

  it("a body byte changed in place (commit record stale): both fail at the same seq", () => {
    const dir = join(t.dir, "rawbyte.segments");
    cpSync(real, dir, { recursive: true });
    const seg = segmentFiles(dir)[1]!;
    const buf = readFileSync(join(dir, seg));
    buf[buf.indexOf('"decision":"') + 12] = "X".charCodeAt(0);
    writeFileSync(join(dir, seg), buf);
    expect(mine(dir)).toMatchObject({ ok: false });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("a body byte changed and the commit record recomputed: hash_mismatch at that entry", () => {
    const dir = tampered("body", (files) => {
      const b = merkleBatch(files, key.keyId);
      b.payloads[1] = Buffer.from(
        b.payloads[1]!.toString().replace(/"run_id":"[^"]*"/, '"run_id":"forged-run"'),
      );
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "hash_mismatch" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("an entry deleted from inside a Merkle batch: seq_gap at its seq", () => {
    const dir = tampered("deleted", (files) => merkleBatch(files, key.keyId).payloads.splice(1, 1));
    expect(mine(dir)).toMatchObject({ ok: false, reason: "seq_gap" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("two entries of a batch swapped: seq_gap at the first", () => {
    const dir = tampered("swapped", (files) => {
      const b = merkleBatch(files, next.keyId);
      [b.payloads[0], b.payloads[1]] = [b.payloads[1]!, b.payloads[0]!];
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "seq_gap" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("a batch's root signature replaced by another key's signature over the same message: signature_invalid", () => {
    const dir = tampered("resigned", (files) => {
      const b = merkleBatch(files, key.keyId);
      const e0 = parse(b.payloads[0]!);
      const [, first, size, sig, rest] = /^mt1\.(\d+)\.(\d+)\.([^.]+)(.*)$/.exec(e0.signature)!;
      const path = rest!
        .split(".")
        .slice(1)
        .map((p) => Buffer.from(p, "base64url"));
      const root = fold(H(Buffer.from([0]), Buffer.from(e0.hash.slice(7), "hex")), 0, Number(size), path)!;
      const message = jcs({
        alg: "warden.journal.batch.v1",
        first_seq: Number(first),
        key_id: e0.key_id,
        root: `sha256:${root.toString("hex")}`,
        size: Number(size),
      });
      const forged = sign(null, Buffer.from(message), other.privateKey).toString("base64url");
      b.payloads = b.payloads.map((p) => Buffer.from(p.toString().replace(sig!, forged)));
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "signature_invalid" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("one element of an entry's inclusion path altered: signature_invalid at that entry", () => {
    const dir = tampered("path", (files) => {
      const b = merkleBatch(files, next.keyId);
      const e = parse(b.payloads[1]!);
      const parts = e.signature.split(".");
      parts[4] = Buffer.alloc(32, 7).toString("base64url");
      b.payloads[1] = Buffer.from(jcs({ ...e, signature: parts.join(".") }));
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "signature_invalid" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("the rotation rewritten to hand the chain to another key (hash recomputed): signature_invalid", () => {
    const dir = tampered("rotation", (files) => {
      for (const b of flat(files)) {
        const i = b.payloads.findIndex((p) => parse(p).type === "warden.journal.key_rotated");
        if (i < 0) continue;
        const e = parse(b.payloads[i]!);
        const body = {
          ...(e.body as object),
          new_key_id: other.keyId,
          new_public_key: other.publicKey.export({ format: "jwk" }),
        };
        const { hash: _h, signature, ...rest } = { ...e, body };
        const hash = `sha256:${H(Buffer.from(jcs(rest))).toString("hex")}`;
        b.payloads[i] = Buffer.from(jcs({ ...rest, hash, signature }));
      }
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "signature_invalid" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("an entry after the rotation claiming the outgoing key: unknown_key", () => {
    const dir = tampered("oldkey", (files) => {
      const b = merkleBatch(files, next.keyId);
      b.payloads[0] = Buffer.from(jcs({ ...parse(b.payloads[0]!), key_id: key.keyId }));
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "unknown_key" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("the tail cut inside its last Merkle batch: truncated without a signed head", () => {
    const dir = tampered("cut-inside", (files) => {
      const last = files.at(-1)!.batches.at(-1)!;
      expect(last.payloads.length).toBeGreaterThan(1);
      last.payloads.pop();
    });
    expect(mine(dir)).toMatchObject({ ok: false, reason: "truncated" });
    expect(warden(dir)).toEqual(mine(dir));
  });

  it("the tail cut at a batch boundary against a head signed by the rotated key: truncated", () => {
    const es = entries(readSegmentFiles(real));
    const last = es.at(-1)! as unknown as {
      seq: number;
      hash: `sha256:${string}`;
      time: string;
      key_id: string;
    };
    const head = signHead(last, next) as unknown as Head;
    expect(mine(real, head)).toMatchObject({ ok: true });
    expect(warden(real, head)).toEqual(mine(real, head));
    const dir = tampered("cut", (files) => {
      const lastFile = files.at(-1)!;
      if (lastFile.batches.length > 1) lastFile.batches.pop();
      else files.pop();
    });
    expect(mine(dir)).toMatchObject({ ok: true });
    expect(mine(dir, head)).toMatchObject({ ok: false, reason: "truncated" });
    expect(warden(dir, head)).toEqual(mine(dir, head));
  });
});
