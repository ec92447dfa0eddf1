// Segment format 2 (docs/journal.md §8): the commit record's SHA-256 covers the batch's
// entry hashes and signatures, not the records' bytes, so a batch costs one SHA-256
// pass per body. Segments of format 1 still read and verify (both verifiers), are never
// appended to (a writer rolls to a format-2 segment), and `warden journal migrate`
// upgrades them in place, verified before and after. A crash that leaves a batch's
// commit record on disk but a page of its bodies not is still cut on the next open.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { saveKeyPair } from "../../src/crypto/index.js";
import {
  openJournal,
  SegmentJournalStore,
  segmentDir,
  segmentRecords,
  verifyJournal,
} from "../../src/journal/index.js";
import { REPO_ROOT } from "../helpers/repo.js";
import { tamperSegmentEntry } from "../helpers/tamper-segments.js";
import { commitInput, encodeSegment, independentVerify, readBatches } from "./docs-verifier.js";
import { KEY, keyringOf, policyDecision, RUN, tempDir } from "./helpers.js";
import { appendDecisions, wardenVerify } from "./verifier-harness.js";

const wjs = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".wjs"))
    .sort();
const magicOf = (dir: string, f: string) => readFileSync(join(dir, f)).subarray(0, 8).toString("latin1");

async function write(path: string, rounds: number, segmentBytes = 8192): Promise<void> {
  const store = SegmentJournalStore.open(path, { segmentBytes });
  const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
  for (let r = 0; r < rounds; r++) await appendDecisions(j, 1 + (r % 4));
  await j.close();
  await store.close();
}

/** Rewrites every segment of `dir` in format 1, as a journal written before format 2 is. */
function toFormat1(dir: string): void {
  for (const f of wjs(dir)) {
    const first = Number(f.slice(0, 20));
    writeFileSync(
      join(dir, f),
      encodeSegment(first, readBatches(readFileSync(join(dir, f)), first).batches, 1),
    );
  }
}

