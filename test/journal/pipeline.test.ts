// The pipelined writer (signingWorkers > 0): appends are chained on a predicted
// head and signed by workers before their transaction; these tests attack the
// prediction — rival writers moving the head, a failing store, close() with
// chunks in flight — and check that the chain stays one chain and that every
// resolved append is stored exactly as it was returned.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import {
  entryHash,
  hashAndSignedText,
  type JournalEntry,
  type JournalStore,
  openJournal,
  type SealedEntry,
  SqliteJournalStore,
  signedText,
  verifyJournal,
} from "../../src/journal/index.js";
import { collect, KEY, keyringOf, RUN, TRACE, tempDir } from "./helpers.js";

let t: ReturnType<typeof tempDir>;
let store: SqliteJournalStore;

beforeEach(() => {
  t = tempDir();
  store = SqliteJournalStore.open(join(t.dir, "j.db"));
});
afterEach(async () => {
  await store.close();
  t.cleanup();
});

const obs = (i: number, tag = "a") => ({
  type: "ObservationsCollected",
  run_id: RUN,
  trace_id: TRACE,
  body: { observation_count: i, writer: tag, note: "héllo ✓ 𝄞" },
});

/** Every resolved entry is stored as returned, and the stored chain verifies. */
async function expectStoredAsResolved(resolved: JournalEntry[], total: number) {
  const stored = (await collect(store)) as JournalEntry[];
  expect(stored).toHaveLength(total);
  for (const e of resolved) expect(stored[e.seq - 1]).toEqual(e);
  expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: total });
}

describe("hashAndSignedText", () => {
  it("is entryHash and signedText in one pass", () => {
    const fields = {
      seq: 7,
      time: "2026-01-02T03:04:05.678Z",
      type: "ObservationsCollected",
      run_id: 'run"with\\quotes',
      trace_id: null,
      prev_hash: entryHash(
        { seq: 1, time: "x", type: "t", run_id: null, trace_id: null, prev_hash: "sha256:0", key_id: "k" },
        "{}",
      ),
      key_id: KEY.keyId,
    };
    const bodyJson = canonicalJson({ a: "é\u2028", b: [1, 2.5, null] });
    const { hash, signed } = hashAndSignedText(fields, bodyJson);
    expect(hash).toBe(entryHash(fields, bodyJson));
    expect(signed).toBe(signedText({ ...fields, hash }, bodyJson));
  });
});

describe("pipelined appends", () => {
  it("keep one chain when two pipelined writers race on one file", async () => {
    const other = SqliteJournalStore.open(store.path);
    const a = await openJournal({ store, signer: KEY, signingWorkers: 2 });
    const b = await openJournal({ store: other, signer: KEY, signingWorkers: 1 });
    try {
      const resolved: JournalEntry[] = [];
      for (let round = 0; round < 4; round++) {
        // Both predicted heads go stale every round: each writer's chunks are
        // chained on its own tail while the other one commits.
        const burst = await Promise.all([
          ...Array.from({ length: 300 }, (_, i) => a.append(obs(i, "a"))),
          ...Array.from({ length: 200 }, (_, i) => b.append(obs(i, "b"))),
        ]);
        resolved.push(...burst);
      }
      expect(new Set(resolved.map((e) => e.seq)).size).toBe(2000);
      await expectStoredAsResolved(resolved, 2000);
    } finally {
      await a.close();
      await b.close();
      await other.close();
    }
  });

  it("re-chains when another writer appended between open and the first append", async () => {
    const a = await openJournal({ store, signer: KEY, signingWorkers: 2 });
    const rival = await openJournal({ store: SqliteJournalStore.open(store.path), signer: KEY });
    try {
      const first = await rival.append(obs(0, "rival"));
      const burst = await Promise.all(Array.from({ length: 200 }, (_, i) => a.append(obs(i))));
      expect(burst[0]!.seq).toBe(2);
      expect(burst[0]!.prev_hash).toBe(first.hash);
      await expectStoredAsResolved([first, ...burst], 201);
    } finally {
      await a.close();
      await rival.store.close();
    }
  });

  it("rejects only the batch whose transaction failed, and chains the rest on what was stored", async () => {
    let failNext = false;
    let commits = 0;
    const flaky: JournalStore = {
      appendBatch: (build: (last: JournalEntry | null) => SealedEntry[]) => {
        commits++;
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error("disk full"));
        }
        return store.appendBatch(build);
      },
      last: () => store.last(),
      head: () => store.head(),
      get: (seq) => store.get(seq),
      count: () => store.count(),
      entries: (from, to) => store.entries(from, to),
      query: (q) => store.query(q),
      close: () => store.close(),
    };
    const j = await openJournal({ store: flaky, signer: KEY, signingWorkers: 2, maxBatch: 64 });
    try {
      const ok1 = await Promise.all(Array.from({ length: 150 }, (_, i) => j.append(obs(i))));
      failNext = true;
      // Chunks behind the failing one were chained on its (never stored) tail.
      const settled = await Promise.allSettled(Array.from({ length: 400 }, (_, i) => j.append(obs(i))));
      const rejected = settled.filter((s) => s.status === "rejected");
      expect(rejected.length).toBeGreaterThan(0);
      expect(rejected.length).toBeLessThanOrEqual(64);
      for (const r of rejected)
        expect((r as PromiseRejectedResult).reason).toMatchObject({ message: "disk full" });
      const ok2 = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const ok3 = await Promise.all(Array.from({ length: 10 }, (_, i) => j.append(obs(i))));
      const resolved = [...ok1, ...ok2, ...ok3];
      expect(resolved.map((e) => e.seq)).toEqual(Array.from({ length: resolved.length }, (_, i) => i + 1));
      await expectStoredAsResolved(resolved, resolved.length);
      expect(commits).toBeGreaterThan(3);
    } finally {
      await j.close();
    }
  });

  it("close() waits for every chunk in flight", async () => {
    const j = await openJournal({ store, signer: KEY, signingWorkers: 2 });
    const pending = Array.from({ length: 700 }, (_, i) => j.append(obs(i)));
    await j.close();
    const resolved = await Promise.all(pending);
    await expectStoredAsResolved(resolved, 700);
    await expect(j.append(obs(1))).rejects.toMatchObject({ code: "ERR_JOURNAL_CLOSED" });
  });

  it("refuses to extend a chain another process rotated away from this key", async () => {
    const { generateKeyPair } = await import("../../src/crypto/index.js");
    const next = generateKeyPair("ed25519");
    const a = await openJournal({ store, signer: KEY, signingWorkers: 2 });
    const rival = await openJournal({ store: SqliteJournalStore.open(store.path), signer: KEY });
    try {
      await Promise.all(Array.from({ length: 100 }, (_, i) => a.append(obs(i))));
      await rival.rotateKey(next);
      // a's prediction still names KEY as current; the transaction must refuse it.
      const settled = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => a.append(obs(i))));
      expect(settled.every((s) => s.status === "rejected")).toBe(true);
      expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({
        code: "ERR_JOURNAL_KEY_MISMATCH",
      });
      expect(await store.count()).toBe(101);
      expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 101 });
    } finally {
      await a.close();
      await rival.store.close();
    }
  });
});
