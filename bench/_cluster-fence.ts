// Part of `npm run bench -- cluster` (issue 36): what fencing and idempotency keys cost, in the
// same run as the table before them. One writer (a replica's journal with its own pool; 64
// appends in flight, batch signatures, fsync on) appends run-scoped entries spread over 64 runs
// it owns, to its own chain: without a fence (the append as it was before issue 36) and fenced
// by the runs' ownership epochs (each batch's statement also locks its runs' rows FOR SHARE
// and checks node and epoch). Then an Idempotency-Key's cost alone: claim (INSERT … ON
// CONFLICT) and finish (UPDATE) per call, 64 calls in flight, against a bare INSERT loop.
import { randomUUID } from "node:crypto";
import pg from "pg";
import type { KeyPair } from "../src/crypto/index.js";
import { openJournal } from "../src/journal/index.js";
import { PgIdempotencyKeys, PgJournalStore, PgRunRegistry } from "../src/store-pg/index.js";

const IN_FLIGHT = 64;
const RUNS = 64;

type Op = (i: number) => Promise<void>;

async function timed(seconds: number, op: Op) {
  let n = 0;
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await op(n++);
      lat.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  const cpu = process.cpuUsage(cpu0);
  return { n, lat, cpuUs: cpu.user + cpu.system };
}

async function journalCase(url: string, key: KeyPair, fenced: boolean, seconds: number) {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const node = `fence-${randomUUID().slice(0, 8)}`;
  const runs = new PgRunRegistry(pool, { node });
  const ids = Array.from({ length: RUNS }, () => `run-${randomUUID()}`);
  for (const id of ids) await runs.register(id, "bench");
  const store = new PgJournalStore(pool, {
    node,
    chain: node,
    ownsPool: false,
    ...(fenced ? { fence: (r: Iterable<string>) => runs.fence(r) } : {}),
  });
  const journal = await openJournal({ store, signer: key, signatureMode: "batch" });
  const x = await timed(seconds, (i) =>
    journal
      .append({
        type: "ObservationsCollected",
        run_id: ids[i % RUNS] as string,
        body: { observation_count: i },
      })
      .then(() => undefined),
  );
  await journal.close();
  await pool.end();
  return x;
}

async function keysCase(url: string, kind: "insert" | "keys", seconds: number) {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  const keys = new PgIdempotencyKeys(pool, { node: "bench" });
  const tag = randomUUID().slice(0, 8);
  const x = await timed(seconds, async (i) => {
    if (kind === "insert") {
      await pool.query("INSERT INTO bench_fence_insert (v) VALUES ($1) RETURNING id", [i]);
      return;
    }
    const c = await keys.claim("bench", `${tag}-${i}`, "sha256:x");
    if (c.kind === "new") await keys.finish("bench", `${tag}-${i}`, 200, '{"ok":true}');
  });
  await pool.end();
  return x;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] ?? 0;

/** The table: ops/s (median round), latency median and p99 (all rounds), CPU µs per op. */
export async function fenceTable(
  url: string,
  key: KeyPair,
  rounds: number,
  seconds: number,
): Promise<string> {
  const setup = new pg.Pool({ connectionString: url, max: 1 });
  await setup.query("CREATE TABLE IF NOT EXISTS bench_fence_insert (id bigserial PRIMARY KEY, v bigint)");
  await setup.end();
  const cases: { name: string; run: () => ReturnType<typeof timed> }[] = [
    {
      name: "journal appends, not fenced (before issue 36)",
      run: () => journalCase(url, key, false, seconds),
    },
    { name: "journal appends, fenced by the runs' epochs", run: () => journalCase(url, key, true, seconds) },
    { name: "baseline: bare INSERT … RETURNING (pool 8)", run: () => keysCase(url, "insert", seconds) },
    { name: "Idempotency-Key: claim + finish per call (pool 8)", run: () => keysCase(url, "keys", seconds) },
  ];
  const acc = cases.map(() => ({ rates: [] as number[], lat: [] as number[], cpuUs: 0, n: 0 }));
  for (let r = 0; r < rounds; r++)
    for (const [i, c] of cases.entries()) {
      const x = await c.run();
      const a = acc[i] as (typeof acc)[number];
      a.rates.push(x.n / seconds);
      a.lat.push(...x.lat);
      a.cpuUs += x.cpuUs;
      a.n += x.n;
    }
  const lines = cases.map((c, i) => {
    const a = acc[i] as (typeof acc)[number];
    return `| ${c.name} | ${Math.round(median(a.rates))} | ${median(a.lat).toFixed(2)} | ${p99(a.lat).toFixed(2)} | ${(a.cpuUs / Math.max(1, a.n)).toFixed(1)} |`;
  });
  return (
    `### Fencing and idempotency keys (${rounds} rounds × ${seconds} s, ${IN_FLIGHT} in flight, fsync on; same run)\n\n` +
    "| case | ops/s | median ms | p99 ms | client CPU µs/op |\n|---|---:|---:|---:|---:|\n" +
    `${lines.join("\n")}\n`
  );
}
