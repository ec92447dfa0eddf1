// Attacks on several per-replica chains verified together (verifyChains). Each chain alone
// still verifies after the insider's edits (cut at its end, deleted, rewritten and
// re-signed with the journal key): only another chain's checkpoint can show it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHECKPOINT,
  type ChainInput,
  type ChainsReport,
  EventTypeRegistry,
  type JournalEntry,
  openJournal,
  SqliteJournalStore,
  verifyChains,
  verifyJournal,
} from "../../src/journal/index.js";
import {
  checkpoint,
  closeAll,
  exported,
  fileInput,
  observe,
  type Replica,
  replica,
  rewriteAndReseal,
} from "./chains-fixtures.js";
import { collect, KEY, keyringOf, OTHER_KEY } from "./helpers.js";

let A: Replica;
let B: Replica;
let C: Replica;
let a: JournalEntry[];
let b: JournalEntry[];
let c: JournalEntry[];

// A: cp(A) obs cp(A: B@3 C@2) obs — B: cp(B) obs obs obs obs cp(B: A@3 C@2) obs — C: cp(C) obs obs cp(C: A@3 B@6)
beforeAll(async () => {
  [A, B, C] = [await replica("A"), await replica("B"), await replica("C")];
  await observe(A, 1);
  await observe(B, 1);
  await observe(B, 2);
  await observe(C, 1);
  await checkpoint(A, "A", { B, C });
  await observe(B, 3);
  await observe(B, 4);
  await checkpoint(B, "B", { A, C });
  await observe(C, 2);
  await checkpoint(C, "C", { A, B });
  await observe(A, 2);
  await observe(B, 5);
  [a, b, c] = [await exported(A), await exported(B), await exported(C)];
});
afterAll(() => closeAll(A, B, C));

const verify = (inputs: ChainInput[], keys = keyringOf(KEY)) => verifyChains(inputs, keys);
const files = (...chains: unknown[][]) => chains.map(fileInput);

function failuresOf(r: ChainsReport) {
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.failures;
}

describe("verifyChains: intact per-replica chains", () => {
  it("accepts three intact chains that reference each other and reports each chain", async () => {
    const r = await verify(files(a, b, c));
    expect(r).toMatchObject({ ok: true, checkpoints: 6, references: 6 });
    expect(r.chains.map((s) => [s.name, s.checked, s.head?.seq])).toEqual([
      ["A", 4, 4],
      ["B", 7, 7],
      ["C", 4, 4],
    ]);
    expect(r.chains[1]?.head?.hash).toBe(b[6]!.hash);
  });

  it("accepts the stores themselves under the names they know, and with signature workers", async () => {
    const inputs = [A, B, C].map((x, i) => ({ name: "ABC"[i]!, open: () => x.store }));
    expect(await verify(inputs)).toMatchObject({ ok: true, references: 6 });
    expect(await verifyChains(files(a, b, c), keyringOf(KEY), { workers: 2 })).toMatchObject({ ok: true });
  });

  it("accepts a legacy global chain beside per-replica chains that reference it", async () => {
    const L = await replica(null);
    const R = await replica("r1");
    try {
      await observe(L, 1);
      await observe(L, 2);
      await checkpoint(R, "r1", { "": L });
      await observe(L, 3);
      const r = await verify([{ name: "", open: () => L.store }, { open: () => R.store }]);
      expect(r).toMatchObject({ ok: true, references: 1 });
      expect(r.chains.map((s) => s.name)).toEqual(["", "r1"]);
      // The legacy chain cut below the reference.
      const cut = (await exported(L)).slice(0, 1);
      const f = failuresOf(await verify(files(cut, await exported(R))));
      expect(f).toMatchObject([{ reason: "checkpoint_unmatched", chain: "", seq: 2, by: { chain: "r1" } }]);
    } finally {
      await closeAll(L, R);
    }
  });

  it("a cut after the last entry another chain saw is not evidence of anything (signed heads are)", async () => {
    expect(await verify(files(a, b.slice(0, 6), c))).toMatchObject({ ok: true });
  });
});

