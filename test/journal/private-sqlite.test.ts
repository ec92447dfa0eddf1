// The protective-state files beside the journal (principal state, trust tables, message
// nonces) open through one helper: owner-only, WAL, and fsync on every commit.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openPrivateSqlite } from "../../src/journal/index.js";

describe("openPrivateSqlite", () => {
  it("creates the file 0600, in WAL mode with synchronous=FULL", () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-private-"));
    try {
      const db = openPrivateSqlite(join(dir, "state.db"));
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(db.pragma("synchronous", { simple: true })).toBe(2);
      db.close();
      expect(statSync(join(dir, "state.db")).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a file that is not a database is refused with the driver's error (the store wraps it)", () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-private-"));
    try {
      writeFileSync(join(dir, "junk.db"), "x".repeat(4096));
      expect(() => openPrivateSqlite(join(dir, "junk.db"))).toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
