// The PostgreSQL journal's conditional append (one statement, no lock held across a round
// trip), as attacks on the one global chain: a batch chained on a head another node has
// moved is never stored (it is re-chained on the real head), a forged head row cannot be
// extended, and the lock path still takes over when the race keeps being lost.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import {
  GENESIS_HASH,
  type JournalEntry,
  type SealedEntry,
  sealEntry,
  verifyJournal,
} from "../../src/journal/index.js";
import { migrate, PgJournalStore } from "../../src/store-pg/index.js";
import { type PostgresServer, startPostgres } from "../helpers/postgres.js";
import { KEY, keyringOf, RUN, TRACE } from "../journal/helpers.js";
import { freshDatabase, poolOf } from "./helpers.js";

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

let lastUrl = "";

async function freshStores(...nodes: string[]): Promise<PgJournalStore[]> {
  const url = await freshDatabase(server.connectionString);
  lastUrl = url;
  const setup = poolOf(url, 1);
  await migrate(setup);
  await setup.end();
  return nodes.map((node) => new PgJournalStore(poolOf(url, 2), { node }));
}

function sealAfter(last: JournalEntry | null, n: number): SealedEntry[] {
  const out: SealedEntry[] = [];
  let seq = last?.seq ?? 0;
  let prev = last?.hash ?? GENESIS_HASH;
  for (let i = 0; i < n; i++) {
    const body = { observation_count: seq + 1 };
    const s = sealEntry(
      {
        seq: ++seq,
        time: new Date().toISOString(),
        type: "ObservationsCollected",
        run_id: RUN,
        trace_id: TRACE,
        prev_hash: prev,
        key_id: KEY.keyId,
      },
      body,
      JSON.stringify(body),
      KEY.privateKey,
    );
    out.push(s);
    prev = s.entry.hash;
  }
  return out;
}

/** A builder that records the head it was handed each time. */
function recording(n: number) {
  const heads: (number | null)[] = [];
  return {
    heads,
    build: (last: JournalEntry | null) => {
      heads.push(last?.seq ?? null);
      return sealAfter(last, n);
    },
  };
}

describe("conditional append on the global chain", () => {
  it("a batch chained on a head another node moved is not stored: it is re-chained on the real head", async () => {
    const [a, b] = await freshStores("a", "b");
    await a!.appendBatch((last) => sealAfter(last, 2));
    await b!.appendBatch((last) => sealAfter(last, 3));
    // A still expects its own last entry (seq 2) as the head: that batch must lose.
    const r = recording(1);
    const stored = await a!.appendBatch(r.build);
    expect(r.heads).toEqual([2, 5]);
    expect(stored.map((e) => e.seq)).toEqual([6]);
    expect(a!.appendStats()).toMatchObject({ conflicts: 1, locked: 0 });
    const report = await verifyJournal(a!, keyringOf(KEY));
    expect(report).toMatchObject({ ok: true, checked: 6 });
    for (const s of [a!, b!]) await s.close();
  });

  it("this node's next batch costs one round trip: no read, no lock", async () => {
    const [a] = await freshStores("a");
    await a!.appendBatch((last) => sealAfter(last, 1));
    const before = a!.appendStats();
    await a!.appendBatch((last) => sealAfter(last, 4));
    const after = a!.appendStats();
    expect(after.roundTrips - before.roundTrips).toBe(1);
    expect(after.foreignHeads - before.foreignHeads).toBe(0);
    await a!.close();
  });

  it("a batch that does not extend the head it was handed is refused and leaves nothing (ERR_JOURNAL_CHAIN_BROKEN)", async () => {
    const [a] = await freshStores("a");
    await a!.appendBatch((last) => sealAfter(last, 2));
    const err = await a!.appendBatch(() => sealAfter(null, 1)).catch((e: unknown) => e);
    expect(hasErrorCode(err, "ERR_JOURNAL_CHAIN_BROKEN")).toBe(true);
    expect(await a!.count()).toBe(2);
    await a!.close();
  });

  it("a head row that does not match its entry is refused, never extended (ERR_JOURNAL_CHAIN_BROKEN)", async () => {
    const [a, b] = await freshStores("a", "b");
    await a!.appendBatch((last) => sealAfter(last, 2));
    const pool = poolOf(lastUrl, 1);
    await pool.query("UPDATE journal_chains SET hash = 'forged' WHERE chain = ''");
    await pool.end();
    // B has no head of its own: it reads the head and the entry it names together.
    const err = await b!.appendBatch((last) => sealAfter(last, 1)).catch((e: unknown) => e);
    expect(hasErrorCode(err, "ERR_JOURNAL_CHAIN_BROKEN")).toBe(true);
    // A expected its own entry as the head: its conditional append loses, then the read refuses.
    const errA = await a!.appendBatch((last) => sealAfter(last, 1)).catch((e: unknown) => e);
    expect(hasErrorCode(errA, "ERR_JOURNAL_CHAIN_BROKEN")).toBe(true);
    for (const s of [a!, b!]) await s.close();
  });

  it("three stores racing on one head: every batch lands once, in one chain (conflicts re-chained, the lock as the fallback)", async () => {
    const stores = await freshStores("a", "b", "c");
    await Promise.all(
      stores.map((s) =>
        Promise.all(Array.from({ length: 20 }, () => s.appendBatch((last) => sealAfter(last, 2)))),
      ),
    );
    expect(await stores[0]!.count()).toBe(120);
    expect((await verifyJournal(stores[0]!, keyringOf(KEY))).ok).toBe(true);
    const stats = stores.map((s) => s.appendStats());
    expect(stats.reduce((n, s) => n + s.commits, 0)).toBe(60);
    for (const s of stores) await s.close();
  });
});
