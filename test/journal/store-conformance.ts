// The conformance suite every JournalStore must pass (SQLite now, PostgreSQL
// later): ordering, atomicity, chain refusal, durability of what resolved, reads.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import {
  GENESIS_HASH,
  type JournalEntry,
  type JournalStore,
  MalformedRecord,
  openJournal,
  type SealedEntry,
  sealEntry,
} from "../../src/journal/index.js";
import { KEY, policyDecision, RUN, TRACE } from "./helpers.js";

export interface StoreFixture {
  store: JournalStore;
  /** Opens a second, independent handle on the same journal (another connection). */
  reopen: () => Promise<JournalStore>;
  cleanup: () => Promise<void>;
}

function sealAfter(last: JournalEntry | null, n: number, type = "ObservationsCollected"): SealedEntry[] {
  const out: SealedEntry[] = [];
  let seq = last?.seq ?? 0;
  let prev = last?.hash ?? GENESIS_HASH;
  for (let i = 0; i < n; i++) {
    const body = { observation_count: seq + 1 };
    const s = sealEntry(
      {
        seq: ++seq,
        time: new Date().toISOString(),
        type,
        run_id: RUN,
        trace_id: TRACE,
        prev_hash: prev,
        key_id: KEY.keyId,
      },
      body,
      JSON.stringify(body),
      KEY.privateKey,
    );
    out.push(s);
    prev = s.entry.hash;
  }
  return out;
}

async function all(store: JournalStore): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const e of store.entries()) {
    if (e instanceof MalformedRecord) throw new Error(`malformed ${e.where}`);
    out.push(e);
  }
  return out;
}

