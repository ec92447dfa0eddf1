// The segment journal's index holds fields and positions only (docs/journal.md §8.6):
// an entry's one copy is its segment record, the index is rebuilt or caught up from
// the segments whatever state it is found in (missing, behind, of the earlier format
// that held whole entries), and an index row that points at other bytes is never
// served as the entry it names.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  openJournal,
  SegmentJournalStore,
  segmentDir,
  segmentRecords,
  verifyJournal,
} from "../../src/journal/index.js";
import { runCli } from "../helpers/cli.js";
import { KEY, keyringOf, policyDecision, RUN, tempDir } from "./helpers.js";

const MARKER = "only-in-the-segment-7f3a9c";

async function fill(path: string, n: number): Promise<void> {
  const store = SegmentJournalStore.open(path, { segmentBytes: 4096 });
  const j = await openJournal({ store, signer: KEY, signatureMode: "batch" });
  for (let i = 0; i < n; i += 3) {
    await Promise.all(
      Array.from({ length: Math.min(3, n - i) }, (_, k) =>
        (i + k) % 2 === 0
          ? j.append({
              type: "dare.policy.decision",
              run_id: RUN,
              body: policyDecision(k % 2 ? "deny" : "allow"),
            })
          : j.append({
              type: "ObservationsCollected",
              run_id: "run-other",
              body: { observation_count: i + k, note: MARKER },
            }),
      ),
    );
  }
  await j.close();
  await store.close();
}

const indexBytes = (path: string): string =>
  ["", "-wal"]
    .map((s) => {
      try {
        return readFileSync(`${path}${s}`).toString("latin1");
      } catch {
        return "";
      }
    })
    .join("");

describe("segment index: fields and positions only", () => {
  it("an entry's body is stored once, in its segment: the index file never holds it, reads still return it", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 12);
    expect(indexBytes(path)).not.toContain(MARKER);
    const store = SegmentJournalStore.open(path, { readonly: true });
    const e = await store.get(2);
    expect(e?.body).toMatchObject({ note: MARKER });
    expect((await store.query({ run_id: "run-other" })).map((x) => x.seq)).toEqual([2, 4, 6, 8, 10, 12]);
    expect((await store.query({ decision: "allow", run_id: RUN })).length).toBeGreaterThan(0);
    const all: number[] = [];
    for await (const x of store.entries(3, 9)) if (!("where" in x)) all.push(x.seq);
    expect(all).toEqual([3, 4, 5, 6, 7, 8, 9]);
    await store.close();
    t.cleanup();
  });

  it("an index behind the segments (at a batch's end or inside one) is caught up on open, one deleted is rebuilt, all with the same rows", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 15);
    const rows = () => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare("SELECT * FROM journal_index ORDER BY seq").all();
      } finally {
        db.close();
      }
    };
    const whole = rows();
    // Batches of 3: seq 6 ends one (read on from its commit record), seq 5 does not (its segment read whole).
    for (const keep of [6, 5]) {
      const db = new Database(path);
      db.prepare("DELETE FROM journal_index WHERE seq > ?").run(keep);
      db.close();
      const store = SegmentJournalStore.open(path);
      expect(await store.count()).toBe(15);
      await store.close();
      expect(rows()).toEqual(whole);
    }
    for (const s of ["", "-wal", "-shm"]) rmSync(`${path}${s}`, { force: true });
    const store = SegmentJournalStore.open(path);
    expect((await store.get(15))?.seq).toBe(15);
    await store.close();
    expect(rows()).toEqual(whole);
    t.cleanup();
  });

  it("two writers of one journal: each handle's index takes the other's batches from the segments, no row lost or doubled", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    const a = SegmentJournalStore.open(path, { segmentBytes: 4096 });
    const b = SegmentJournalStore.open(path, { segmentBytes: 4096 });
    const ja = await openJournal({ store: a, signer: KEY, signatureMode: "batch" });
    const jb = await openJournal({ store: b, signer: KEY, signatureMode: "batch" });
    for (let i = 0; i < 8; i++) {
      const j = i % 2 === 0 ? ja : jb;
      await Promise.all(
        [0, 1].map(() =>
          j.append({ type: "ObservationsCollected", run_id: RUN, body: { observation_count: i } }),
        ),
      );
      expect(await (i % 2 === 0 ? b : a).count()).toBe(2 * (i + 1));
    }
    await ja.close();
    await jb.close();
    const seqs: number[] = [];
    for await (const x of a.entries()) if (!("where" in x)) seqs.push(x.seq);
    expect(seqs).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    await a.close();
    await b.close();
    t.cleanup();
  });

  it("an index of the earlier format (whole entries, no positions) is replaced by a positions index on open", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 6);
    for (const s of ["", "-wal", "-shm"]) rmSync(`${path}${s}`, { force: true });
    // What the first segment journals left: §3's table with every entry whole, and the marker table.
    const db = new Database(path);
    db.exec(
      "CREATE TABLE journal_entries (seq INTEGER PRIMARY KEY, body TEXT); CREATE TABLE journal_index_of_segments (version INTEGER);",
    );
    db.prepare("INSERT INTO journal_entries VALUES (1, ?)").run(JSON.stringify({ note: MARKER }));
    db.close();
    const store = SegmentJournalStore.open(path);
    expect(await store.count()).toBe(6);
    await store.close();
    expect(indexBytes(path)).not.toContain(MARKER);
    t.cleanup();
  });

  it("an index row moved to point at another entry's bytes is refused, never read as the entry it names", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 6);
    const db = new Database(path);
    const six = db.prepare("SELECT segment, offset, length FROM journal_index WHERE seq = 6").get() as {
      segment: number;
      offset: number;
      length: number;
    };
    db.prepare("UPDATE journal_index SET segment = ?, offset = ?, length = ? WHERE seq = 5").run(
      six.segment,
      six.offset,
      six.length,
    );
    db.close();
    const store = SegmentJournalStore.open(path);
    await expect(store.get(5)).rejects.toMatchObject({ code: "ERR_JOURNAL_STORE" });
    const read: (number | string)[] = [];
    for await (const x of store.entries(4, 6)) read.push("where" in x ? `bad ${x.seq}` : x.seq);
    expect(read).toEqual([4, "bad 5", 6]);
    // `journal reindex` puts it right; the segments were never touched.
    expect(await store.reindex()).toBe(6);
    expect((await store.get(5))?.seq).toBe(5);
    await store.close();
    expect((await verifyJournal(segmentRecords(segmentDir(path)), keyringOf(KEY))).checked).toBe(6);
    t.cleanup();
  });

  it("`warden journal reindex` rebuilds the index from the segments; export reads the same entries before and after", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    await fill(path, 9);
    const before = await runCli("journal", "export", "--db", path, "--format", "jsonl");
    expect(before.code).toBe(0);
    const r = await runCli("journal", "reindex", "--db", path, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ indexed: 9 });
    const after = await runCli("journal", "export", "--db", path, "--format", "jsonl");
    expect(after.out).toBe(before.out);
    expect(after.out).toContain(MARKER);
    expect(indexBytes(path)).not.toContain(MARKER);
    t.cleanup();
  });
});
