// `journal verify` on every core (segment-verify.ts): workers check ranges of segments
// alone and the main thread only links them, so the attacks here are the ones a
// range-by-range check could miss — a whole segment deleted, a segment spliced in from
// another journal signed by the same key, a key rotation across ranges, a checkpoint
// the chain scan must still see — plus tampering inside a range. Each time the parallel
// report must equal the one-thread verifier's, and an intact journal must be proven by
// the parallel path itself (not by its fallback).
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  CHECKPOINT,
  openJournal,
  SegmentJournalStore,
  SegmentSource,
  segmentDir,
  segmentRecords,
  signHead,
  verifyChains,
  verifyInParallel,
  verifyJournal,
  verifySource,
} from "../../src/journal/index.js";
import { KEY, keyringOf, OTHER_KEY, tempDir } from "./helpers.js";
import { appendDecisions } from "./verifier-harness.js";

let t: ReturnType<typeof tempDir>;
let batchDir: string;
let entryDir: string;
let twinDir: string;
const NEXT = generateKeyPair("ed25519");

async function write(
  path: string,
  mode: "batch" | "entry",
  rounds: number,
  rotateAt = -1,
  chain: string | null = null,
): Promise<string> {
  const store = SegmentJournalStore.open(path, { segmentBytes: 16 * 1024 });
  let j = await openJournal({ store, signer: KEY, signatureMode: mode });
  if (chain !== null) await j.append({ type: CHECKPOINT, body: { chain, heads: [] } });
  for (let round = 0; round < rounds; round++) {
    if (round === rotateAt) {
      await j.rotateKey(NEXT);
      await j.close();
      j = await openJournal({ store, signer: NEXT, signatureMode: mode });
    }
    await appendDecisions(j, 1 + (round % 7));
    if (chain !== null && round % 20 === 19) await j.append({ type: CHECKPOINT, body: { chain, heads: [] } });
  }
  await j.close();
  await store.close();
  return segmentDir(path);
}

const segs = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".wjs"))
    .sort();

function copy(from: string, name: string): string {
  const dir = join(t.dir, name);
  cpSync(from, dir, { recursive: true });
  rmSync(join(dir, "lock"), { force: true });
  return dir;
}

const keys = keyringOf(KEY);

async function both(dir: string, expectHead?: unknown) {
  const opts = expectHead === undefined ? {} : { expectHead };
  const one = await verifyJournal(segmentRecords(dir), keys, opts);
  const all = await verifySource(new SegmentSource(dir), keys, { ...opts, workers: 2 });
  return { one, all };
}

beforeAll(async () => {
  t = tempDir("warden-parallel-verify-");
  batchDir = await write(join(t.dir, "batch.db"), "batch", 60, 30);
  entryDir = await write(join(t.dir, "entry.db"), "entry", 60);
  twinDir = await write(join(t.dir, "twin.db"), "batch", 60, 30);
}, 120_000);
afterAll(() => t.cleanup());

describe("journal verify on every core agrees with the one-thread verifier", () => {
  it("an intact batch-signed journal with a key rotation mid-way: proven by the parallel path, same report", async () => {
    expect(segs(batchDir).length).toBeGreaterThan(4);
    const parallel = await verifyInParallel(new SegmentSource(batchDir), keys, { workers: 2 });
    const one = await verifyJournal(segmentRecords(batchDir), keys);
    expect(one).toMatchObject({ ok: true });
    expect(parallel).toEqual(one);
    expect((one as { keys: string[] }).keys).toEqual([KEY.keyId, NEXT.keyId]);
  });

  it("an intact entry-signed journal: proven by the parallel path, same report", async () => {
    const parallel = await verifyInParallel(new SegmentSource(entryDir), keys, { workers: 2 });
    const one = await verifyJournal(segmentRecords(entryDir), keys);
    expect(one).toMatchObject({ ok: true });
    expect(parallel).toEqual(one);
  });

  it("a whole segment deleted (every range verifies alone): the link names the gap", async () => {
    const dir = copy(entryDir, "segment-deleted");
    rmSync(join(dir, segs(dir)[2]!));
    const { one, all } = await both(dir);
    expect(one).toMatchObject({ ok: false, failure: { reason: "seq_gap" } });
    expect(all).toEqual(one);
  });

  it("a segment spliced in from another journal signed by the same key: chain_broken at its first entry", async () => {
    const dir = copy(batchDir, "spliced");
    const mine = segs(dir);
    const theirs = segs(twinDir).filter((f) => mine.includes(f));
    const victim = theirs[3]!;
    writeFileSync(join(dir, victim), readFileSync(join(twinDir, victim)));
    const { one, all } = await both(dir);
    expect(one).toMatchObject({
      ok: false,
      failure: { reason: "chain_broken", seq: Number(victim.slice(0, 20)) },
    });
    expect(all).toEqual(one);
  });

  it("a body byte altered inside a range: the same first bad entry", async () => {
    const dir = copy(batchDir, "byte");
    const victim = join(dir, segs(dir)[3]!);
    const buf = readFileSync(victim);
    const at = buf.indexOf('"decision":"allow"') + 13;
    buf[at] = "A".charCodeAt(0);
    writeFileSync(victim, buf);
    const { one, all } = await both(dir);
    expect(one.ok).toBe(false);
    expect(all).toEqual(one);
  });

  it("a chain re-signed by a key the verifier does not trust, segment by segment: unknown_key at entry 1", async () => {
    const other = await write(join(t.dir, "other.db"), "batch", 10);
    const { one, all } = await both(other);
    expect(one.ok).toBe(true);
    const foreign = await verifySource(new SegmentSource(other), keyringOf(OTHER_KEY), { workers: 2 });
    expect(foreign).toEqual(await verifyJournal(segmentRecords(other), keyringOf(OTHER_KEY)));
    expect(foreign).toMatchObject({ ok: false, failure: { seq: 1, reason: "unknown_key" } });
    expect(all).toEqual(one);
  });

  it("the tail cut (last segment removed) against a signed head: truncated, on both", async () => {
    const one0 = await verifyJournal(segmentRecords(entryDir), keys);
    const head = signHead(one0.head!, KEY);
    const dir = copy(entryDir, "cut");
    rmSync(join(dir, segs(dir).at(-1)!));
    const { one, all } = await both(dir, head);
    expect(one).toMatchObject({ ok: false, failure: { reason: "truncated" } });
    expect(all).toEqual(one);
    const intact = await both(entryDir, head);
    expect(intact.one).toMatchObject({ ok: true });
    expect(intact.all).toEqual(intact.one);
  });

  it("a named chain: the chain scan still sees entry 1 and every checkpoint (same chains report)", async () => {
    const named = await write(join(t.dir, "named.db"), "batch", 60, -1, "replica-a");
    const input = { open: () => new SegmentSource(named) };
    const one = await verifyChains([input], keys, { workers: 0 });
    const all = await verifyChains([input], keys, { workers: 2 });
    expect(one).toMatchObject({ ok: true, checkpoints: 4, chains: [{ name: "replica-a" }] });
    expect(all).toEqual(one);
    const wrong = await verifyChains([{ name: "replica-b", open: input.open }], keys, { workers: 2 });
    expect(wrong).toEqual(
      await verifyChains([{ name: "replica-b", open: input.open }], keys, { workers: 0 }),
    );
    expect(wrong.ok).toBe(false);
  });
});
