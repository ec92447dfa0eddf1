import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SqliteJournalStore } from "../../src/journal/index.js";
import { filledJournal, tempDir } from "./helpers.js";
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
});