describe("verifyChains: attacks on one chain that another chain saw", () => {
  it("the tail of B truncated below C's reference is checkpoint_unmatched, naming C's checkpoint", async () => {
    const f = failuresOf(await verify(files(a, b.slice(0, 5), c)));
    expect(f).toMatchObject([
      { reason: "checkpoint_unmatched", input: 1, chain: "B", seq: 6, by: { chain: "C", seq: 4 } },
    ]);
    expect(f[0]?.message).toMatch(/checkpoint at "C" seq 4 names "B" seq 6 .* ends at seq 5/);
  });

  it("B deleted entirely is chain_missing for every checkpoint that named it", async () => {
    const f = failuresOf(await verify(files(a, c)));
    expect(f.map((x) => [x.reason, x.chain, x.seq, "by" in x ? x.by : null])).toEqual([
      ["chain_missing", "B", 3, { chain: "A", seq: 3 }],
      ["chain_missing", "B", 6, { chain: "C", seq: 4 }],
    ]);
  });

  it("an insider who rewrites an entry of B and re-chains and re-signs B with the key is caught by C's hash", async () => {
    const forged = rewriteAndReseal(b, 3);
    expect(await verifyJournal(forged, keyringOf(KEY))).toMatchObject({ ok: true, checked: 7 });
    const f = failuresOf(await verify(files(a, forged, c)));
    expect(f).toMatchObject([
      { reason: "checkpoint_unmatched", chain: "B", seq: 6, by: { chain: "C", seq: 4 } },
    ]);
    expect(f[0]?.message).toMatch(/the entry there has hash/);
  });

  it("a source that serves other entries on the second pass than it did on the first is chain_changed", async () => {
    let opened = 0;
    const forged = rewriteAndReseal(b, 2);
    const swapping: ChainInput = { open: () => (opened++ === 0 ? b : forged) };
    const f = failuresOf(await verify([fileInput(a), swapping, fileInput(c)]));
    expect(opened).toBe(2);
    expect(f).toMatchObject([{ reason: "chain_changed", input: 1, chain: "B" }]);
  });

  it("a second pass that patches the named hashes into a forged chain (links kept) is chain_changed", async () => {
    const forged = rewriteAndReseal(b, 2); // what the first pass sees: valid alone
    const patched = forged.map((e) => ({ ...e }));
    for (const seq of [3, 6]) {
      patched[seq - 1]!.hash = b[seq - 1]!.hash;
      patched[seq]!.prev_hash = b[seq - 1]!.hash;
    }
    let opened = 0;
    const swapping: ChainInput = { open: () => (opened++ === 0 ? forged : patched) };
    const f = failuresOf(await verify([fileInput(a), swapping, fileInput(c)]));
    expect(f).toMatchObject([{ reason: "chain_changed", chain: "B", seq: 3 }]);
    expect(f[0]?.message).toMatch(/hash does not recompute/);
  });

  it("a chain signed by a key the verifier does not trust fails alone, with the chain's name", async () => {
    const X = await replica("B", OTHER_KEY);
    try {
      await observe(X, 1);
      const f = failuresOf(await verify(files(a, await exported(X), c)));
      expect(f).toEqual([expect.objectContaining({ reason: "unknown_key", input: 1, chain: "B", seq: 1 })]);
    } finally {
      await closeAll(X);
    }
  });
});

