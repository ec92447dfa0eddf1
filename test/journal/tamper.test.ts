// Attacks on the evidence, as an attacker with write access to the journal file or
// its export would make them. Each must be detected at the right seq with the
// right reason, on both the single-thread and the worker-pool verification path.
import { join } from "node:path";
import { Readable } from "node:stream";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import {
  exportJsonl,
  type JournalEntry,
  openJournal,
  readJsonl,
  SqliteJournalStore,
  sealEntry,
  signHead,
  type VerifyReport,
  verifyJournal,
} from "../../src/journal/index.js";
import { filledJournal, KEY, keyringOf, OTHER_KEY, tempDir } from "./helpers.js";

const N = 10;
let base: Awaited<ReturnType<typeof filledJournal>>;
let lines: string[];

beforeAll(async () => {
  base = await filledJournal(N);
  const chunks: string[] = [];
  await exportJsonl(base.store, (c) => {
    chunks.push(c);
  });
  lines = chunks.join("").trimEnd().split("\n");
});
afterAll(async () => {
  await base.cleanup();
});

const entry = (i: number): JournalEntry => JSON.parse(lines[i - 1]!) as JournalEntry;
const reseal = (e: JournalEntry, key = KEY): JournalEntry =>
  sealEntry({ ...e, key_id: key.keyId }, e.body, canonicalJson(e.body), key.privateKey).entry;

function expectFailure(r: VerifyReport, seq: number, reason: string): void {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect({ seq: r.failure.seq, reason: r.failure.reason }).toEqual({ seq, reason });
  expect(r.checked).toBe(seq - 1);
  expect(r.head?.seq ?? 0).toBe(seq - 1);
}