describe("segment format 2", () => {
  it("the commit record's SHA-256 is over the entries' hashes and signatures, not over the records' bytes", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await write(path, 6);
    const dir = segmentDir(path);
    for (const f of wjs(dir)) {
      const buf = readFileSync(join(dir, f));
      expect(buf.subarray(0, 8).toString("latin1")).toBe("WJSEG02\n");
      let at = 16;
      while (at < buf.length) {
        const start = at;
        const payloads: Buffer[] = [];
        while (buf[at] === 0x45) {
          const len = buf.readUInt32BE(at + 1);
          payloads.push(buf.subarray(at + 5, at + 5 + len));
          at += 5 + len;
        }
        const digest = buf.subarray(at + 21, at + 53);
        expect(createHash("sha256").update(commitInput(payloads)!).digest()).toEqual(digest);
        expect(createHash("sha256").update(buf.subarray(start, at)).digest()).not.toEqual(digest);
        at += 53;
      }
    }
    t.cleanup();
  });

  it("a journal of format-1 segments still reads and verifies (both verifiers); a writer appends in a new format-2 segment", async () => {
    const t = tempDir();
    const path = join(t.dir, "old.db");
    await write(path, 8);
    const dir = segmentDir(path);
    toFormat1(dir);
    for (const s of ["", "-wal", "-shm"]) rmSync(`${path}${s}`, { force: true });
    const before = wjs(dir);
    expect(before.every((f) => magicOf(dir, f) === "WJSEG01\n")).toBe(true);
    const pub = saveKeyPair(KEY, t.dir).publicPem;
    expect(independentVerify(dir, [KEY.publicKey])).toMatchObject({ ok: true });
    expect(wardenVerify(dir, pub, t.dir)).toEqual(independentVerify(dir, [KEY.publicKey]));
    const n = (await verifyJournal(segmentRecords(dir), keyringOf(KEY))).checked;
    // Open for writing (index rebuilt from the format-1 segments), append: the tail is never extended.
    const store = SegmentJournalStore.open(path, { segmentBytes: 1 << 20 });
    expect(await store.count()).toBe(n);
    const tailSize = readFileSync(join(dir, before.at(-1)!)).length;
    const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
    await j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() });
    await j.close();
    expect(await store.count()).toBe(n + 1);
    await store.close();
    const after = wjs(dir);
    expect(after).toHaveLength(before.length + 1);
    expect(readFileSync(join(dir, before.at(-1)!)).length).toBe(tailSize);
    expect(magicOf(dir, after.at(-1)!)).toBe("WJSEG02\n");
    expect(independentVerify(dir, [KEY.publicKey])).toEqual({ ok: true, checked: n + 1 });
    expect(wardenVerify(dir, pub, t.dir)).toEqual({ ok: true, checked: n + 1 });
    t.cleanup();
  });

  it("a format-1 tail holding no batch yet is rewritten as a format-2 header in place", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await write(path, 3, 1 << 20);
    const dir = segmentDir(path);
    toFormat1(dir);
    const next = (await verifyJournal(segmentRecords(dir), keyringOf(KEY))).checked + 1;
    const empty = `${String(next).padStart(20, "0")}.wjs`;
    writeFileSync(join(dir, empty), encodeSegment(next, [], 1));
    const store = SegmentJournalStore.open(path);
    const j = await openJournal({ store, signer: KEY });
    await j.append({ type: "dare.policy.decision", run_id: RUN, body: policyDecision() });
    await j.close();
    await store.close();
    expect(wjs(dir).at(-1)).toBe(empty);
    expect(magicOf(dir, empty)).toBe("WJSEG02\n");
    expect((await verifyJournal(segmentRecords(dir), keyringOf(KEY))).checked).toBe(next);
    t.cleanup();
  });

  it("a crash that wrote the last batch's commit record but not a page of its bodies: the batch is cut on open, nothing before it", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await write(path, 5, 1 << 20);
    const dir = segmentDir(path);
    const [seg] = wjs(dir);
    const file = join(dir, seg!);
    const buf = readFileSync(file);
    const { batches } = readBatches(buf, 1);
    const last = batches.at(-1)!;
    const lastStart = buf.indexOf(last.payloads[0]!) - 5;
    const kept = batches.slice(0, -1).reduce((n, b) => n + b.payloads.length, 0);
    // A page of the last batch's first body never reached the disk: zeros, hash and signature intact.
    buf.fill(0, lastStart + 40, lastStart + 90);
    writeFileSync(file, buf);
    const store = SegmentJournalStore.open(path);
    expect(store.tailCuts).toEqual([
      expect.objectContaining({ offset: lastStart, reason: expect.stringMatching(/does not hash/) }),
    ]);
    expect(readFileSync(file).length).toBe(lastStart);
    expect(await store.count()).toBe(kept);
    await store.close();
    expect(await verifyJournal(segmentRecords(dir), keyringOf(KEY))).toMatchObject({
      ok: true,
      checked: kept,
    });
    t.cleanup();
  });

  it("warden journal migrate upgrades format-1 segments in place (verified before and after); records keep their places, the index stays true", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await write(path, 8);
    const dir = segmentDir(path);
    // The index is built on format 2; the segments then become format 1 with every record in place.
    const opened = SegmentJournalStore.open(path, { readonly: true });
    const n = await opened.count();
    await opened.close();
    toFormat1(dir);
    const pub = saveKeyPair(KEY, t.dir).publicPem;
    const bin = resolve(REPO_ROOT, "bin/warden.js");
    const migrate = () =>
      execFileSync(process.execPath, [bin, "journal", "migrate", "--db", path, "--keys", pub, "--json"], {
        encoding: "utf8",
      });
    const out = JSON.parse(migrate()) as { upgraded: string[]; format: number };
    expect(out.upgraded).toEqual(wjs(dir));
    expect(wjs(dir).every((f) => magicOf(dir, f) === "WJSEG02\n")).toBe(true);
    expect(readdirSync(t.dir).filter((f) => f.includes("upgrading"))).toEqual([]);
    expect(wardenVerify(dir, pub, t.dir)).toEqual({ ok: true, checked: n });
    expect(independentVerify(dir, [KEY.publicKey])).toEqual({ ok: true, checked: n });
    // The index was not rebuilt and still reads every entry at its position.
    const store = SegmentJournalStore.open(path, { readonly: true });
    expect((await store.query({ run_id: RUN })).length).toBe(n);
    expect((await store.get(n))?.seq).toBe(n);
    await store.close();
    // Run again: nothing to do.
    expect(JSON.parse(migrate())).toMatchObject({ upgraded: [] });
    t.cleanup();
  });

  it("a format-1 journal that does not verify is not migrated: its segments are left as they were", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await write(path, 6);
    const dir = segmentDir(path);
    toFormat1(dir);
    tamperSegmentEntry(path, '"allow"', '"ALLOW"');
    const bytes = wjs(dir).map((f) => readFileSync(join(dir, f)));
    const pub = saveKeyPair(KEY, t.dir).publicPem;
    const bin = resolve(REPO_ROOT, "bin/warden.js");
    const r = spawnSync(process.execPath, [bin, "journal", "migrate", "--db", path, "--keys", pub], {
      encoding: "utf8",
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/not migrated/);
    expect(wjs(dir).map((f) => readFileSync(join(dir, f)))).toEqual(bytes);
    t.cleanup();
  });
});
