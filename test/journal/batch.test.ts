// Batch signatures (signatureMode: "batch"): the RFC 9162 tree, the journal writing
// one signature per committed batch, and attacks on batch-signed entries, each
// detected at the right seq with the right reason.
import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, parseStrictJson } from "../../src/contracts/index.js";
import { Keyring, keyIdOf } from "../../src/crypto/index.js";
import {
  batchMessage,
  batchTree,
  buildTree,
  entryHash,
  formatBatchSignature,
  GENESIS_HASH,
  type JournalEntry,
  JournalEntrySchema,
  leafHash,
  MAX_BATCH_SIZE,
  MAX_SIGNATURE_LENGTH,
  MalformedRecord,
  openJournal,
  parseBatchSignature,
  rootFromPath,
  SqliteJournalStore,
  signedText,
  type VerifyReport,
  verifyJournal,
} from "../../src/journal/index.js";
import { bodies, chain, partsOf, signBatch, signEach } from "./batch-fixtures.js";
import { collect, KEY, keyringOf, OTHER_KEY, tempDir } from "./helpers.js";

const H = (b: Buffer) => createHash("sha256").update(b).digest();

// RFC 9162 §2.1.1 and §2.1.3.1, literally: the reference the level-by-level build must equal.
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return H(Buffer.concat([Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k))]));
}
function refPath(m: number, leaves: Buffer[]): Buffer[] {
  if (leaves.length === 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return m < k
    ? [...refPath(m, leaves.slice(0, k)), mth(leaves.slice(k))]
    : [...refPath(m - k, leaves.slice(k)), mth(leaves.slice(0, k))];
}
const hashes = (n: number) =>
  Array.from({ length: n }, (_, i) => `sha256:${createHash("sha256").update(`e${i}`).digest("hex")}`);

describe("the Merkle tree (RFC 9162 §2.1)", () => {
  it("hashes a leaf as SHA-256(0x00 ‖ entry hash bytes)", () => {
    const h = hashes(1)[0]!;
    expect(leafHash(h)).toEqual(H(Buffer.concat([Buffer.from([0]), Buffer.from(h.slice(7), "hex")])));
  });

  it("builds the RFC's root and inclusion paths for every size up to 70, and 1000", () => {
    for (const n of [...Array.from({ length: 70 }, (_, i) => i + 1), 1000]) {
      const hs = hashes(n);
      const leaves = hs.map(leafHash);
      const { root, paths } = buildTree(hs);
      expect(root).toEqual(mth(leaves));
      for (let m = 0; m < n; m++) {
        expect(paths[m]).toEqual(refPath(m, leaves));
        expect(rootFromPath(leaves[m]!, m, n, paths[m]!)).toEqual(root);
      }
    }
  });

  it("writes the sealer's path texts as formatBatchSignature writes the RFC's paths, for every size up to 70", () => {
    for (let n = 1; n <= 70; n++) {
      const hs = hashes(n);
      const leaves = hs.map(leafHash);
      const { root, pathTexts } = batchTree(hs);
      expect(root).toEqual(mth(leaves));
      for (let m = 0; m < n; m++) {
        const b = { firstSeq: 1, size: n, signature: "s".repeat(86), path: refPath(m, leaves) };
        expect(`mt1.1.${n}.${"s".repeat(86)}${pathTexts[m]}`).toBe(formatBatchSignature(b));
      }
    }
  });

  it("refuses a path that is too short, too long, padded or for another index or size", () => {
    const hs = hashes(13);
    const { root, paths } = buildTree(hs);
    const leaf = leafHash(hs[5]!);
    const p = paths[5]!;
    expect(rootFromPath(leaf, 5, 13, p)).toEqual(root);
    expect(rootFromPath(leaf, 5, 13, p.slice(1))).toBeNull();
    expect(rootFromPath(leaf, 5, 13, [...p, p[0]!])).toBeNull();
    expect(rootFromPath(leaf, 5, 13, [p[0]!, ...p])).not.toEqual(root);
    expect(rootFromPath(leaf, 13, 13, p)).toBeNull();
    expect(rootFromPath(leaf, -1, 13, p)).toBeNull();
    expect(rootFromPath(leaf, 4, 13, p)).not.toEqual(root);
    // The same fold may fit several sizes (index 5 sits in the left 8-leaf subtree of 13 and of 14
    // leaves): that is why the signed message binds the size.
    expect(rootFromPath(leaf, 5, 14, p)).toEqual(root);
    expect(batchMessage(KEY.keyId, 1, 14, root)).not.toBe(batchMessage(KEY.keyId, 1, 13, root));
    expect(() => buildTree([])).toThrow(RangeError);
    expect(() => buildTree(hashes(MAX_BATCH_SIZE + 1))).toThrow(RangeError);
  });

  it("signs a domain-separated message binding key, first seq, size and root", () => {
    const root = Buffer.alloc(32, 7);
    expect(batchMessage(KEY.keyId, 5, 3, root)).toBe(
      canonicalJson({
        alg: "warden.journal.batch.v1",
        first_seq: 5,
        key_id: KEY.keyId,
        root: `sha256:${root.toString("hex")}`,
        size: 3,
      }),
    );
  });
});

describe("the batch signature text", () => {
  const sig = "A".repeat(86);
  const el = `${"B".repeat(42)}A`;
  const valid = `mt1.7.3.${sig}.${el}.${el}`;

  it("round-trips and is accepted by the entry schema", () => {
    const b = parseBatchSignature(valid)!;
    expect(b).toMatchObject({ firstSeq: 7, size: 3, signature: sig });
    expect(b.path).toHaveLength(2);
    expect(formatBatchSignature(b)).toBe(valid);
    expect(JournalEntrySchema.shape.signature.safeParse(valid).success).toBe(true);
    expect(JournalEntrySchema.shape.signature.safeParse(sig).success).toBe(true);
  });

  it.each([
    ["leading zero in first_seq", `mt1.07.3.${sig}`],
    ["leading zero in size", `mt1.7.03.${sig}`],
    ["zero first_seq", `mt1.0.3.${sig}`],
    ["zero size", `mt1.7.0.${sig}`],
    ["size above the limit", `mt1.7.${MAX_BATCH_SIZE + 1}.${sig}`],
    ["first_seq above 2^53-1", `mt1.9007199254740992.1.${sig}`],
    ["batch ending above 2^53-1", `mt1.9007199254740991.2.${sig}`],
    ["non-canonical signature base64url", `mt1.7.3.${"A".repeat(85)}B`],
    ["non-canonical path base64url", `mt1.7.3.${sig}.${"B".repeat(42)}B`],
    ["short path element", `mt1.7.3.${sig}.${"B".repeat(42)}`],
    ["padding", `mt1.7.3.${sig}==`],
    ["13 path elements", `mt1.7.3.${sig}${`.${el}`.repeat(13)}`],
    ["an unknown version", `mt2.7.3.${sig}`],
    ["a trailing dot", `${valid}.`],
    ["an empty element", `mt1.7.3.${sig}..${el}`],
    ["a sign", `mt1.+7.3.${sig}`],
    ["an oversized string", `${valid}${`.${el}`.repeat(5000)}`],
  ])("refuses %s", (_name, text) => {
    expect(parseBatchSignature(text)).toBeNull();
    expect(JournalEntrySchema.shape.signature.safeParse(text).success).toBe(false);
  });

  it("bounds the text: 12 path elements fit MAX_SIGNATURE_LENGTH exactly at the largest numbers", () => {
    const longest = `mt1.9007199254736896.4096.${sig}${`.${el}`.repeat(12)}`;
    expect(longest.length).toBe(MAX_SIGNATURE_LENGTH);
    expect(parseBatchSignature(longest)).not.toBeNull();
  });
});

function expectFailure(r: VerifyReport, seq: number, reason: string): void {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect({ seq: r.failure.seq, reason: r.failure.reason }).toEqual({ seq, reason });
  expect(r.checked).toBe(seq - 1);
  expect(r.head?.seq ?? 0).toBe(seq - 1);
}

describe("a journal in batch mode", () => {
  it("signs each committed batch once and every entry verifies on its own", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "j.db"));
    try {
      const j = await openJournal({ store, signer: KEY, signatureMode: "batch", maxBatch: 50 });
      const appended = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          j.append({ type: "ObservationsCollected", body: { observation_count: i } }),
        ),
      );
      await j.close();
      // 120 appends in one turn, at most 50 per transaction: three batches.
      const batches = new Map<string, number>();
      for (const e of appended) {
        const b = partsOf(e.signature);
        batches.set(`${b.firstSeq}.${b.size}.${b.signature}`, b.size);
        expect(e.seq - b.firstSeq).toBeGreaterThanOrEqual(0);
      }
      expect([...batches.values()]).toEqual([50, 50, 20]);
      for (const workers of [0, 2]) {
        expect(await verifyJournal(store, keyringOf(KEY), { workers })).toMatchObject({
          ok: true,
          checked: 120,
        });
      }
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it("refuses an unknown signatureMode (ERR_JOURNAL_ENTRY_INVALID)", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "j.db"));
    try {
      await expect(
        openJournal({ store, signer: KEY, signatureMode: "merkle" as unknown as "batch" }),
      ).rejects.toMatchObject({ code: "ERR_JOURNAL_ENTRY_INVALID" });
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it("closes a batch at a key rotation: the new key signs what follows", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "j.db"));
    try {
      const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
      const all = await Promise.all([
        j.append({ type: "ObservationsCollected", body: { observation_count: 1 } }),
        j.append({ type: "ObservationsCollected", body: { observation_count: 2 } }),
        j.rotateKey(OTHER_KEY),
        j.append({ type: "ObservationsCollected", body: { observation_count: 3 } }),
        j.append({ type: "ObservationsCollected", body: { observation_count: 4 } }),
      ]);
      await j.close();
      expect(
        all.map((e) => [e.key_id === KEY.keyId, partsOf(e.signature).firstSeq, partsOf(e.signature).size]),
      ).toEqual([
        [true, 1, 3],
        [true, 1, 3],
        [true, 1, 3],
        [false, 4, 2],
        [false, 4, 2],
      ]);
      expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 5 });
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it("verifies a chain that switches between entry and batch mode across opens", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "j.db"));
    try {
      const modes = ["entry", "batch", "entry", "batch", "batch"] as const;
      let n = 0;
      for (const [k, signatureMode] of modes.entries()) {
        const j = await openJournal({
          store,
          signer: KEY,
          signatureMode,
          ...(k === 2 ? { signingWorkers: 2 } : {}),
        });
        await Promise.all(
          Array.from({ length: 5 + k * 7 }, () =>
            j.append({ type: "ObservationsCollected", body: { observation_count: n++ } }),
          ),
        );
        await j.close();
      }
      const entries = (await collect(store)) as JournalEntry[];
      expect(entries.filter((e) => e.signature.startsWith("mt1.")).length).toBe(12 + 26 + 33);
      for (const workers of [0, 2]) {
        expect(await verifyJournal(store, keyringOf(KEY), { workers })).toMatchObject({
          ok: true,
          checked: n,
        });
      }
    } finally {
      await store.close();
      t.cleanup();
    }
  });
});

