// The SQLite trust store: scores and quarantines survive a restart, the file is 0600, a
// corrupt row fails closed; journaled steps re-derive a score (`warden trust explain`).
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { builtinEventTypes, openJournal, SqliteJournalStore } from "../../src/journal/index.js";
import {
  HOUR_MS,
  journalTrustChange,
  registerTrustEventTypes,
  SqliteTrustStore,
  TrustEngine,
} from "../../src/trust/index.js";
import { runCli } from "../helpers/cli.js";

const T0 = Date.parse("2026-03-01T00:00:00Z");
const tmp = () => mkdtempSync(join(tmpdir(), "warden-trust-"));

describe("SqliteTrustStore", () => {
  it("a quarantined agent is still quarantined, with its score and count, after a restart", async () => {
    const path = join(tmp(), "trust.db");
    const first = new TrustEngine({ store: SqliteTrustStore.open(path), clock: () => T0 });
    for (let i = 0; i < 3; i++) await first.apply({ subject: "b", event: "policy_violation", at: T0 + i });
    await first.apply({ subject: "c", event: "task_success", at: T0 });
    await first.store.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);

    const second = new TrustEngine({ store: SqliteTrustStore.open(path), clock: () => T0 + 1000 });
    expect(await second.view("b")).toMatchObject({
      status: "quarantined",
      score: 0.131072,
      interactions: 3,
      quarantineCount: 1,
    });
    expect((await second.view("c")).score).toBe(0.51);
    const [expired] = await second.tick(T0 + 2 * HOUR_MS);
    expect(expired?.view).toMatchObject({ subject: "b", status: "active", score: 0.5 });
    await second.store.close();
  });

  it("a corrupt row fails closed instead of reading as a fresh score", async () => {
    const path = join(tmp(), "trust.db");
    const store = SqliteTrustStore.open(path);
    await new TrustEngine({ store, clock: () => T0 }).apply({ subject: "b", event: "task_failure" });
    await store.close();
    const db = new Database(path);
    db.prepare("UPDATE trust_rows SET record = ?").run('{"truster":"deployment","subject":"b","score":2}');
    db.close();
    const again = new TrustEngine({ store: SqliteTrustStore.open(path), clock: () => T0 });
    await expect(again.view("b")).rejects.toMatchObject({ code: "ERR_TRUST_STORE_CORRUPT" });
    await expect(again.apply({ subject: "b", event: "task_success" })).rejects.toMatchObject({
      code: "ERR_TRUST_STORE_CORRUPT",
    });
    await again.store.close();
  });

  it("an unopenable path is a coded error", () => {
    expect(() => SqliteTrustStore.open(join(tmp(), "missing-dir", "t.db"))).toThrowError(
      expect.objectContaining({ code: "ERR_TRUST_STORE_OPEN" }),
    );
  });
});

describe("journaled trust steps and warden trust explain", () => {
  it("re-derives the score from the journal, step by step with its source ECTs", async () => {
    const dir = tmp();
    const registry = builtinEventTypes();
    registerTrustEventTypes(registry);
    const journal = await openJournal({
      store: SqliteJournalStore.open(join(dir, "j.db")),
      signer: generateKeyPair("ed25519"),
      registry,
    });
    const engine = new TrustEngine({ store: SqliteTrustStore.open(join(dir, "trust.db")), clock: () => T0 });
    const events = [
      "task_success",
      "task_failure",
      "policy_violation",
      "policy_violation",
      "policy_violation",
    ] as const;
    for (const [i, event] of events.entries()) {
      await journalTrustChange(
        journal,
        await engine.apply({ subject: "b", event, at: T0 + i * 1000, ect: `ect-${i}` }),
      );
    }
    await journalTrustChange(journal, (await engine.tick(T0 + 2 * HOUR_MS))[0]!);
    await journal.close();
    await engine.store.close();

    const r = await runCli("trust", "explain", "b", "--journal", join(dir, "j.db"), "--json");
    expect(r.code).toBe(0);
    const d = JSON.parse(r.out);
    expect(
      d.steps.map((s: { kind: string; ect: string | null; after: number }) => [s.kind, s.ect, s.after]),
    ).toEqual([
      ["task_success", "ect-0", 0.51],
      ["task_failure", "ect-1", 0.408],
      ["policy_violation", "ect-2", 0.26112],
      ["policy_violation", "ect-3", 0.1671168],
      ["policy_violation", "ect-4", 0.106954752],
      ["quarantine_expired", null, 0.5],
    ]);
    expect(d.score).toBe(0.5);
    expect(d.breaks).toEqual([]);
    const text = await runCli("trust", "explain", "b", "--journal", join(dir, "j.db"));
    expect(text.out).toContain("policy_violation ect=ect-4: 0.1671168 -> 0.106954752");
  });
});