describe.each([0, 2])("tampering is detected (workers: %i)", (workers) => {
  const verifyLines = (ls: string[], keys = keyringOf(KEY), expectHead?: unknown) =>
    verifyJournal(
      ls.map((l) => JSON.parse(l) as unknown),
      keys,
      expectHead === undefined ? { workers } : { workers, expectHead },
    );
  const replace = (i: number, e: unknown) => lines.map((l, k) => (k === i - 1 ? canonicalJson(e) : l));

  it("accepts the untouched journal and reports its head", async () => {
    const r = await verifyLines(lines);
    expect(r).toEqual({
      ok: true,
      checked: N,
      head: expect.objectContaining({ seq: N, hash: entry(N).hash }),
      keys: [KEY.keyId],
    });
  });

  it("one byte of a body changed: hash_mismatch", async () => {
    const e = entry(5);
    const text = lines[4]!.replace('"observation_count":4', '"observation_count":5');
    expect(text).not.toBe(lines[4]);
    expectFailure(await verifyLines(lines.map((l, k) => (k === 4 ? text : l))), 5, "hash_mismatch");
    expect(e.seq).toBe(5);
  });

  it("a hash changed: hash_mismatch at that entry", async () => {
    const e = entry(4);
    const flipped = `${e.hash.slice(0, 20)}${e.hash[20] === "a" ? "b" : "a"}${e.hash.slice(21)}`;
    expectFailure(await verifyLines(replace(4, { ...e, hash: flipped })), 4, "hash_mismatch");
  });

  it("a signature changed: signature_invalid", async () => {
    const e = entry(6);
    const s = e.signature;
    const flipped = `${s.slice(0, 10)}${s[10] === "A" ? "B" : "A"}${s.slice(11)}`;
    expectFailure(await verifyLines(replace(6, { ...e, signature: flipped })), 6, "signature_invalid");
  });

  it("a signature re-encoded with stray trailing bits: signature_invalid", async () => {
    const e = entry(6);
    const s = e.signature;
    // The last of 86 base64url characters carries 2 unused bits; flipping them decodes to the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(s.at(-1)!);
    const twin = `${s.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(twin, "base64url").equals(Buffer.from(s, "base64url"))).toBe(true);
    expectFailure(await verifyLines(replace(6, { ...e, signature: twin })), 6, "signature_invalid");
  });

  it("a body edited and its hash recomputed, but not re-signed: signature_invalid", async () => {
    const e = entry(7);
    const forged = reseal({ ...e, body: { observation_count: 999 } });
    expectFailure(
      await verifyLines(replace(7, { ...forged, signature: e.signature })),
      7,
      "signature_invalid",
    );
  });

  it("an entry deleted: seq_gap where it was", async () => {
    expectFailure(await verifyLines(lines.filter((_, k) => k !== 4)), 5, "seq_gap");
  });

  it("an entry deleted and the rest renumbered: chain_broken", async () => {
    const rest = lines.slice(5).map((l) => {
      const e = JSON.parse(l) as JournalEntry;
      return canonicalJson({ ...e, seq: e.seq - 1 });
    });
    expectFailure(await verifyLines([...lines.slice(0, 4), ...rest]), 5, "chain_broken");
  });

  it("an entry inserted, signed by the attacker's key: unknown_key", async () => {
    const prev = entry(5);
    const forged = reseal({ ...entry(6), prev_hash: prev.hash, body: { observation_count: 0 } }, OTHER_KEY);
    const ls = [...lines.slice(0, 5), canonicalJson(forged), ...lines.slice(5)];
    expectFailure(await verifyLines(ls), 6, "unknown_key");
  });

  it("an entry inserted claiming the journal's key: signature_invalid", async () => {
    const prev = entry(5);
    const forged = reseal({ ...entry(6), prev_hash: prev.hash, body: { observation_count: 0 } }, OTHER_KEY);
    const ls = [...lines.slice(0, 5), canonicalJson({ ...forged, key_id: KEY.keyId }), ...lines.slice(5)];
    // The hash covers key_id, so swapping the label alone breaks the hash first.
    expectFailure(await verifyLines(ls), 6, "hash_mismatch");
    const relabelled = sealEntry(
      { ...forged, key_id: KEY.keyId },
      forged.body,
      canonicalJson(forged.body),
      OTHER_KEY.privateKey,
    ).entry;
    const ls2 = [...lines.slice(0, 5), canonicalJson(relabelled), ...lines.slice(5)];
    expectFailure(await verifyLines(ls2), 6, "signature_invalid");
  });

  it("two entries swapped: seq_gap at the first", async () => {
    const ls = [...lines];
    [ls[4], ls[5]] = [ls[5]!, ls[4]!];
    expectFailure(await verifyLines(ls), 5, "seq_gap");
  });

  it("two entries swapped and renumbered: chain_broken", async () => {
    const a = entry(5);
    const b = entry(6);
    const ls = replace(5, { ...b, seq: 5 }).map((l, k) => (k === 5 ? canonicalJson({ ...a, seq: 6 }) : l));
    expectFailure(await verifyLines(ls), 5, "chain_broken");
  });

  it("an entry duplicated: seq_gap at the copy", async () => {
    const ls = [...lines.slice(0, 5), lines[4]!, ...lines.slice(5)];
    expectFailure(await verifyLines(ls), 6, "seq_gap");
  });

  it("an entry replaced by one signed with another key, even a keyring key: unknown_key", async () => {
    const forged = reseal({ ...entry(5), body: { observation_count: 1234 } }, OTHER_KEY);
    expectFailure(await verifyLines(replace(5, forged)), 5, "unknown_key");
    expectFailure(await verifyLines(replace(5, forged), keyringOf(KEY, OTHER_KEY)), 5, "unknown_key");
  });

  it("the whole journal re-signed by another key: unknown_key at seq 1", async () => {
    expectFailure(await verifyLines(lines, keyringOf(OTHER_KEY)), 1, "unknown_key");
  });

  it("prev_hash rewritten: chain_broken", async () => {
    expectFailure(
      await verifyLines(replace(3, { ...entry(3), prev_hash: entry(1).hash })),
      3,
      "chain_broken",
    );
  });

  it("the first entries removed: seq_gap at 1", async () => {
    expectFailure(await verifyLines(lines.slice(2)), 1, "seq_gap");
  });

  it("a body that no longer matches its type, signed by the journal key: schema_invalid", async () => {
    const e = entry(1);
    expect(e.type).toBe("dare.policy.decision");
    const forged = reseal({ ...e, body: { ...e.body, result: { decision: "maybe" } } });
    expectFailure(await verifyLines(replace(1, forged)), 1, "schema_invalid");
  });

  it("an unparsable line or an extra field: schema_invalid", async () => {
    const broken = lines.map((l, k) => (k === 2 ? l.slice(0, -3) : l));
    expectFailure(
      await verifyJournal(readJsonlFrom(broken), keyringOf(KEY), { workers }),
      3,
      "schema_invalid",
    );
    expectFailure(await verifyLines(replace(3, { ...entry(3), extra: 1 })), 3, "schema_invalid");
    const dup = lines.map((l, k) => (k === 2 ? l.replace('{"body":', '{"seq":3,"body":') : l));
    expectFailure(await verifyJournal(readJsonlFrom(dup), keyringOf(KEY), { workers }), 3, "schema_invalid");
  });

  it("the tail truncated: undetectable from the chain, detected with the signed head", async () => {
    const head = signHead({ seq: N, hash: entry(N).hash, time: entry(N).time, key_id: KEY.keyId }, KEY);
    const cut = lines.slice(0, N - 3);
    expect((await verifyLines(cut)).ok).toBe(true);
    expectFailure(await verifyLines(cut, keyringOf(KEY), head), N - 2, "truncated");
    expect((await verifyLines(lines, keyringOf(KEY), head)).ok).toBe(true);
  });

  it("the tail rewritten by a key holder after a head was signed: head_mismatch", async () => {
    const head = signHead({ seq: 8, hash: entry(8).hash, time: entry(8).time, key_id: KEY.keyId }, KEY);
    let prev = entry(5);
    const rewritten = [...lines.slice(0, 5)];
    for (let s = 6; s <= N; s++) {
      const e = reseal({
        ...entry(s),
        type: "ObservationsCollected",
        prev_hash: prev.hash,
        body: { observation_count: s * 10 },
      });
      rewritten.push(canonicalJson(e));
      prev = e;
    }
    expect((await verifyLines(rewritten)).ok).toBe(true);
    const r = await verifyLines(rewritten, keyringOf(KEY), head);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.failure).toMatchObject({ seq: 8, reason: "head_mismatch" });
  });

  it("a forged or malformed head: head_invalid", async () => {
    const good = signHead({ seq: 3, hash: entry(3).hash, time: entry(3).time, key_id: KEY.keyId }, KEY);
    const byOther = signHead(
      { seq: 3, hash: entry(3).hash, time: entry(3).time, key_id: KEY.keyId },
      OTHER_KEY,
    );
    const cases: unknown[] = [
      { ...good, seq: 2 },
      { ...byOther, key_id: KEY.keyId },
      byOther,
      { ...good, extra: true },
      "head",
    ];
    for (const h of cases) {
      const r = await verifyLines(lines, keyringOf(KEY), h);
      expect(r.ok ? "ok" : r.failure.reason).toBe("head_invalid");
    }
  });
});

function readJsonlFrom(ls: string[]): AsyncIterable<unknown> {
  return readJsonl(Readable.from([`${ls.join("\n")}\n`]));
}

describe("tampering with the SQLite file", () => {
  const withCopy = async (mutate: (db: Database.Database) => void): Promise<VerifyReport> => {
    const t = tempDir();
    const path = join(t.dir, "copy.db");
    try {
      await base.store.close().catch(() => undefined);
      const src = new Database(base.path, { readonly: true });
      await src.backup(path);
      src.close();
      const db = new Database(path);
      mutate(db);
      db.close();
      const store = SqliteJournalStore.open(path, { readonly: true });
      try {
        return await verifyJournal(store, keyringOf(KEY));
      } finally {
        await store.close();
      }
    } finally {
      t.cleanup();
    }
  };

  it("verifies an untouched copy", async () => {
    expect((await withCopy(() => undefined)).ok).toBe(true);
  });

  it("detects a changed body byte, a changed time, a changed seq and a deleted row", async () => {
    expectFailure(
      await withCopy((db) =>
        db.exec(
          `UPDATE journal_entries SET body = replace(body, '"observation_count":4', '"observation_count":7') WHERE seq = 5`,
        ),
      ),
      5,
      "hash_mismatch",
    );
    expectFailure(
      await withCopy((db) =>
        db.exec("UPDATE journal_entries SET time = '2020-01-01T00:00:00.000Z' WHERE seq = 2"),
      ),
      2,
      "hash_mismatch",
    );
    expectFailure(await withCopy((db) => db.exec("DELETE FROM journal_entries WHERE seq = 7")), 7, "seq_gap");
    expectFailure(
      await withCopy((db) => db.exec("UPDATE journal_entries SET seq = 100 WHERE seq = 10")),
      10,
      "seq_gap",
    );
  });

  it("detects a body that is no longer JSON, or JSON with duplicate keys", async () => {
    expectFailure(
      await withCopy((db) =>
        db.exec(`UPDATE journal_entries SET body = '{"observation_count":' WHERE seq = 3`),
      ),
      3,
      "schema_invalid",
    );
    expectFailure(
      await withCopy((db) =>
        db.exec(
          `UPDATE journal_entries SET body = '{"observation_count":9,"observation_count":2}' WHERE seq = 3`,
        ),
      ),
      3,
      "schema_invalid",
    );
  });
});

describe("key rotation", () => {
  it("accepts entries signed by the new key after a rotation entry signed by the old one", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "rot.db"));
    try {
      const j = await openJournal({ store, signer: KEY });
      await j.append({ type: "ObservationsCollected", body: { observation_count: 1 } });
      const rot = await j.rotateKey(OTHER_KEY);
      const after = await j.append({ type: "ObservationsCollected", body: { observation_count: 2 } });
      expect(rot.key_id).toBe(KEY.keyId);
      expect(rot.body).toMatchObject({ previous_key_id: KEY.keyId, new_key_id: OTHER_KEY.keyId });
      expect(after.key_id).toBe(OTHER_KEY.keyId);
      const r = await verifyJournal(store, keyringOf(KEY));
      expect(r).toMatchObject({ ok: true, checked: 3, keys: [KEY.keyId, OTHER_KEY.keyId] });
      // A journal holding the old key can no longer append.
      const stale = await openJournal({ store, signer: KEY }).catch((e: unknown) => e);
      expect(stale).toMatchObject({ code: "ERR_JOURNAL_KEY_MISMATCH" });

      // The retired (perhaps compromised) key cannot extend the chain.
      const last = (await store.last())!;
      const forged = sealEntry(
        {
          seq: 4,
          time: last.time,
          type: "ObservationsCollected",
          run_id: null,
          trace_id: null,
          prev_hash: last.hash,
          key_id: KEY.keyId,
        },
        { observation_count: 3 },
        '{"observation_count":3}',
        KEY.privateKey,
      ).entry;
      const entries: unknown[] = [];
      for await (const e of store.entries()) entries.push(e);
      const r2 = await verifyJournal([...entries, forged], keyringOf(KEY, OTHER_KEY));
      expect(r2.ok ? null : r2.failure).toMatchObject({ seq: 4, reason: "unknown_key" });
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it("rejects a rotation entry whose new key does not match its key id", async () => {
    const body = {
      previous_key_id: KEY.keyId,
      new_key_id: KEY.keyId,
      new_public_key: OTHER_KEY.publicKey.export({ format: "jwk" }),
    };
    const e = sealEntry(
      {
        seq: 1,
        time: new Date().toISOString(),
        type: "warden.journal.key_rotated",
        run_id: null,
        trace_id: null,
        prev_hash: `sha256:${"0".repeat(64)}`,
        key_id: KEY.keyId,
      },
      body,
      canonicalJson(body),
      KEY.privateKey,
    ).entry;
    const r = await verifyJournal([e], keyringOf(KEY));
    expect(r.ok ? null : r.failure).toMatchObject({ seq: 1, reason: "schema_invalid" });
  });
});
