// `npm run bench -- journal-batch`: the segment journal's fixed cost per batch. Appends
// (batch signatures, appendBuilt of a decision-sized body) N in flight for N = 1, 2, 5,
// 10, 64, each appender awaiting its append before the next; CPU per append for the
// whole process (process.cpuUsage) and the main thread (/proc), fdatasyncs (batches) per
// append, and a least-squares fit cpu = a·appends + b·batches over the rows (a: per
// append, b: fixed per batch). Then the parts of that fixed cost, each timed alone
// (_batch-parts.ts), and the disk floor (4 KB append + fdatasyncSync), in the same run.
// Each row first appends WARMUP entries untimed: with fewer, the JIT's compilation
// lands in the small-batch rows and inflates their per-batch figure.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { generateKeyPair, type KeyPair } from "../src/crypto/index.js";
import { openJournal, SegmentJournalStore } from "../src/journal/index.js";
import { batchParts } from "./_batch-parts.js";
import { mainThreadCpuMs, perOp } from "./_proc.js";
import { diskFloor } from "./_segment-journal.js";
import { summarize } from "./_stats.js";

const FLIGHTS = [1, 2, 5, 10, 64];
const N = Number(process.env.BENCH_BATCH_N ?? 3000);
const WARMUP = 3000;

interface Row {
  inFlight: number;
  n: number;
  batches: number;
  cpuUs: number;
  mainCpuUs: number | undefined;
  medianUs: number;
  p99Us: number;
}

const body = (i: number) => ({
  observation_count: i,
  decision: "allow",
  reason: "rule api allows GET on api.example.com",
  request: {
    principalId: "agent-1",
    toolClass: "http",
    action: "get",
    parameters: { url: `https://api.example.com/v1/items?page=${i}` },
  },
  rule: { id: "allow-api", name: "api", priority: 800 },
  taint: [],
  latency_us: 42,
});

async function flight(dir: string, key: KeyPair, inFlight: number, n: number): Promise<Row> {
  const store = SegmentJournalStore.open(join(dir, `j-${inFlight}.db`));
  const journal = await openJournal({ store, signer: key, signatureMode: "batch" });
  const run = async (count: number, lat?: Float64Array) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < count) {
          const i = next++;
          const s = performance.now();
          await journal.appendBuilt({
            type: "ObservationsCollected",
            run_id: `run-${i % 64}`,
            trace_id: null,
            body: body(i),
          });
          if (lat !== undefined) lat[i] = (performance.now() - s) * 1000;
        }
      }),
    );
  };
  try {
    await run(WARMUP);
    const c0 = store.commits;
    const lat = new Float64Array(n);
    const cpu0 = process.cpuUsage();
    const m0 = mainThreadCpuMs();
    const t0 = performance.now();
    await run(n, lat);
    const cpu = process.cpuUsage(cpu0);
    const s = summarize("", lat, performance.now() - t0);
    return {
      inFlight,
      n,
      batches: store.commits - c0,
      cpuUs: (cpu.user + cpu.system) / n,
      mainCpuUs: perOp(m0, mainThreadCpuMs(), n),
      medianUs: s.medianUs,
      p99Us: s.p99Us,
    };
  } finally {
    await journal.close();
    await store.close();
  }
}

/** Least squares of y = a·x1 + b·x2 (no intercept). */
function leastSquares(rows: { x1: number; x2: number; y: number }[]): { a: number; b: number } {
  let s11 = 0;
  let s12 = 0;
  let s22 = 0;
  let s1y = 0;
  let s2y = 0;
  for (const r of rows) {
    s11 += r.x1 * r.x1;
    s12 += r.x1 * r.x2;
    s22 += r.x2 * r.x2;
    s1y += r.x1 * r.y;
    s2y += r.x2 * r.y;
  }
  const det = s11 * s22 - s12 * s12;
  return { a: (s1y * s22 - s2y * s12) / det, b: (s11 * s2y - s12 * s1y) / det };
}

const fmt = (x: number | undefined) => (x === undefined ? "-" : x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-batch-"));
  try {
    const key = generateKeyPair("ed25519");
    const disk = diskFloor(dir, 1000);
    const parts = await batchParts(dir);
    const rows: Row[] = [];
    for (const f of FLIGHTS) rows.push(await flight(dir, key, f, f === 1 ? Math.min(N, 2000) : N));
    const all = leastSquares(rows.map((r) => ({ x1: r.n, x2: r.batches, y: r.cpuUs * r.n })));
    const withMain = rows.filter((r) => r.mainCpuUs !== undefined);
    const main = leastSquares(withMain.map((r) => ({ x1: r.n, x2: r.batches, y: (r.mainCpuUs ?? 0) * r.n })));
    const out = [
      `### segment journal, fixed cost per batch (load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; 2 cores shared — CPU figures hold, latencies do not)\n`,
      `disk floor: 4 KB append + fdatasyncSync p50 ${fmt(disk.medianUs)} µs, p99 ${fmt(disk.p99Us)} µs, ${fmt(disk.cpuUs)} CPU µs/op\n`,
      "| in flight | appends | batches | appends/batch | CPU µs/append (process) | main-thread CPU µs/append | CPU µs/batch (process) | median µs | p99 µs |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map(
        (r) =>
          `| ${r.inFlight} | ${r.n} | ${r.batches} | ${(r.n / r.batches).toFixed(1)} | ${fmt(r.cpuUs)} | ${fmt(r.mainCpuUs)} | ${fmt((r.cpuUs * r.n) / r.batches)} | ${fmt(r.medianUs)} | ${fmt(r.p99Us)} |`,
      ),
      "",
      `fit (all rows): process CPU = ${fmt(all.a)} µs per append + ${fmt(all.b)} µs per batch; main thread = ${fmt(main.a)} µs per append + ${fmt(main.b)} µs per batch\n`,
      "| part of a batch's fixed cost, timed alone | CPU µs/op |",
      "|---|---:|",
      ...parts.map((p) => `| ${p.name} | ${fmt(p.cpuUs)} |`),
    ];
    process.stdout.write(`${out.join("\n")}\n\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
