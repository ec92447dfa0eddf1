// The PostgreSQL journal store: the JournalStore conformance suite, the schema start
// check, and the global chain under writers on separate connections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import { openJournal, verifyJournal } from "../../src/journal/index.js";
import { checkSchema, migrate, PgJournalStore, SCHEMA_VERSION } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { KEY, keyringOf } from "../journal/helpers.js";
import { runStoreConformance } from "../journal/store-conformance.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let url: string;

beforeAll(async () => {
  server = await startPostgres();
  url = await freshDatabase(server.connectionString);
  const pool = poolOf(url, 1);
  await migrate(pool);
  await pool.end();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

runStoreConformance("PostgreSQL", async () => {
  const pool = poolOf(url);
  await pool.query("TRUNCATE journal_entries");
  await pool.query("TRUNCATE journal_chains");
  const store = new PgJournalStore(pool, { node: "a" });
  return {
    store,
    reopen: async () => new PgJournalStore(poolOf(url), { node: "b" }),
    cleanup: async () => {
      await store.close();
    },
  };
});

describe("schema versions", () => {
  it("a runtime refuses a database that was never migrated (ERR_RUNTIME_STORE_SCHEMA)", async () => {
    const pool = poolOf(await freshDatabase(server.connectionString), 1);
    try {
      const err = await checkSchema(pool).catch((e: unknown) => e);
      expect(hasErrorCode(err, "ERR_RUNTIME_STORE_SCHEMA")).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it("a runtime refuses an older schema, then starts once `migrate` brought it up to date", async () => {
    const pool = poolOf(await freshDatabase(server.connectionString), 1);
    try {
      expect(await migrate(pool, 1)).toEqual({ from: 0, to: 1, applied: [1] });
      const err = await checkSchema(pool).catch((e: unknown) => e);
      expect(hasErrorCode(err, "ERR_RUNTIME_STORE_SCHEMA")).toBe(true);
      expect((err as Error).message).toMatch(/older/);
      const rest = await migrate(pool);
      expect(rest.applied).toEqual(Array.from({ length: SCHEMA_VERSION - 1 }, (_, i) => i + 2));
      expect(await checkSchema(pool)).toBe(SCHEMA_VERSION);
      expect((await migrate(pool)).applied).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it("a runtime and `migrate` refuse a schema from a newer Warden (unknown version)", async () => {
    const pool = poolOf(await freshDatabase(server.connectionString), 1);
    try {
      await migrate(pool);
      await pool.query("INSERT INTO schema_version (version, description) VALUES ($1, 'future')", [
        SCHEMA_VERSION + 1,
      ]);
      for (const attempt of [checkSchema(pool), migrate(pool)]) {
        const err = await attempt.catch((e: unknown) => e);
        expect(hasErrorCode(err, "ERR_RUNTIME_STORE_SCHEMA")).toBe(true);
      }
    } finally {
      await pool.end();
    }
  });
});

describe("one global chain", () => {
  it("three journals on separate pools appending at once form one chain that verifies", async () => {
    const db = await freshDatabase(server.connectionString);
    const setup = poolOf(db, 1);
    await migrate(setup);
    await setup.end();
    const stores = ["a", "b", "c"].map((node) => new PgJournalStore(poolOf(db, 4), { node }));
    const journals = await Promise.all(stores.map((store) => openJournal({ store, signer: KEY })));
    const acked = await Promise.all(
      journals.map((j, n) =>
        Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            j.append({ type: "ObservationsCollected", body: { observation_count: n * 100 + i } }),
          ),
        ),
      ),
    );
    const seqs = acked
      .flat()
      .map((e) => e.seq)
      .sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: 180 }, (_, i) => i + 1));
    const report = await verifyJournal(stores[0]!, keyringOf(KEY));
    expect(report.ok).toBe(true);
    expect(report.checked).toBe(180);
    for (const j of journals) await j.close();
    for (const s of stores) await s.close();
  });
});
