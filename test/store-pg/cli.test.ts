// `warden db migrate|status` and `warden journal verify --url` against a real PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/index.js";
import { ChainCheckpointer, PgJournalStore, SCHEMA_VERSION } from "../../src/store-pg/index.js";
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

/**
 * Two replicas' chains as distributed mode writes them: a and b, each opened by its checkpoint;
 * b appends, then a checkpoints (naming b's head, seq `named`), then b appends more.
 */
async function fleetJournal(): Promise<{ url: string; named: number }> {
  const url = await freshDatabase(server.connectionString);
  expect((await runCli("db", "migrate", "--url", url)).code).toBe(0);
  const pool = poolOf(url);
  const open = async (chain: string) => {
    const journal = await openJournal({
      store: new PgJournalStore(pool, { chain, node: chain, ownsPool: false }),
      signer: KEY,
    });
    const checkpoints = new ChainCheckpointer({ pool, journal, chain, everyMs: 3_600_000 });
    await checkpoints.start();
    return { journal, checkpoints };
  };
  const a = await open("a");
  const b = await open("b");
  const note = (i: number) => ({ type: "ObservationsCollected", body: { observation_count: i } });
  for (let i = 0; i < 4; i++) await b.journal.append(note(i));
  await a.checkpoints.checkpoint();
  const named = (await b.journal.head())!.seq;
  for (let i = 0; i < 3; i++) await b.journal.append(note(i));
  for (const r of [a, b]) {
    await r.checkpoints.stop(false);
    await r.journal.close();
  }
  await pool.end();
  return { url, named };
}

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

  it("verifies every replica's chain together; export per chain verifies offline the same", async () => {
    const { url } = await fleetJournal();
    const ok = await runCli("journal", "verify", "--url", url, "--keys", pub, "--json");
    expect(ok.code, ok.out + ok.err).toBe(0);
    const report = JSON.parse(ok.out) as { chains: { name: string }[]; references: number };
    expect(report.chains.map((c) => c.name)).toEqual(["a", "b"]);
    expect(report.references).toBeGreaterThan(0);
    const files = ["a", "b"].map((c) => join(dir, `${c}-${Date.now()}.jsonl`));
    for (const [i, c] of ["a", "b"].entries()) {
      const r = await runCli(
        "journal",
        "export",
        "--url",
        url,
        "--chain",
        c,
        "--format",
        "jsonl",
        "--out",
        files[i]!,
      );
      expect(r.code, r.err).toBe(0);
    }
    const offline = await runCli("journal", "verify", "--db", files[0]!, "--db", files[1]!, "--keys", pub);
    expect(offline.code, offline.out).toBe(0);
    expect(offline.out).toMatch(/2 chains/);
  });

  it("a replica's chain cut below what another chain's checkpoint saw fails --url (checkpoint_unmatched), though it verifies alone", async () => {
    const { url, named } = await fleetJournal();
    const pool = poolOf(url, 1);
    // The insider cuts b's newest entries and moves its head row back: b is a valid chain alone.
    await pool.query("DELETE FROM journal_entries WHERE chain = 'b' AND seq >= $1", [named]);
    await pool.query(
      "UPDATE journal_chains SET seq = e.seq, hash = e.hash FROM journal_entries e WHERE journal_chains.chain = 'b' AND e.chain = 'b' AND e.seq = $1",
      [named - 1],
    );
    await pool.end();
    const alone = await runCli("journal", "verify", "--url", url, "--chain", "b", "--keys", pub);
    expect(alone.code, alone.out).toBe(0);
    const all = await runCli("journal", "verify", "--url", url, "--keys", pub, "--json");
    expect(all.code).toBe(1);
    expect(JSON.parse(all.out).failures[0]).toMatchObject({ reason: "checkpoint_unmatched", chain: "b" });
  });

  it("a signed head of one chain (journal head --url --chain) catches a later cut of its tail that no checkpoint saw", async () => {
    const { url } = await fleetJournal();
    const key = join(dir, `journal-${Date.now()}.pem`);
    writeFileSync(key, KEY.privateKey.export({ type: "pkcs8", format: "pem" }).toString(), { mode: 0o600 });
    const head = join(dir, `b-head-${Date.now()}.json`);
    const signed = await runCli("journal", "head", "--url", url, "--chain", "b", "--key", key, "--out", head);
    expect(signed.code, signed.err).toBe(0);
    expect(
      (await runCli("journal", "verify", "--url", url, "--chain", "b", "--keys", pub, "--expect-head", head))
        .code,
    ).toBe(0);
    // b's newest entry, after every checkpoint that named b: cut with its head row moved back.
    const pool = poolOf(url, 1);
    const top = Number((await pool.query("SELECT seq FROM journal_chains WHERE chain = 'b'")).rows[0].seq);
    await pool.query("DELETE FROM journal_entries WHERE chain = 'b' AND seq = $1", [top]);
    await pool.query(
      "UPDATE journal_chains SET seq = e.seq, hash = e.hash FROM journal_entries e WHERE journal_chains.chain = 'b' AND e.chain = 'b' AND e.seq = $1",
      [top - 1],
    );
    await pool.end();
    expect((await runCli("journal", "verify", "--url", url, "--keys", pub)).code).toBe(0);
    const cut = await runCli(
      "journal",
      "verify",
      "--url",
      url,
      "--chain",
      "b",
      "--keys",
      pub,
      "--expect-head",
      head,
      "--json",
    );
    expect([cut.code, JSON.parse(cut.out).failure?.reason]).toEqual([1, "truncated"]);
  });

  it("a replica's chain deleted with its head row fails --url (chain_missing)", async () => {
    const { url } = await fleetJournal();
    const pool = poolOf(url, 1);
    await pool.query("DELETE FROM journal_entries WHERE chain = 'b'");
    await pool.query("DELETE FROM journal_chains WHERE chain = 'b'");
    await pool.end();
    const all = await runCli("journal", "verify", "--url", url, "--keys", pub, "--json");
    expect(all.code).toBe(1);
    expect(JSON.parse(all.out).failures[0]).toMatchObject({ reason: "chain_missing", chain: "b" });
  });

  it("refuses --expect-head over several chains, --chain without --url, an unknown chain, and export --url without --chain", async () => {
    const { url } = await fleetJournal();
    const head = join(dir, "head.json");
    writeFileSync(head, "{}");
    expect((await runCli("journal", "verify", "--url", url, "--keys", pub, "--expect-head", head)).code).toBe(
      2,
    );
    expect((await runCli("journal", "verify", "--db", head, "--chain", "a", "--keys", pub)).code).toBe(2);
    const unknown = await runCli("journal", "verify", "--url", url, "--chain", "z", "--keys", pub);
    expect([unknown.code, unknown.err]).toEqual([
      2,
      expect.stringMatching(/no chain "z"; its chains: "a", "b"/),
    ]);
    expect((await runCli("journal", "export", "--url", url, "--format", "jsonl")).code).toBe(2);
    const noChain = await runCli("journal", "head", "--url", url, "--key", pub);
    expect([noChain.code, noChain.err]).toEqual([2, expect.stringMatching(/needs --chain NAME/)]);
  });

  it("refuses both --db and --url, and neither", async () => {
    expect((await runCli("journal", "verify", "--keys", pub)).code).toBe(2);
    expect(
      (await runCli("journal", "verify", "--db", "x", "--url", "postgres://h/db", "--keys", pub)).code,
    ).toBe(2);
  });
});
