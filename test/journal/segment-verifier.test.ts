import { type KeyObject, sign } from "node:crypto";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { openJournal, SegmentJournalStore, signHead } from "../../src/journal/index.js";
import {
  type Batch,
  independentVerify as docsVerify,
  type Head,
  jcs,
  readBatches,
  type Verdict,
} from "./docs-verifier.js";
import { tempDir } from "./helpers.js";
import { appendDecisions, type SegmentFile, tamperedCopy, wardenVerify } from "./verifier-harness.js";

const independentVerify = (dir: string, pub: KeyObject, head?: Head): Verdict => docsVerify(dir, [pub], head);

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
    await appendDecisions(j, 1 + (round % 4));
  }
  await j.close();
  await store.close();
  real = `${path}.segments`;
}, 60_000);
afterAll(() => t.cleanup());

const warden = (dir: string, head?: Head): Verdict => wardenVerify(dir, pubFile, t.dir, head);
const tampered = (name: string, edit: (all: SegmentFile[]) => void): string =>
  tamperedCopy(real, join(t.dir, `${name}.segments`), edit);

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
