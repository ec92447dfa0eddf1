// The segment store: the store conformance suite (with tiny segments, so batches roll
// across files), the index as a derived copy (rebuilt when deleted, behind or altered),
// torn tails cut and journaled, and the earlier SQLite format refused until migrated.
import {
  appendFileSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  migrateToSegments,
  openEmbeddedStore,
  openJournal,
  SegmentJournalStore,
  SqliteJournalStore,
  segmentDir,
  segmentHeaderBytes,
  segmentName,
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
    db.prepare("UPDATE journal_index SET hash = ? WHERE seq = 10").run(`sha256:${"1".repeat(64)}`);
    db.prepare("DELETE FROM journal_index WHERE seq = 4").run();
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

describe("torn batches and rolls, every way a crash can leave them", () => {
  async function twoBatches(path: string) {
    const store = SegmentJournalStore.open(path, { segmentBytes: 1 << 20 });
    const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
    await Promise.all(
      [1, 2, 3].map(() => j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() })),
    );
    await Promise.all(
      [1, 2].map(() => j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() })),
    );
    await j.close();
    await store.close();
  }

  it("a batch cut at any byte (frame, payload, commit record) is cut back to the batch before it, and only that", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await twoBatches(path);
    const dir = segmentDir(path);
    const seg = join(dir, readdirSync(dir).find((f) => f.endsWith(".wjs"))!);
    const whole = readFileSync(seg);
    const firstEnd = firstBatchEnd(whole);
    const cutsAt = new Set<number>([
      firstEnd + 1,
      firstEnd + 4,
      firstEnd + 5,
      whole.length - 1,
      whole.length - 53,
    ]);
    for (let at = firstEnd + 1; at < whole.length; at += 97) cutsAt.add(at);
    for (const at of cutsAt) {
      const p = join(t.dir, `c${at}.db`);
      cpSync(dir, segmentDir(p), { recursive: true });
      writeFileSync(join(segmentDir(p), basename(seg)), whole.subarray(0, at));
      const store = SegmentJournalStore.open(p);
      expect(store.tailCuts, `cut at ${at}`).toEqual([
        expect.objectContaining({ offset: firstEnd, bytes: at - firstEnd }),
      ]);
      const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
      await j.close();
      // The three entries of the first batch, then the journaled cut.
      expect((await store.query({})).map((e) => e.type)).toEqual([
        "dare.policy.decision",
        "dare.policy.decision",
        "dare.policy.decision",
        "warden.journal.tail_cut",
      ]);
      await store.close();
      expect((await verifyJournal(segmentRecords(segmentDir(p)), keyringOf(KEY))).ok).toBe(true);
    }
    t.cleanup();
  });

  it("a roll torn before its header was whole (an empty or partial new segment) is removed and journaled", async () => {
    const t = tempDir();
    for (const partial of [0, 5, 15]) {
      const path = join(t.dir, `r${partial}.db`);
      await twoBatches(path);
      writeFileSync(join(segmentDir(path), segmentName(6)), segmentHeaderBytes(6).subarray(0, partial));
      const store = SegmentJournalStore.open(path);
      expect(store.tailCuts).toEqual([
        expect.objectContaining({ segment: segmentName(6), offset: 0, bytes: partial }),
      ]);
      const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
      const e = await j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() });
      expect(e.seq).toBe(7);
      await j.close();
      await store.close();
      expect((await verifyJournal(segmentRecords(segmentDir(path)), keyringOf(KEY))).checked).toBe(7);
    }
    t.cleanup();
  });
});

/** End of the first batch: just past the first commit record (kind "C", length 48). */
function firstBatchEnd(buf: Buffer): number {
  let at = 16;
  while (buf[at] !== 0x43) at += 5 + buf.readUInt32BE(at + 1);
  return at + 53;
}