describe.each([0, 2])("attacks on batch-signed entries (workers: %i)", (workers) => {
  // seq 1-3 entry mode, 4-10 one batch, 11-15 another, 16-17 entry mode.
  let base: JournalEntry[];
  beforeAll(() => {
    const a = signEach(chain(bodies(3)));
    const b = signBatch(chain(bodies(7, 3), a.at(-1)!));
    const c = signBatch(chain(bodies(5, 10), b.at(-1)!));
    const d = signEach(chain(bodies(2, 15), c.at(-1)!));
    base = [...a, ...b, ...c, ...d];
  });
  const copy = () => base.map((e) => ({ ...e, body: { ...e.body } }));
  const verify = (es: unknown[], keys = keyringOf(KEY)) => verifyJournal(es, keys, { workers });
  const withSig = (es: JournalEntry[], seq: number, signature: string) => {
    es[seq - 1] = { ...es[seq - 1]!, signature };
    return es;
  };
  const rewrite = (seq: number, change: (b: ReturnType<typeof partsOf>) => void) => {
    const es = copy();
    const b = partsOf(es[seq - 1]!.signature);
    change(b);
    return withSig(es, seq, formatBatchSignature(b));
  };

  it("accepts the untouched mixed chain", async () => {
    expect(await verify(copy())).toMatchObject({ ok: true, checked: 17 });
  });

  it("a body changed inside a batch: hash_mismatch", async () => {
    const es = copy();
    es[5]!.body = { observation_count: 1000 };
    expectFailure(await verify(es), 6, "hash_mismatch");
  });

  it("a body changed and its hash recomputed: signature_invalid (the path leads to another root)", async () => {
    const es = copy();
    const [forged] = chain([{ body: { observation_count: 1000 } }], es[4]!);
    es[5] = { ...forged!, signature: es[5]!.signature };
    // The next entry's prev_hash no longer matches, but the forged entry fails first.
    expectFailure(await verify(es), 6, "signature_invalid");
  });

  it("proofs swapped between two entries of a batch: signature_invalid at the first", async () => {
    const es = copy();
    const s6 = es[5]!.signature;
    withSig(es, 6, es[6]!.signature);
    withSig(es, 7, s6);
    expectFailure(await verify(es), 6, "signature_invalid");
  });

  it("an entry carrying the signature and proof of another batch: signature_invalid", async () => {
    const es = copy();
    expectFailure(await verify(withSig(es, 4, es[10]!.signature)), 4, "signature_invalid");
    // ... with the other batch's numbers rewritten to this entry's place.
    const other = partsOf(base[10]!.signature);
    const moved = formatBatchSignature({ ...other, firstSeq: 4, size: 7 });
    const all = copy();
    for (let s = 4; s <= 10; s++) withSig(all, s, moved);
    expectFailure(await verify(all), 4, "signature_invalid");
  });

  it("a root signature taken from another batch: signature_invalid", async () => {
    const foreign = partsOf(base[10]!.signature).signature;
    expectFailure(
      await verify(
        rewrite(4, (b) => {
          b.signature = foreign;
        }),
      ),
      4,
      "signature_invalid",
    );
  });

  it("first_seq, size or index changed: signature_invalid", async () => {
    for (const change of [
      (b: ReturnType<typeof partsOf>) => {
        b.firstSeq = 3;
      },
      (b: ReturnType<typeof partsOf>) => {
        b.firstSeq = 5;
      },
      (b: ReturnType<typeof partsOf>) => {
        b.size = 8;
      },
      (b: ReturnType<typeof partsOf>) => {
        b.size = 6;
      },
    ]) {
      expectFailure(await verify(rewrite(4, change)), 4, "signature_invalid");
    }
    // The whole batch moved one place (every entry's index shifted by one).
    const es = copy();
    for (let s = 4; s <= 10; s++) {
      const b = partsOf(es[s - 1]!.signature);
      withSig(es, s, formatBatchSignature({ ...b, firstSeq: 3 }));
    }
    expectFailure(await verify(es), 4, "signature_invalid");
    // An index out of range: the batch claims to start after the entry.
    const late = copy();
    const b = partsOf(late[6]!.signature);
    withSig(late, 7, formatBatchSignature({ ...b, firstSeq: 8, size: 3 }));
    expectFailure(await verify(late), 7, "signature_invalid");
  });

  it("a path of the wrong length, with an element duplicated or added: signature_invalid", async () => {
    for (const change of [
      (b: ReturnType<typeof partsOf>) => {
        b.path.pop();
      },
      (b: ReturnType<typeof partsOf>) => {
        b.path.push(b.path[0]!);
      },
      (b: ReturnType<typeof partsOf>) => {
        b.path.splice(1, 0, b.path[1]!);
      },
      (b: ReturnType<typeof partsOf>) => {
        b.path.push(Buffer.alloc(32));
      },
      (b: ReturnType<typeof partsOf>) => {
        b.path.reverse();
      },
    ]) {
      expectFailure(await verify(rewrite(8, change)), 8, "signature_invalid");
    }
  });

  it("an entry-mode signature replayed as a batch's root signature, and the reverse: signature_invalid", async () => {
    // The entry's own per-entry signature, presented as the root signature of a one-entry batch.
    const es = copy();
    const own = signEach([{ ...es[3]! }])[0]!.signature;
    withSig(es, 4, formatBatchSignature({ firstSeq: 4, size: 1, signature: own, path: [] }));
    expectFailure(await verify(es), 4, "signature_invalid");
    // A root signature presented as an entry-mode signature.
    const es2 = copy();
    expectFailure(
      await verify(withSig(es2, 2, partsOf(base[4]!.signature).signature)),
      2,
      "signature_invalid",
    );
    // A root signature over a one-entry batch made of this entry, as its entry-mode signature.
    const es3 = copy();
    const single = signBatch([{ ...es3[1]! }])[0]!;
    expectFailure(await verify(withSig(es3, 2, partsOf(single.signature).signature)), 2, "signature_invalid");
    // And the message texts can never coincide: an entry text starts with {"body":, a batch message with {"alg":.
    expect(signedText(base[0]!, canonicalJson(base[0]!.body)).startsWith('{"body":')).toBe(true);
  });

  it("a batch that continues past a key rotation: signature_invalid at the rotation", async () => {
    // Rotating to the same key keeps every key_id equal; only the rule catches it.
    const rotation = {
      type: "warden.journal.key_rotated",
      body: {
        previous_key_id: KEY.keyId,
        new_key_id: KEY.keyId,
        new_public_key: KEY.publicKey.export({ format: "jwk" }) as Record<string, unknown>,
      },
    };
    const es = signBatch(chain([...bodies(2), rotation, ...bodies(2, 5)]));
    expectFailure(await verify(es), 3, "signature_invalid");
    // The honest form: the rotation closes its batch.
    const ok = chain([...bodies(2), rotation, ...bodies(2, 5)]);
    signBatch(ok.slice(0, 3));
    signBatch(ok.slice(3));
    expect(await verify(ok)).toMatchObject({ ok: true, checked: 5 });
    // Across a real rotation, the old key's root cannot cover entries the new key signs.
    const real = chain([
      ...bodies(2),
      {
        type: "warden.journal.key_rotated",
        body: {
          previous_key_id: KEY.keyId,
          new_key_id: OTHER_KEY.keyId,
          new_public_key: OTHER_KEY.publicKey.export({ format: "jwk" }) as Record<string, unknown>,
        },
      },
      { body: { observation_count: 9 }, key: OTHER_KEY },
    ]);
    signBatch(real, KEY);
    expectFailure(await verify(real), 3, "signature_invalid");
  });

  it("a batch entry replaced by an entry-mode entry, or a batch left early: signature_invalid", async () => {
    const es = copy();
    signEach([es[5]!]);
    expectFailure(await verify(es), 6, "signature_invalid");
    // A new batch starting before the open one ended.
    const es2 = copy();
    const second = signBatch(es2.slice(6, 10).map((e) => ({ ...e })));
    for (const e of second) es2[e.seq - 1] = e;
    expectFailure(await verify(es2), 7, "signature_invalid");
  });

  it("an oversized or malformed signature string: schema_invalid", async () => {
    const big = `${base[4]!.signature}${".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".repeat(20)}`;
    expectFailure(await verify(withSig(copy(), 5, big)), 5, "schema_invalid");
    expectFailure(await verify(withSig(copy(), 5, "x".repeat(1_000_000))), 5, "schema_invalid");
    expectFailure(
      await verify(withSig(copy(), 5, base[4]!.signature.replace(/^mt1\.4\./, "mt1.04."))),
      5,
      "schema_invalid",
    );
  });

  it("a journal cut inside a batch: the entries present are proven, then truncated", async () => {
    const r = await verify(copy().slice(0, 7));
    expectFailure(r, 8, "truncated");
    if (!r.ok) expect(r.head?.hash).toBe(base[6]!.hash);
    // Cut at a batch boundary: nothing shows without a signed head.
    expect(await verify(copy().slice(0, 10))).toMatchObject({ ok: true, checked: 10 });
    // Entries missing from the middle of a batch: a gap.
    expectFailure(await verify(copy().filter((e) => e.seq !== 6)), 6, "seq_gap");
  });
});

