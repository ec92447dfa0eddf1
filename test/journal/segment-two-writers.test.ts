// Two writer processes on one segment journal (a daemon and one-shot hook processes do
// this): each batch is written holding the writers' lock after reading what the other
// process completed since this one's last batch — batches appended to the tail it
// knows, and segments the other process rolled to (tiny segments: rolls every few
// batches, by either process). Neither may fork the chain, reuse a seq or lose an
// acknowledged entry; the segments, read directly, verify.
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import {
  MalformedRecord,
  SegmentJournalStore,
  segmentDir,
  segmentRecords,
  verifyJournal,
} from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { ensureBuiltJournal } from "./built-journal.js";
import { type ChildWriter, spawnWriter } from "./child-writer.js";
import { keyringOf, tempDir } from "./helpers.js";

const CHILD = resolve(REPO_ROOT, "test/fixtures/journal/segment-appender.mjs");
const key = generateKeyPair("ed25519");
let t: ReturnType<typeof tempDir>;
let keyFile: string;

beforeAll(() => {
  expect(existsSync(ensureBuiltJournal())).toBe(true);
  t = tempDir("warden-seg2w-");
  keyFile = saveKeyPair(key, t.dir).privatePem;
});
afterAll(() => t.cleanup());

function writer(db: string, signing: "batch" | "entry", count: number): ChildWriter {
  const args = [resolve(REPO_ROOT, "dist"), db, keyFile, "append", "4", "4096", signing, String(count)];
  // A 1 ms pause after each acknowledged append lets the other process take the lock
  // between batches (its busy handler polls), so that the two really alternate.
  return spawnWriter(CHILD, [...args, "stdin", "1"], true);
}

async function segmentsOf(db: string) {
  const seqs: number[] = [];
  for (const r of segmentRecords(segmentDir(db))) {
    if (!(r instanceof MalformedRecord)) seqs.push((r as { seq: number }).seq);
  }
  const report = await verifyJournal(segmentRecords(segmentDir(db)), keyringOf(key));
  return { seqs, report };
}

describe("two writer processes on one segment journal", () => {
  it("each chains onto the batches and segment rolls of the other: no fork, no duplicate seq, nothing acknowledged lost", async () => {
    const per = 240;
    const attempts = 3;
    const runs: string[] = [];
    let interleaved = false;
    for (let attempt = 1; attempt <= attempts && !interleaved; attempt++) {
      const db = join(t.dir, `two-${attempt}.db`);
      const a = writer(db, "batch", per);
      const b = writer(db, attempt % 2 === 0 ? "batch" : "entry", per);
      await Promise.all([a.ready, b.ready]);
      a.go();
      b.go();
      const [ea, eb] = await Promise.all([a.exited, b.exited]);
      expect(ea.code, ea.stderr).toBe(0);
      expect(eb.code, eb.stderr).toBe(0);
      const { seqs, report } = await segmentsOf(db);
      expect(report, JSON.stringify(report)).toMatchObject({ ok: true, checked: 2 * per });
      // Each writer got its own seqs; together they are 1..2*per, once each, all in the segments.
      const all = [...a.acked, ...b.acked].sort((x, y) => x - y);
      expect(all).toEqual(Array.from({ length: 2 * per }, (_, i) => i + 1));
      expect(seqs).toEqual(all);
      // Tiny segments: both processes rolled, and found the other's new segments.
      expect(readdirSync(segmentDir(db)).filter((f) => f.endsWith(".wjs")).length).toBeGreaterThan(5);
      // A third writer opening it finds nothing torn and an index that holds every entry.
      const store = SegmentJournalStore.open(db, { segmentBytes: 4096 });
      try {
        expect(store.tailCuts).toEqual([]);
        expect(await store.count()).toBe(2 * per);
      } finally {
        await store.close();
      }
      const [minA, maxA, minB, maxB] = [
        Math.min(...a.acked),
        Math.max(...a.acked),
        Math.min(...b.acked),
        Math.max(...b.acked),
      ];
      interleaved = minB < maxA && minA < maxB;
      runs.push(`run ${attempt}: a wrote seqs ${minA}..${maxA}, b ${minB}..${maxB}`);
    }
    expect(
      interleaved,
      `the two writers never overlapped in ${attempts} runs, so the race was not exercised (${runs.join("; ")})`,
    ).toBe(true);
  });
});
