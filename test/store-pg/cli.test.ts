// `warden db migrate|status` and `warden journal verify --url` against a real PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/index.js";
import { PgJournalStore, SCHEMA_VERSION } from "../../src/store-pg/index.js";
import { runCli } from "../helpers/cli.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { KEY } from "../journal/helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;
let dir: string;
let pub: string;

beforeAll(async () => {
  server = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "warden-db-cli-"));
  pub = join(dir, "journal.pub.pem");
  writeFileSync(pub, KEY.publicKey.export({ type: "spki", format: "pem" }).toString());
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("warden db", () => {
  it("status refuses an unmigrated database (exit 1), migrate (URL from env:NAME) makes it current", async () => {
    process.env.WARDEN_TEST_DB_URL = await freshDatabase(server.connectionString);
    try {
      const before = await runCli("db", "status", "--url", "env:WARDEN_TEST_DB_URL");
      expect(before.code).toBe(1);
      expect(before.out).toMatch(/no Warden schema/);
      const m = await runCli("db", "migrate", "--url", "env:WARDEN_TEST_DB_URL", "--json");
      expect(m.code).toBe(0);
      expect(JSON.parse(m.out)).toMatchObject({
        from: 0,
        applied: Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      });
      expect((await runCli("db", "migrate", "--url", "env:WARDEN_TEST_DB_URL")).out).toMatch(
        /nothing to apply/,
      );
      expect((await runCli("db", "status", "--url", "env:WARDEN_TEST_DB_URL")).code).toBe(0);
    } finally {
      delete process.env.WARDEN_TEST_DB_URL;
    }
  });

  it("an unset env:NAME URL is a usage error, not a connection to a default server", async () => {
    const r = await runCli("db", "migrate", "--url", "env:WARDEN_TEST_NOT_SET");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/ERR_RUNTIME_CONFIG_INVALID/);
  });
});

describe("warden journal verify --url", () => {
  it("verifies the PostgreSQL chain, and fails on a row changed in the database", async () => {
    const url = await freshDatabase(server.connectionString);
    expect((await runCli("db", "migrate", "--url", url)).code).toBe(0);
    const store = new PgJournalStore(poolOf(url));
    const journal = await openJournal({ store, signer: KEY });
    for (let i = 0; i < 5; i++)
      await journal.append({ type: "ObservationsCollected", body: { observation_count: i } });
    await journal.close();
    await store.close();
    const ok = await runCli("journal", "verify", "--url", url, "--keys", pub);
    expect(ok.code, ok.err).toBe(0);
    const pool = poolOf(url, 1);
    await pool.query(`UPDATE journal_entries SET body = '{"observation_count":99}' WHERE seq = 3`);
    await pool.end();
    const bad = await runCli("journal", "verify", "--url", url, "--keys", pub, "--json");
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ ok: false });
  });

  it("refuses both --db and --url, and neither", async () => {
    expect((await runCli("journal", "verify", "--keys", pub)).code).toBe(2);
    expect(
      (await runCli("journal", "verify", "--db", "x", "--url", "postgres://h/db", "--keys", pub)).code,
    ).toBe(2);
  });
});
