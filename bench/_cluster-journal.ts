// Part of `npm run bench -- cluster`: the PostgreSQL journal's appends alone, without the
// sidecars' decision work that saturates a small machine's cores. 1, 2 and 3 writers (each a
// journal with its own pool, as a replica has; 64 appends in flight each, batch signatures,
// fsync on) append to their own chains (distributed mode's default) or to the one global
// chain. Same database, same rounds taken in turns. Shows whether the journal itself lets
// added replicas add throughput: per-replica chains commit in parallel; on the global chain
// each transaction waits for the previous one's COMMIT on the head row, and lost races are
// re-chained and re-signed.
import pg from "pg";
import type { KeyPair } from "../src/crypto/index.js";
import { openJournal } from "../src/journal/index.js";
import { PgJournalStore } from "../src/store-pg/index.js";

const IN_FLIGHT = 64;

interface JournalRow {
  name: string;
  appendsPerSec: number[];
  txPerSec: number[];
  lost: number;
  commits: number;
  cpuUs: number;
  appends: number;
}

async function round(url: string, key: KeyPair, writers: number, perNode: boolean, seconds: number) {
  const pools = Array.from({ length: writers }, () => new pg.Pool({ connectionString: url, max: 8 }));
  const tag = `${writers}-${Date.now()}`;
  const js = await Promise.all(
    pools.map(async (pool, i) => {
      const store = new PgJournalStore(pool, {
        node: `w${i}`,
        chain: perNode ? `bench-w${i}-${tag}` : "",
        ownsPool: false,
      });
      return { store, journal: await openJournal({ store, signer: key, signatureMode: "batch" }) };
    }),
  );
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const loop = async (j: (typeof js)[number]["journal"]) => {
    while (performance.now() < end) {
      await j.append({ type: "ObservationsCollected", body: { observation_count: n } });
      n++;
    }
  };
  await Promise.all(js.flatMap(({ journal }) => Array.from({ length: IN_FLIGHT }, () => loop(journal))));
  const cpu = process.cpuUsage(cpu0);
  const stats = js.map((x) => x.store.appendStats());
  for (const { journal } of js) await journal.close();
  for (const p of pools) await p.end();
  return {
    n,
    commits: stats.reduce((a, s) => a + s.commits, 0),
    lost: stats.reduce((a, s) => a + s.conflicts, 0),
    cpuUs: cpu.user + cpu.system,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The table: appends/s (median round), transactions/s, lost races per transaction, CPU per append. */
export async function journalAppendTable(
  url: string,
  key: KeyPair,
  rounds: number,
  seconds: number,
): Promise<string> {
  const cases = [true, false].flatMap((perNode) =>
    [1, 2, 3].map((w) => ({
      w,
      perNode,
      name: `${w} writer(s), ${perNode ? "a chain per replica" : "one global chain"}`,
    })),
  );
  const rows: JournalRow[] = cases.map((c) => ({
    name: c.name,
    appendsPerSec: [],
    txPerSec: [],
    lost: 0,
    commits: 0,
    cpuUs: 0,
    appends: 0,
  }));
  for (let r = 0; r < rounds; r++) {
    for (const [i, c] of cases.entries()) {
      const x = await round(url, key, c.w, c.perNode, seconds);
      const row = rows[i] as JournalRow;
      row.appendsPerSec.push(x.n / seconds);
      row.txPerSec.push(x.commits / seconds);
      row.lost += x.lost;
      row.commits += x.commits;
      row.cpuUs += x.cpuUs;
      row.appends += x.n;
    }
  }
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${Math.round(median(r.appendsPerSec))} | ${Math.round(median(r.txPerSec))} | ${(r.appends / Math.max(1, r.commits)).toFixed(1)} | ${((r.lost / Math.max(1, r.commits + r.lost)) * 100).toFixed(0)}% | ${(r.cpuUs / Math.max(1, r.appends)).toFixed(1)} |`,
  );
  return (
    `### The journal's appends alone (${rounds} rounds × ${seconds} s, ${IN_FLIGHT} in flight per writer, batch signatures, fsync on)\n\n` +
    "| case | appends/s | journal transactions/s | appends per transaction | statements that lost the race | writer CPU µs/append |\n" +
    `|---|---:|---:|---:|---:|---:|\n${lines.join("\n")}\n`
  );
}
