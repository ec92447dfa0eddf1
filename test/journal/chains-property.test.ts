// Property: one insider edit (a deletion or a rewrite, re-signed or not) of one chain in a
// random set of cross-referencing per-replica chains fails verifyChains exactly when a
// checkpoint of another chain saw the chain at or past the edit, or the chain fails alone.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JournalEntry, verifyChains } from "../../src/journal/index.js";
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
import { KEY, keyringOf } from "./helpers.js";

/** Two entries that differ only in their place in the chain (seq, links, signature). */
const sameContent = (a: JournalEntry, b: JournalEntry): boolean =>
  a.type === b.type &&
  a.time === b.time &&
  a.run_id === b.run_id &&
  a.trace_id === b.trace_id &&
  a.key_id === b.key_id &&
  JSON.stringify(a.body) === JSON.stringify(b.body);

const verify = (chains: JournalEntry[][]) => verifyChains(chains.map(fileInput), keyringOf(KEY));

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
          expect(await verify(chains)).toMatchObject({ ok: true, references: refs.length });
          const t = ed.chain % n;
          const entries = chains[t]!;
          const i = ed.at % entries.length;
          const last = i === entries.length - 1;
          let forged: JournalEntry[];
          if (ed.del) forged = ed.resign ? deleteAndReseal(entries, i) : entries.filter((_, k) => k !== i);
          else if (ed.resign) forged = rewriteAndReseal(entries, i);
          else forged = entries.map((e, k) => (k === i ? { ...e, body: { observation_count: 424242 } } : e));
          const r = await verify(chains.map((x, k) => (k === t ? forged : x)));
          // Deleting one of several identical neighbours (same type, time, ids and body: two
          // checkpoints naming nothing within one millisecond) and re-sealing yields the chain
          // that deleting the last of them would: the edit takes effect at that one.
          let at = i;
          if (ed.del && ed.resign)
            while (at + 1 < entries.length && sameContent(entries[at]!, entries[at + 1]!)) at++;
          const seen = refs.some((x) => x.chain === names[t] && x.seq >= at + 1);
          // Re-signed (or cut at the end), the chain is valid alone: only a reference can show it.
          const validAlone = ed.resign || (ed.del && last);
          if (seen || !validAlone) expect(r.ok).toBe(false);
          // Entry 1 holds the chain's name: editing it may also break the names, seen or not.
          if (i === 0) return;
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
