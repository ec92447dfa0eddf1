// The retrieval ranking: BM25 over the candidates, bounded tokenization, cosine blending.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bm25, cosine, MIN_SIMILARITY, rank, tokenize } from "../../src/memory/index.js";

describe("memory search ranking", () => {
  it("ranks the document that matches more query terms first", () => {
    const docs = ["the cat sat", "the cat sat on the quarterly report", "quarterly report numbers"];
    const scores = bm25("quarterly report", docs);
    const order = rank(scores, undefined, docs.length, 10).map((s) => s.index);
    expect(order[0]).toBe(2);
    expect(order).not.toContain(0);
  });

  it("a query with no words matches nothing", () => {
    expect(bm25("  !!! ", ["anything at all"])).toEqual([]);
  });

  it("property: scores are finite and positive, indices in range, tokenization is bounded", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.array(fc.string({ maxLength: 300 }), { maxLength: 20 }),
        (q, docs) => {
          const s = bm25(q, docs);
          for (const x of s) {
            expect(Number.isFinite(x.score) && x.score > 0).toBe(true);
            expect(x.index >= 0 && x.index < docs.length).toBe(true);
          }
          expect(tokenize(q).every((t) => t.length <= 64)).toBe(true);
        },
      ),
    );
    expect(tokenize("a ".repeat(10_000)).length).toBe(4096);
  });

  it("embeddings rank a memory with no shared word when it is similar enough, and never below the floor", () => {
    const semantic = [cosine([1, 0], [0.9, 0.1]), cosine([1, 0], [0, 1])];
    const r = rank([], semantic, 2, 10);
    expect(r.map((s) => s.index)).toEqual([0]);
    expect(semantic[1]).toBeLessThan(MIN_SIMILARITY);
    expect(cosine([1, 2], [1])).toBe(0);
  });

  it("never returns more than the limit", () => {
    const docs = Array.from({ length: 50 }, (_, i) => `report ${i}`);
    expect(rank(bm25("report", docs), undefined, docs.length, 7)).toHaveLength(7);
  });
});
