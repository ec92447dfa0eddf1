import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openJournal, SqliteJournalStore, verifyJournal } from "../../src/journal/index.js";
import {
  filledJournal,
  gateDecision,
  KEY,
  keyringOf,
  OTHER_KEY,
  policyDecision,
  tempDir,
} from "./helpers.js";
import { runStoreConformance } from "./store-conformance.js";

runStoreConformance("sqlite", async () => {
  const t = tempDir();
  const path = join(t.dir, "j.db");
  const store = SqliteJournalStore.open(path);
  return {
    store,
    reopen: async () => SqliteJournalStore.open(path),
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
});

runStoreConformance("sqlite, durability os", async () => {
  const t = tempDir();
  const path = join(t.dir, "j.db");
  const store = SqliteJournalStore.open(path, { durability: "os" });
  return {
    store,
    reopen: async () => SqliteJournalStore.open(path, { durability: "os" }),
    cleanup: async () => {
      await store.close();
      t.cleanup();
    },
  };
});

describe("SqliteJournalStore", () => {
  it("uses WAL, synchronous=FULL and the documented table and indexes", async () => {
    const j = await filledJournal(1);
    try {
      const db = new Database(j.path, { readonly: true });
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      const cols = (db.pragma("table_xinfo(journal_entries)") as { name: string }[]).map((c) => c.name);
      expect(cols).toEqual([
        "seq",
        "time",
        "type",
        "run_id",
        "trace_id",
        "prev_hash",
        "hash",
        "key_id",
        "signature",
        "body",
        "decision",
      ]);
      const indexes = (
        db
          .prepare("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'journal_entries_%'")
          .all() as { name: string }[]
      ).map((r) => r.name);
      expect(indexes.sort()).toEqual([
        "journal_entries_decision",
        "journal_entries_run",
        "journal_entries_time",
        "journal_entries_type",
      ]);
      db.close();
    } finally {
      await j.cleanup();
    }
  });

  it("fsyncs every commit by default (synchronous=FULL); durability os is the opt-in NORMAL", async () => {
    const t = tempDir();
    try {
      const full = SqliteJournalStore.open(join(t.dir, "full.db"));
      const os = SqliteJournalStore.open(join(t.dir, "os.db"), { durability: "os" });
      expect(full.synchronous).toBe(2);
      expect(os.synchronous).toBe(1);
      await full.close();
      await os.close();
      expect(() =>
        SqliteJournalStore.open(join(t.dir, "x.db"), { durability: "none" as unknown as "os" }),
      ).toThrow(expect.objectContaining({ code: "ERR_JOURNAL_STORE" }));
    } finally {
      t.cleanup();
    }
  });

  it("a journal another local user could read: the file, its -wal and -shm are created 0600", async () => {
    const t = tempDir();
    const path = join(t.dir, "j.db");
    const store = SqliteJournalStore.open(path);
    try {
      const j = await openJournal({ store, signer: KEY });
      await j.append({ type: "ObservationsCollected", body: { observation_count: 1 } });
      for (const f of [path, `${path}-wal`, `${path}-shm`]) {
        expect((statSync(f).mode & 0o777).toString(8), f).toBe("600");
      }
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it("derives the decision column from the signed body", async () => {
    const j = await filledJournal(4);
    try {
      const db = new Database(j.path, { readonly: true });
      const rows = db.prepare("SELECT seq, decision FROM journal_entries ORDER BY seq").all();
      expect(rows).toEqual([
        { seq: 1, decision: "allow" },
        { seq: 2, decision: null },
        { seq: 3, decision: null },
        { seq: 4, decision: "deny" },
      ]);
      db.close();
    } finally {
      await j.cleanup();
    }
  });

  it("refuses to open a missing file read-only, and a file that is not a journal", async () => {
    const t = tempDir();
    try {
      expect(() => SqliteJournalStore.open(join(t.dir, "none.db"), { readonly: true })).toThrow(
        expect.objectContaining({ code: "ERR_JOURNAL_STORE" }),
      );
      expect(existsSync(join(t.dir, "none.db"))).toBe(false);
      const other = join(t.dir, "other.db");
      new Database(other).exec("CREATE TABLE t (x)");
      expect(() => SqliteJournalStore.open(other, { readonly: true })).toThrow(
        expect.objectContaining({ code: "ERR_JOURNAL_STORE" }),
      );
    } finally {
      t.cleanup();
    }
  });

  it("refuses a journal written by a newer schema version", () => {
    const t = tempDir();
    try {
      const path = join(t.dir, "future.db");
      const db = new Database(path);
      db.pragma("user_version = 99");
      db.close();
      expect(() => SqliteJournalStore.open(path)).toThrow(
        expect.objectContaining({ code: "ERR_JOURNAL_STORE" }),
      );
    } finally {
      t.cleanup();
    }
  });

  it("derives the decision of the Gate's merged decision entry (warden.gate.decision)", async () => {
    const t = tempDir();
    const store = SqliteJournalStore.open(join(t.dir, "j.db"));
    try {
      const j = await openJournal({ store, signer: KEY });
      await j.append({ type: "warden.gate.decision", body: gateDecision("step_up") });
      await j.append({ type: "dare.policy.decision", body: policyDecision("allow") });
      expect((await store.query({ decision: "step_up" })).map((e) => e.seq)).toEqual([1]);
      expect((await store.query({ decision: "deny" })).map((e) => e.seq)).toEqual([]);
      expect((await store.query({ decision: "allow" })).map((e) => e.seq)).toEqual([2]);
    } finally {
      await store.close();
      t.cleanup();
    }
  });

  it.each(["fsync", "os"] as const)(
    "extends the head it wrote without reading it back, unharmed by a caller changing that entry (durability: %s)",
    async (durability) => {
      const t = tempDir();
      const path = join(t.dir, "j.db");
      const store = SqliteJournalStore.open(path, { durability });
      const other = SqliteJournalStore.open(path, { durability });
      try {
        const j = await openJournal({ store, signer: KEY });
        const rotation = await j.rotateKey(OTHER_KEY);
        // The returned entry is the caller's: changing it must not steer the chain.
        (rotation.body as { new_key_id: string }).new_key_id = KEY.keyId;
        const many = await Promise.all(
          Array.from({ length: 37 }, (_, i) =>
            j.append({ type: "ObservationsCollected", body: { observation_count: i } }),
          ),
        );
        expect(many.map((e) => e.key_id)).toEqual(Array(37).fill(OTHER_KEY.keyId));
        // Another handle moves the head: the next batch is chained on the row it wrote.
        const j2 = await openJournal({ store: other, signer: OTHER_KEY });
        await j2.append({ type: "ObservationsCollected", body: { observation_count: 100 } });
        expect(
          (await j.append({ type: "ObservationsCollected", body: { observation_count: 101 } })).seq,
        ).toBe(40);
        expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 40 });
      } finally {
        await store.close();
        await other.close();
        t.cleanup();
      }
    },
  );

  it("migrates a journal file with the version 1 schema: same rows, new decision column", async () => {
    const t = tempDir();
    try {
      // Signed entries, written by today's store, then moved into a file with the old schema.
      const src = join(t.dir, "src.db");
      const srcStore = SqliteJournalStore.open(src);
      const j = await openJournal({ store: srcStore, signer: KEY });
      await j.append({ type: "warden.gate.decision", body: gateDecision("deny") });
      await j.append({ type: "dare.policy.decision", body: policyDecision("allow") });
      await j.append({ type: "ObservationsCollected", body: { observation_count: 1 } });
      await srcStore.close();
      const path = join(t.dir, "v1.db");
      const old = new Database(path);
      old.pragma("journal_mode = WAL");
      old.exec(V1_SCHEMA);
      old.pragma("user_version = 1");
      old.exec(`ATTACH DATABASE '${src}' AS src`);
      old.exec(`INSERT INTO journal_entries (${V1_COLUMNS}) SELECT ${V1_COLUMNS} FROM src.journal_entries`);
      old.exec("DETACH DATABASE src");
      expect(old.prepare("SELECT seq, decision FROM journal_entries ORDER BY seq").all()).toEqual([
        { seq: 1, decision: null },
        { seq: 2, decision: "allow" },
        { seq: 3, decision: null },
      ]);
      old.close();

      const store = SqliteJournalStore.open(path);
      try {
        expect((await store.query({ decision: "deny" })).map((e) => e.seq)).toEqual([1]);
        expect((await store.query({ decision: "allow" })).map((e) => e.seq)).toEqual([2]);
        expect(await verifyJournal(store, keyringOf(KEY))).toMatchObject({ ok: true, checked: 3 });
        const j2 = await openJournal({ store, signer: KEY });
        await j2.append({ type: "warden.gate.decision", body: gateDecision("deny") });
        expect((await store.query({ decision: "deny" })).map((e) => e.seq)).toEqual([1, 4]);
      } finally {
        await store.close();
      }
      const db = new Database(path, { readonly: true });
      expect(db.pragma("user_version", { simple: true })).toBe(2);
      const cols = (db.pragma("table_xinfo(journal_entries)") as { name: string }[]).map((c) => c.name);
      expect(cols.at(-1)).toBe("decision");
      expect(
        db.prepare("SELECT name FROM sqlite_master WHERE name = 'journal_entries_decision'").get(),
      ).toBeDefined();
      db.close();
      // Opening again is a no-op.
      await SqliteJournalStore.open(path).close();
    } finally {
      t.cleanup();
    }
  });
});

const V1_COLUMNS = "seq, time, type, run_id, trace_id, prev_hash, hash, key_id, signature, body";
// The schema as version 1 created it (user_version = 1).
const V1_SCHEMA = `
CREATE TABLE IF NOT EXISTS journal_entries (
  seq       INTEGER PRIMARY KEY CHECK (seq >= 1),
  time      TEXT NOT NULL,
  type      TEXT NOT NULL,
  run_id    TEXT,
  trace_id  TEXT,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL,
  key_id    TEXT NOT NULL,
  signature TEXT NOT NULL,
  body      TEXT NOT NULL,
  decision  TEXT GENERATED ALWAYS AS (
    CASE
      WHEN type IN ('dare.policy.decision', 'gate.policy.decision') THEN json_extract(body, '$.result.decision')
      WHEN type IN ('dare.tool.response', 'gate.tool.response') THEN json_extract(body, '$.policy.decision')
      WHEN type IN ('dare.hitl.decision', 'gate.hitl.decision') THEN json_extract(body, '$.decision.action')
    END
  ) VIRTUAL
) STRICT;
CREATE INDEX IF NOT EXISTS journal_entries_run ON journal_entries (run_id, seq);
CREATE INDEX IF NOT EXISTS journal_entries_time ON journal_entries (time);
CREATE INDEX IF NOT EXISTS journal_entries_type ON journal_entries (type, seq);
CREATE INDEX IF NOT EXISTS journal_entries_decision ON journal_entries (decision, seq);
`;
