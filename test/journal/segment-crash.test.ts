// kill -9 against the segment journal, for real: a child process appends (one at a
// time, and in group-committed bursts whose batches roll across tiny segments) or
// rebuilds the index, and is SIGKILLed at a random moment. After each kill, a writer
// reopens the journal (cutting a torn tail back to its last complete batch and
// journaling the cut) and the segments, read directly, must verify and hold every
// entry whose append resolved: 0 acknowledged entries lost, 0 broken chains.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  MalformedRecord,
  openJournal,
  SegmentJournalStore,
  segmentDir,
  segmentRecords,
  verifyJournal,
} from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { ensureBuiltJournal } from "./built-journal.js";
import { spawnWriter } from "./child-writer.js";
import { keyringOf, tempDir } from "./helpers.js";

const CHILD = resolve(REPO_ROOT, "test/fixtures/journal/segment-appender.mjs");
const key = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let keyFile: string;

beforeAll(() => {
  expect(existsSync(ensureBuiltJournal())).toBe(true);
  t = tempDir("warden-segcrash-");
  keyFile = saveKeyPair(key, t.dir).privatePem;
});
afterAll(() => t.cleanup());

function child(
  db: string,
  mode: "append" | "reindex",
  inflight: number,
  segmentBytes: number,
  signing: string,
) {
  const args = [
    resolve(REPO_ROOT, "dist"),
    db,
    keyFile,
    mode,
    String(inflight),
    String(segmentBytes),
    signing,
  ];
  return spawnWriter(CHILD, args);
}

/** Reopens as a writer (cuts and journals a torn tail), then reads the segments directly. */
async function recoverAndVerify(db: string) {
  const store = SegmentJournalStore.open(db, { segmentBytes: 4096 });
  const cuts = store.tailCuts.length;
  const j = await openJournal({ store, signer: key, signatureMode: "batch" });
  await j.close();
  const indexed = await store.count();
  await store.close();
  const seqs = new Set<number>();
  for (const r of segmentRecords(segmentDir(db))) {
    if (!(r instanceof MalformedRecord)) seqs.add((r as { seq: number }).seq);
  }
  const report = await verifyJournal(segmentRecords(segmentDir(db)), keyringOf(key));
  return { report, seqs, cuts, indexed };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each([
  ["entry", 1 << 20],
  ["batch", 4096],
] as const)("segment journal under kill -9 (signing %s, segments of %i bytes)", (signing, segmentBytes) => {
  it("a writer killed mid-append, mid-batch or mid-roll loses no acknowledged entry and breaks no chain", async () => {
    const db = join(t.dir, `kill-${signing}.db`);
    let acknowledged = 0;
    let cuts = 0;
    for (let i = 0; i < 10; i++) {
      const run = child(db, "append", i % 2 === 0 ? 1 : 48, segmentBytes, signing);
      await run.firstAck;
      await sleep(Math.floor(Math.random() * 120));
      run.child.kill("SIGKILL");
      const { signal, stderr } = await run.exited;
      expect(signal, stderr).toBe("SIGKILL");
      const r = await recoverAndVerify(db);
      expect(r.report.ok, JSON.stringify(r.report)).toBe(true);
      expect(run.acked.filter((s) => !r.seqs.has(s))).toEqual([]);
      // The index, rebuilt or caught up on open, holds what the segments hold.
      expect(r.indexed).toBe(r.seqs.size);
      acknowledged += run.acked.length;
      cuts += r.cuts;
    }
    expect(acknowledged).toBeGreaterThan(10);
    if (segmentBytes === 4096) {
      expect(readdirSync(segmentDir(db)).filter((f) => f.endsWith(".wjs")).length).toBeGreaterThan(10);
    }
    // Every file the children created is the owner's only.
    for (const f of readdirSync(segmentDir(db))) {
      expect((statSync(join(segmentDir(db), f)).mode & 0o777).toString(8), f).toBe("600");
    }
    expect(cuts).toBeGreaterThanOrEqual(0);
  });
});

describe("index rebuild under kill -9", () => {
  it("a process killed while rebuilding the index leaves an index the next open repairs, and no entry lost", async () => {
    const db = join(t.dir, "reindex.db");
    const w = child(db, "append", 32, 8192, "batch");
    while (w.acked.length < 600) await sleep(20);
    w.child.kill("SIGKILL");
    await w.exited;
    const base = await recoverAndVerify(db);
    for (let i = 0; i < 6; i++) {
      const r = child(db, "reindex", 1, 8192, "batch");
      await r.ready;
      await sleep(Math.floor(Math.random() * 200));
      r.child.kill("SIGKILL");
      await r.exited;
      const after = await recoverAndVerify(db);
      expect(after.report.ok, JSON.stringify(after.report)).toBe(true);
      expect(after.indexed).toBe(after.seqs.size);
      for (const s of base.seqs) expect(after.seqs.has(s)).toBe(true);
    }
  });
});
