// Issue 36: `warden journal verify --url` on a serving cluster, and an idle fleet's journals.
//  - the verifier is paused (its connection frozen by pause-proxy.ts) right after it read
//    chain a; meanwhile a appends and b checkpoints a's new head; the verifier resumes and
//    reads b. Every chain comes from one REPEATABLE READ snapshot, so b's new checkpoint is
//    not in it: no false `checkpoint_unmatched` alarm, and the report says what it covered.
//  - an idle fleet stops checkpointing when nothing changed: checkpoints that name only the
//    other chains' checkpoints are not written (they used to answer each other forever).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Journal, openJournal } from "../../src/journal/index.js";
import { ChainCheckpointer, migrate, PgJournalStore } from "../../src/store-pg/index.js";
import { runCli } from "../helpers/cli.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { KEY } from "../journal/helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";
import { startPauseProxy } from "./pause-proxy.js";

let server: PostgresServer;
let pub: string;
const pools: pg.Pool[] = [];

beforeAll(async () => {
  server = await startPostgres();
  pub = join(mkdtempSync(join(tmpdir(), "warden-verify-live-")), "journal.pub.pem");
  writeFileSync(pub, KEY.publicKey.export({ type: "spki", format: "pem" }).toString());
}, 120_000);

afterAll(async () => {
  for (const p of pools) await p.end().catch(() => undefined);
  await server?.stop();
});

interface Replica {
  journal: Journal;
  checkpoints: ChainCheckpointer;
}

async function fleet(): Promise<{ url: string; a: Replica; b: Replica }> {
  const url = await freshDatabase(server.connectionString);
  const pool = poolOf(url);
  pools.push(pool);
  await migrate(pool);
  const open = async (chain: string): Promise<Replica> => {
    const journal = await openJournal({
      store: new PgJournalStore(pool, { chain, node: chain, ownsPool: false }),
      signer: KEY,
    });
    const checkpoints = new ChainCheckpointer({ pool, journal, chain, everyMs: 3_600_000 });
    await checkpoints.start();
    return { journal, checkpoints };
  };
  return { url, a: await open("a"), b: await open("b") };
}

const note = (i: number) => ({ type: "ObservationsCollected", body: { observation_count: i } });

describe("journal verify --url and checkpoints on a live fleet", () => {
  it("journal verify --url on a serving cluster reports no false checkpoint_unmatched: one snapshot, and what it verified up to", async () => {
    const { url, a, b } = await fleet();
    for (let i = 0; i < 3; i++) await a.journal.append(note(i));
    await b.checkpoints.checkpoint();
    const headA = (await a.journal.head())!.seq;
    const proxy = await startPauseProxy(url);
    try {
      // Frozen right after its read of chain a's entries was sent (a is read first).
      const frozen = proxy.freezeOn(/seq >= \$2/, "after");
      const verifying = runCli("journal", "verify", "--url", proxy.url, "--keys", pub, "--json");
      await frozen;
      for (let i = 0; i < 3; i++) await a.journal.append(note(10 + i)); // the cluster serves on
      expect(await b.checkpoints.checkpoint()).toBe(1); // b names a's new head
      proxy.thaw();
      const r = await verifying;
      expect(r.code, r.out + r.err).toBe(0);
      const report = JSON.parse(r.out) as {
        ok: boolean;
        snapshot: { upTo: { chain: string; seq: number }[] };
      };
      expect(report.ok).toBe(true);
      expect(report.snapshot.upTo).toContainEqual({ chain: "a", seq: headA });
      // And the moment after, everything verifies again, up to the new heads.
      const later = await runCli("journal", "verify", "--url", url, "--keys", pub);
      expect(later.code, later.out).toBe(0);
      expect(later.out).toMatch(/verified up to \(one snapshot at .*\): a@7, b@\d+/);
    } finally {
      proxy.thaw();
      await proxy.close();
    }
    for (const r of [a, b]) await r.journal.close();
  }, 60_000);

  it("an idle fleet stops checkpointing when nothing changed: checkpoints do not answer each other's checkpoints", async () => {
    const { a, b } = await fleet();
    await a.journal.append(note(1));
    expect(await b.checkpoints.checkpoint()).toBe(1); // a moved: named
    expect(await a.checkpoints.checkpoint()).toBe(1); // b's opening checkpoint, never named yet
    const before = [(await a.journal.head())!.seq, (await b.journal.head())!.seq];
    let written = 0;
    for (let round = 0; round < 5; round++) {
      written += await b.checkpoints.checkpoint();
      written += await a.checkpoints.checkpoint();
    }
    expect(written).toBe(0);
    expect([(await a.journal.head())!.seq, (await b.journal.head())!.seq]).toEqual(before);
    // A real entry is named again at the next period.
    await a.journal.append(note(2));
    expect(await b.checkpoints.checkpoint()).toBe(1);
    for (const r of [a, b]) await r.journal.close();
  });
});