export function runStoreConformance(name: string, make: () => Promise<StoreFixture>): void {
  describe(`JournalStore conformance: ${name}`, () => {
    let fx: StoreFixture;
    beforeEach(async () => {
      fx = await make();
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it("starts empty", async () => {
      expect(await fx.store.last()).toBeNull();
      expect(await fx.store.count()).toBe(0);
      expect(await all(fx.store)).toEqual([]);
      expect(await fx.store.get(1)).toBeNull();
      expect(await fx.store.head()).toBeNull();
    });

    it("stores a batch and reads back exactly what was sealed", async () => {
      let seen: JournalEntry | null | undefined;
      const written = await fx.store.appendBatch((last) => {
        seen = last;
        return sealAfter(last, 3);
      });
      expect(seen).toBeNull();
      expect(written.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await all(fx.store)).toEqual(written);
      expect(await fx.store.last()).toEqual(written[2]);
      expect(await fx.store.get(2)).toEqual(written[1]);
      expect(await fx.store.count()).toBe(3);
      const tail = written[2]!;
      expect(await fx.store.head()).toEqual({
        seq: 3,
        hash: tail.hash,
        time: tail.time,
        key_id: tail.key_id,
      });
    });

    it("hands the builder the last entry read inside the transaction", async () => {
      await fx.store.appendBatch((last) => sealAfter(last, 2));
      const other = await fx.reopen();
      try {
        await other.appendBatch((last) => sealAfter(last, 1));
        let seen: JournalEntry | null = null;
        await fx.store.appendBatch((last) => {
          seen = last;
          return sealAfter(last, 1);
        });
        expect((seen as JournalEntry | null)?.seq).toBe(3);
        expect((await all(fx.store)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      } finally {
        await other.close();
      }
    });

    it("stores nothing from a batch whose builder throws", async () => {
      await fx.store.appendBatch((last) => sealAfter(last, 1));
      await expect(
        fx.store.appendBatch(() => {
          throw new Error("builder fault");
        }),
      ).rejects.toThrow("builder fault");
      expect(await fx.store.count()).toBe(1);
    });

    it("refuses a batch that skips a seq (ERR_JOURNAL_CHAIN_BROKEN) and keeps none of it", async () => {
      await fx.store.appendBatch((last) => sealAfter(last, 1));
      const err = await fx.store
        .appendBatch((last) => {
          const [a, b] = sealAfter(last, 2);
          return [a!, { ...b!, entry: { ...b!.entry, seq: 4 } }];
        })
        .catch((e: unknown) => e);
      expect(hasErrorCode(err, "ERR_JOURNAL_CHAIN_BROKEN")).toBe(true);
      expect(await fx.store.count()).toBe(1);
    });

    it("refuses an entry whose prev_hash is not the head's hash (a fork)", async () => {
      await fx.store.appendBatch((last) => sealAfter(last, 2));
      const fork = await fx.store
        .appendBatch((last) => {
          const [s] = sealAfter(last, 1);
          return [{ ...s!, entry: { ...s!.entry, prev_hash: GENESIS_HASH } }];
        })
        .catch((e: unknown) => e);
      expect(hasErrorCode(fork, "ERR_JOURNAL_CHAIN_BROKEN")).toBe(true);
      expect(await fx.store.count()).toBe(2);
    });

    it("serializes concurrent appends from one process without forking", async () => {
      await Promise.all(Array.from({ length: 40 }, () => fx.store.appendBatch((last) => sealAfter(last, 2))));
      const entries = await all(fx.store);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
      for (let i = 1; i < entries.length; i++) expect(entries[i]!.prev_hash).toBe(entries[i - 1]!.hash);
    });

    it("reads in seq order across page boundaries and from a given seq", async () => {
      await fx.store.appendBatch((last) => sealAfter(last, 2500));
      const seqs: number[] = [];
      for await (const e of fx.store.entries(2400)) if (!(e instanceof MalformedRecord)) seqs.push(e.seq);
      expect(seqs).toEqual(Array.from({ length: 101 }, (_, i) => 2400 + i));
      expect((await all(fx.store)).length).toBe(2500);
      const range: number[] = [];
      for await (const e of fx.store.entries(1990, 2010))
        if (!(e instanceof MalformedRecord)) range.push(e.seq);
      expect(range).toEqual(Array.from({ length: 21 }, (_, i) => 1990 + i));
    });

    it("queries by run, type, time, decision, limit and order", async () => {
      const journal = await openJournal({ store: fx.store, signer: KEY });
      await journal.append({
        type: "dare.policy.decision",
        run_id: RUN,
        trace_id: TRACE,
        body: policyDecision("deny"),
      });
      await journal.append({
        type: "ObservationsCollected",
        run_id: "other-run",
        body: { observation_count: 1 },
      });
      await journal.append({
        type: "dare.policy.decision",
        run_id: RUN,
        trace_id: TRACE,
        body: policyDecision("allow"),
      });
      expect((await fx.store.query({ run_id: RUN })).map((e) => e.seq)).toEqual([1, 3]);
      expect((await fx.store.query({ type: "ObservationsCollected" })).map((e) => e.seq)).toEqual([2]);
      expect((await fx.store.query({ decision: "deny" })).map((e) => e.seq)).toEqual([1]);
      expect((await fx.store.query({ descending: true, limit: 2 })).map((e) => e.seq)).toEqual([3, 2]);
      expect(await fx.store.query({ since: "2999-01-01T00:00:00Z" })).toEqual([]);
      expect((await fx.store.query({ until: "2999-01-01T00:00:00Z" })).length).toBe(3);
      await expect(fx.store.query({ since: "yesterday" })).rejects.toMatchObject({
        code: "ERR_JOURNAL_ENTRY_INVALID",
      });
    });

    it("rejects use after close with ERR_JOURNAL_CLOSED", async () => {
      await fx.store.close();
      await expect(fx.store.last()).rejects.toMatchObject({ code: "ERR_JOURNAL_CLOSED" });
      await expect(fx.store.appendBatch((l) => sealAfter(l, 1))).rejects.toMatchObject({
        code: "ERR_JOURNAL_CLOSED",
      });
    });

    it("keeps what resolved across a reopen", async () => {
      const written = await fx.store.appendBatch((last) => sealAfter(last, 5));
      await fx.store.close();
      const again = await fx.reopen();
      try {
        expect(await all(again)).toEqual(written);
      } finally {
        await again.close();
      }
    });
  });
}
