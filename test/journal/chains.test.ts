// Attacks on several per-replica chains verified together (verifyChains). Each chain alone
// still verifies after the insider's edits (cut at its end, deleted, rewritten and
// re-signed with the journal key): only another chain's checkpoint can show it.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHECKPOINT,
  type ChainInput,
  type ChainsReport,
  type JournalEntry,
  verifyChains,
  verifyJournal,
} from "../../src/journal/index.js";
import {
  checkpoint,
  closeAll,
  deleteAndReseal,
  exported,
  fileInput,
  observe,
  type Replica,
  replica,
  rewriteAndReseal,
} from "./chains-fixtures.js";
import { KEY, keyringOf, OTHER_KEY } from "./helpers.js";

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
      await observe(L, 1);
      await L.journal.append({ type: CHECKPOINT, body: { chain: "L", heads: [] } });
      const f = failuresOf(await verify(files(await exported(X), await exported(L))));
      expect(f).toMatchObject([
        { reason: "chain_name_mismatch", input: 0, chain: "X", seq: 3 },
        { reason: "chain_name_mismatch", input: 1, chain: "", seq: 2 },
      ]);
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

describe("property: an insider's edit of one chain is caught whenever another chain saw past it", () => {
  const step = fc.record({ chain: fc.nat(), cp: fc.boolean(), mask: fc.nat() });
  const edit = fc.record({ chain: fc.nat(), at: fc.nat(), del: fc.boolean(), resign: fc.boolean() });

  async function build(n: number, steps: { chain: number; cp: boolean; mask: number }[]) {
    const names = Array.from({ length: n }, (_, i) => `r${i}`);
    const rs: Replica[] = [];
    for (const name of names) rs.push(await replica(name));
    const refs: { chain: string; seq: number }[] = [];
    for (const s of steps) {
      const i = s.chain % n;
      if (!s.cp) {
        await observe(rs[i]!, s.mask);
        continue;
      }
      const others = Object.fromEntries(
        names.flatMap((name, k) => (k !== i && (s.mask >> k) & 1 ? [[name, rs[k]!]] : [])),
      );
      const e = await checkpoint(rs[i]!, names[i]!, others);
      refs.push(...(e.body as { heads: { chain: string; seq: number }[] }).heads);
    }
    const chains: JournalEntry[][] = [];
    for (const r of rs) chains.push(await exported(r));
    await closeAll(...rs);
    return { names, chains, refs };
  }

  it("holds for random cross-referencing chains and any single deletion or rewrite", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 4 }),
        fc.array(step, { minLength: 3, maxLength: 24 }),
        edit,
        async (n, steps, ed) => {
          const { names, chains, refs } = await build(n, steps);
          expect(await verify(files(...chains))).toMatchObject({ ok: true, references: refs.length });
          const t = ed.chain % n;
          const entries = chains[t]!;
          if (entries.length < 2) return;
          const i = 1 + (ed.at % (entries.length - 1)); // entry 1 (the name) is attacked above
          const last = i === entries.length - 1;
          let forged: JournalEntry[];
          if (ed.del) forged = ed.resign ? deleteAndReseal(entries, i) : entries.filter((_, k) => k !== i);
          else if (ed.resign) forged = rewriteAndReseal(entries, i);
          else forged = entries.map((e, k) => (k === i ? { ...e, body: { observation_count: 424242 } } : e));
          const r = await verify(files(...chains.map((x, k) => (k === t ? forged : x))));
          const seen = refs.some((x) => x.chain === names[t] && x.seq >= i + 1);
          // Re-signed (or cut at the end), the chain is valid alone: only a reference can show it.
          const validAlone = ed.resign || (ed.del && last);
          expect(r.ok).toBe(validAlone ? !seen : false);
          if (!r.ok && validAlone) {
            expect(r.failures.every((f) => f.reason === "checkpoint_unmatched" && f.chain === names[t])).toBe(
              true,
            );
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
