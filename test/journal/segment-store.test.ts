// The segment store: the store conformance suite (with tiny segments, so batches roll
// across files), the index as a derived copy (rebuilt when deleted, behind or altered),
// torn tails cut and journaled, and the earlier SQLite format refused until migrated.
import { appendFileSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  migrateToSegments,
  openEmbeddedStore,
  openJournal,
  SegmentJournalStore,
  SqliteJournalStore,
  segmentDir,
  segmentRecords,
  verifyJournal,
} from "../../src/journal/index.js";
import { KEY, keyringOf, policyDecision, RUN, tempDir } from "./helpers.js";
import { runStoreConformance } from "./store-conformance.js";

runStoreConformance("segments", async () => {
  const t = tempDir();
  const path = join(t.dir, "j.db");
  const store = SegmentJournalStore.open(path, { segmentBytes: 4096 });
  return {
    store,
    reopen: async () => SegmentJournalStore.open(path, { segmentBytes: 4096 }),
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
});

async function fill(path: string, n: number, segmentBytes = 4096) {
  const store = SegmentJournalStore.open(path, { segmentBytes });
  const j = await openJournal({ store, signer: KEY });
  // Batches of 4: a segment rolls between batches.
  for (let i = 0; i < n; i += 4) {
    const k = Math.min(4, n - i);
    await Promise.all(
      Array.from({ length: k }, () =>
        j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() }),
      ),
    );
  }
  await j.close();
  await store.close();
}

describe("SegmentJournalStore", () => {
  it("rolls segments, reads through the index and verifies from the segments directly", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 40);
    expect(readdirSync(segmentDir(path)).filter((f) => f.endsWith(".wjs")).length).toBeGreaterThan(2);
    const store = SegmentJournalStore.open(path, { readonly: true });
    expect(await store.count()).toBe(40);
    expect((await store.query({ run_id: RUN, decision: "allow" })).length).toBe(40);
    await store.close();
    const report = await verifyJournal(segmentRecords(segmentDir(path)), keyringOf(KEY));
    expect(report.ok).toBe(true);
    expect(report.checked).toBe(40);
    t.cleanup();
  });

  it("an index deleted, or altered to hide an entry, is rebuilt from the segments on open", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 10);
    for (const s of ["", "-wal", "-shm"]) rmSync(`${path}${s}`, { force: true });
    let store = SegmentJournalStore.open(path);
    expect(await store.count()).toBe(10);
    await store.close();
    // The index claims a different head: it is not trusted, it is rebuilt.
    const db = new Database(path);
    db.prepare("UPDATE journal_entries SET hash = ? WHERE seq = 10").run(`sha256:${"1".repeat(64)}`);
    db.prepare("DELETE FROM journal_entries WHERE seq = 4").run();
    db.close();
    store = SegmentJournalStore.open(path);
    expect(await store.count()).toBe(10);
    expect((await store.get(10))?.hash).not.toBe(`sha256:${"1".repeat(64)}`);
    await store.close();
    t.cleanup();
  });

  it("a torn tail is cut back to the last complete batch and the cut is journaled", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 5, 1 << 20);
    const seg = join(segmentDir(path), readdirSync(segmentDir(path)).find((f) => f.endsWith(".wjs"))!);
    const size = statSync(seg).size;
    appendFileSync(seg, Buffer.from([0x45, 0, 0, 1, 0, 0x7b, 0x22]));
    const store = SegmentJournalStore.open(path);
    expect(store.tailCuts).toHaveLength(1);
    expect(statSync(seg).size).toBe(size);
    const j = await openJournal({ store, signer: KEY });
    const cut = await store.query({ type: "warden.journal.tail_cut" });
    expect(cut).toHaveLength(1);
    expect(cut[0]!.body).toMatchObject({ offset: size, bytes: 7 });
    await j.close();
    await store.close();
    expect((await verifyJournal(segmentRecords(segmentDir(path)), keyringOf(KEY))).ok).toBe(true);
    t.cleanup();
  });

  it("a SQLite journal of the earlier format is refused for writing until migrated, then keeps every entry", async () => {
    const t = tempDir();
    const path = join(t.dir, "old.db");
    const old = SqliteJournalStore.open(path);
    const j = await openJournal({ store: old, signer: KEY });
    for (let i = 0; i < 7; i++)
      await j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() });
    await j.close();
    const before = await verifyJournal(old, keyringOf(KEY));
    await old.close();
    expect(() => openEmbeddedStore(path)).toThrow(/journal migrate/);
    expect(await migrateToSegments(path)).toBe(7);
    const after = await verifyJournal(segmentRecords(segmentDir(path)), keyringOf(KEY));
    expect(after.ok && before.ok && after.head).toEqual(before.head);
    const store = openEmbeddedStore(path);
    expect(store).toBeInstanceOf(SegmentJournalStore);
    expect(await store.count()).toBe(7);
    await store.close();
    expect(existsSync(segmentDir(path))).toBe(true);
    writeFileSync(join(t.dir, "x"), "");
    t.cleanup();
  });
});