describe("property: any batch verifies and any single-bit change fails", () => {
  it("holds for batch sizes 1..600", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 600 }),
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        async (size, pick, bit, inSignature) => {
          const es = signBatch(chain(bodies(size)));
          const lines = es.map((e) => canonicalJson(e));
          const ok = await verifyJournal(
            lines.map((l) => JSON.parse(l) as unknown),
            keyringOf(KEY),
          );
          expect(ok).toMatchObject({ ok: true, checked: size });
          const i = pick % size;
          const line = Buffer.from(lines[i]!, "utf8");
          // Half the flips land in the signature member (root signature and proof), half anywhere.
          const sigAt = lines[i]!.indexOf('"signature":"') + 13;
          const sigLen = es[i]!.signature.length;
          const at = inSignature ? sigAt + ((bit >> 3) % sigLen) : (bit >> 3) % line.length;
          line[at]! ^= 1 << (bit & 7);
          const changed = lines.slice();
          let record: unknown;
          try {
            record = parseStrictJson(new TextDecoder("utf-8", { fatal: true }).decode(line));
          } catch (err) {
            record = new MalformedRecord(`line ${i + 1}`, (err as Error).message);
          }
          const r = await verifyJournal(
            changed.map((l, k) => (k === i ? record : (JSON.parse(l) as unknown))),
            keyringOf(KEY),
          );
          expect(r.ok).toBe(false);
          // Caught at the changed entry: nothing before it is doubted.
          if (!r.ok) expect(r.failure.seq).toBe(i + 1);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});