describe("verifyChains: chain names", () => {
  it("two exports of one chain are chain_duplicate", async () => {
    const f = failuresOf(await verify(files(a, b, b, c)));
    expect(f).toMatchObject([{ reason: "chain_duplicate", input: 2, chain: "B", seq: 1 }]);
  });

  it("a chain whose entry 1 claims another chain's name is a duplicate, or a name mismatch for a store", async () => {
    const D = await replica("B");
    try {
      await observe(D, 1);
      const d = await exported(D);
      const f = failuresOf(await verify(files(a, b, c, d)));
      expect(f).toMatchObject([{ reason: "chain_duplicate", input: 3, chain: "B" }]);
      const named = [...files(a, b, c), { name: "D", open: () => d }];
      expect(failuresOf(await verify(named))).toMatchObject([
        { reason: "chain_name_mismatch", input: 3, chain: "D", seq: 1 },
      ]);
      // A store that calls the legacy chain what is really a per-replica chain.
      expect(failuresOf(await verify([{ name: "", open: () => d }]))).toMatchObject([
        { reason: "chain_name_mismatch", seq: 1 },
      ]);
    } finally {
      await closeAll(D);
    }
  });

  it("a later checkpoint that names another chain is chain_name_mismatch at its seq", async () => {
    const X = await replica("X");
    const L = await replica(null);
    try {
      await observe(X, 1);
      await X.journal.append({ type: CHECKPOINT, body: { chain: "Y", heads: [] } });
      await observe(X, 2);
      await observe(L, 1);
      await L.journal.append({ type: CHECKPOINT, body: { chain: "L", heads: [] } });
      const x = await exported(X);
      const f = failuresOf(await verify(files(x, await exported(L))));
      expect(f).toMatchObject([
        { reason: "chain_name_mismatch", input: 0, chain: "X", seq: 3 },
        { reason: "chain_name_mismatch", input: 1, chain: "", seq: 2 },
      ]);
      // A later entry broken too: the first fault in the chain is the one reported.
      x[3] = { ...x[3]!, body: { observation_count: 7 } };
      expect(failuresOf(await verify(files(x)))).toMatchObject([{ reason: "chain_name_mismatch", seq: 3 }]);
      x[1] = { ...x[1]!, body: { observation_count: 7 } };
      expect(failuresOf(await verify(files(x)))).toMatchObject([{ reason: "hash_mismatch", seq: 2 }]);
    } finally {
      await closeAll(X, L);
    }
  });

  it("a checkpoint that names its own chain, or one chain twice, is checkpoint_invalid", async () => {
    const X = await replica("X");
    const Y = await replica("Y");
    try {
      const own = await observe(X, 1);
      await X.journal.append({
        type: CHECKPOINT,
        body: { chain: "X", heads: [{ chain: "X", seq: 2, hash: own.hash }] },
      });
      const h = { chain: "X", seq: 2, hash: own.hash };
      await Y.journal.append({ type: CHECKPOINT, body: { chain: "Y", heads: [h, h] } });
      const f = failuresOf(await verify(files(await exported(X), await exported(Y))));
      expect(f).toMatchObject([
        { reason: "checkpoint_invalid", chain: "X", seq: 3 },
        { reason: "checkpoint_invalid", chain: "Y", seq: 2 },
      ]);
      expect(f.map((x) => x.message)).toEqual([
        expect.stringMatching(/its own chain/),
        expect.stringMatching(/chain "X" twice/),
      ]);
    } finally {
      await closeAll(X, Y);
    }
  });

  it("a malformed checkpoint is checkpoint_invalid even when the verifier's registry does not know the type", async () => {
    const store = SqliteJournalStore.open(":memory:");
    const loose = await openJournal({
      store,
      signer: KEY,
      registry: new EventTypeRegistry(),
      allowUnknownTypes: true,
    });
    try {
      await loose.append({ type: CHECKPOINT, body: { chain: "X", heads: [] } });
      await loose.append({ type: CHECKPOINT, body: { chain: "X", heads: [{ chain: "Y", seq: 0 }] } });
      const x = [fileInput(await collect(store))];
      expect(failuresOf(await verify(x))).toMatchObject([{ reason: "schema_invalid", chain: "X", seq: 2 }]);
      const blind = await verifyChains(x, keyringOf(KEY), { registry: new EventTypeRegistry() });
      expect(failuresOf(blind)).toMatchObject([{ reason: "checkpoint_invalid", chain: "X", seq: 2 }]);
    } finally {
      await loose.close();
      await store.close();
    }
  });

  it("two legacy global chains are chain_duplicate", async () => {
    const L1 = await replica(null);
    const L2 = await replica(null);
    try {
      await observe(L1, 1);
      await observe(L2, 1);
      const f = failuresOf(await verify(files(await exported(L1), await exported(L2), a)));
      expect(f).toMatchObject([{ reason: "chain_duplicate", input: 1, chain: "" }]);
      expect(f[0]?.message).toMatch(/legacy global chain is also input 0/);
    } finally {
      await closeAll(L1, L2);
    }
  });
});