describe("the worked example of docs/journal.md §1.1", () => {
  it("rebuilds to the documented root, signature texts and a verifying journal", async () => {
    // RFC 8032 test vector 1: a published key, used only so that the example is reproducible.
    const d = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
    const x = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex");
    const jwk = { kty: "OKP", crv: "Ed25519", d: d.toString("base64url"), x: x.toString("base64url") };
    const privateKey = createPrivateKey({ key: jwk, format: "jwk" });
    const publicKey = createPublicKey(privateKey);
    const keyId = keyIdOf(publicKey);
    expect(keyId).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    let prev: string = GENESIS_HASH;
    const entries: JournalEntry[] = [0, 1, 2].map((i) => {
      const e = {
        seq: i + 1,
        time: "2026-01-02T03:04:05.678Z",
        type: "ObservationsCollected",
        run_id: "run-1",
        trace_id: null,
        body: { observation_count: i },
        prev_hash: prev as JournalEntry["prev_hash"],
        key_id: keyId,
      };
      const hash = entryHash(e, canonicalJson(e.body));
      prev = hash;
      return { ...e, hash, signature: "" };
    });
    const { root, paths } = buildTree(entries.map((e) => e.hash));
    expect(root.toString("hex")).toBe("b26040b52eb123aa357546274bb8e1527e17178e4b2f974c65d4d9d0773cd170");
    const sig = sign(null, Buffer.from(batchMessage(keyId, 1, 3, root)), privateKey).toString("base64url");
    const S =
      "mt1.1.3.6PhDCIbv-nIWKbBEONLOxGdiDyBnGVRl-DoAb4J8WDpGPw29UHkocth0PZ6krxpm0L1DwnWMy1NFlEfIyunyDw";
    entries.forEach((e, i) => {
      e.signature = formatBatchSignature({ firstSeq: 1, size: 3, signature: sig, path: paths[i]! });
    });
    expect(entries.map((e) => e.signature)).toEqual([
      `${S}.lxQxkrCpa5IUDZFjehSP-PGHi4ye5pAIfITr5A45YSk.viQQ_1fKoBaV8lt87r7ZOjC0RwCokug7_8Ngg9cA9Ns`,
      `${S}.GPUeCM_5qqVJ2atgBQ_iJSz89Tlok0vlE92ik-2qYHA.viQQ_1fKoBaV8lt87r7ZOjC0RwCokug7_8Ngg9cA9Ns`,
      `${S}.TExnvrougyCp8uT6Sqj85ameZVW4-ZEIIqi8s_0q1ig`,
    ]);
    expect(await verifyJournal(entries, new Keyring([publicKey]))).toMatchObject({ ok: true, checked: 3 });
  });
});
