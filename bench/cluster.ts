// `npm run bench -- cluster`: distributed mode's throughput (issue 22). Decisions/s and p99
// of POST /v1/decide for 1, 2 and 3 sidecar processes on one local PostgreSQL (embedded,
// started here, as the tests do), with the journal as a chain per replica (the default) and
// as one global chain (`store.journal.chains: global`), beside two same-run baselines: one sidecar on its SQLite
// journal, and a bare `INSERT … RETURNING` loop on the same PostgreSQL. 64 HTTP connections
// per sidecar (a request loop each on a kept-alive node:http connection, in this process); CPU per decision is each sidecar
// process's, from /proc. Where the time goes, per decision: each process's CPU (sidecars,
// this load generator, PostgreSQL), the sidecars' event-loop utilisation (the busiest
// one's: near 100% means its main thread is the bottleneck), and decisions per journal
// transaction (group commit), and the PostgreSQL journal's head lock (wait, hold, COMMIT).
// The cases take turns (BENCH_CLUSTER_ROUNDS rounds, default 3, of BENCH_CLUSTER_SECONDS
// each, default 2) on nodes started once; decisions/s is the median round's. Issue 36: one more
// case repeats the 1-sidecar chain-per-replica case with a fresh Idempotency-Key on every call.
// BENCH_CLUSTER_NODE_FLAGS adds node flags to the sidecars (e.g. --cpu-prof to profile them).
// PostgreSQL runs with fsync=on and synchronous_commit=on (durable, as SQLite's FULL).
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import { migrate } from "../src/store-pg/index.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { fenceTable } from "./_cluster-fence.js";
import { journalAppendTable } from "./_cluster-journal.js";
import {
  type AppendBreakdown,
  appendBreakdown,
  type NodeStats,
  nodeStats,
  postmasterPid,
  serverCpuMs,
} from "./_cluster-stats.js";
import { perOp } from "./_proc.js";

const SECONDS = Number(process.env.BENCH_CLUSTER_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_CLUSTER_ROUNDS ?? 3);
const CONNECTIONS = 64;
const here = dirname(fileURLToPath(import.meta.url));
const TOKEN = `bench-${randomBytes(8).toString("hex")}`;

interface Row {
  name: string;
  n: number;
  opsPerSec: number;
  p99Ms: number;
  medianMs: number;
  cpuUs?: number | undefined;
  /** This process's CPU per decision (the HTTP load generator). */
  genUs?: number | undefined;
  /** PostgreSQL's CPU per decision. */
  pgUs?: number | undefined;
  /** The busiest sidecar's event-loop utilisation during the row, 0..1. */
  elu?: number | undefined;
  /** Decisions per journal transaction (group commit), over all sidecars. */
  perCommit?: number | undefined;
  /** The PostgreSQL journal's transactions (round trips, lost races, lock fallbacks, COMMIT). */
  append?: AppendBreakdown | undefined;
}

interface Child {
  proc: ChildProcess;
  url: string;
  runId: string;
}

function startChild(mode: "sqlite" | "pg" | "pg-global", dir: string, dbUrl = ""): Promise<Child> {
  // BENCH_CLUSTER_NODE_FLAGS: extra node flags for the sidecars, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p".
  const flags = (process.env.BENCH_CLUSTER_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "");
  const proc = spawn(process.execPath, [...flags, join(here, "_cluster-node.js"), mode, dir, TOKEN, dbUrl], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    proc.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined)
        resolve({ proc, ...(JSON.parse(line) as { url: string; runId: string }) });
    });
    proc.once("exit", (code) => reject(new Error(`node exited ${code}`)));
  });
}

async function stopChild(c: Child): Promise<void> {
  const exited = new Promise((r) => c.proc.once("exit", r));
  c.proc.disconnect?.();
  await exited;
}

function summarize(name: string, samples: number[], seconds: number, extra: Partial<Row> = {}): Row {
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return {
    name,
    n: samples.length,
    opsPerSec: samples.length / seconds,
    p99Ms: at(0.99),
    medianMs: at(0.5),
    ...extra,
  };
}

/**
 * One POST /v1/decide on a kept-alive connection; resolves with the status. node:http with
 * an Agent, not fetch: the generator shares the 2 cores with the sidecars, and fetch cost
 * it about as much CPU per decision as the sidecar spent deciding.
 */
function post(agent: http.Agent, url: URL, body: Buffer, key?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: "/v1/decide",
        method: "POST",
        headers: {
          authorization: `Bearer ${TOKEN}`,
          "content-type": "application/json",
          "content-length": body.length,
          ...(key !== undefined ? { "idempotency-key": key } : {}),
        },
      },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * CONNECTIONS request loops per node (one kept-alive connection each) for SECONDS; latencies in
 * ms. `keyed`: every request carries a fresh Idempotency-Key (claimed and finished in the store).
 */
async function load(
  nodes: Child[],
  keyed = false,
): Promise<{ samples: number[]; seconds: number; failed: number }> {
  const samples: number[] = [];
  let failed = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  const loop = async (c: Child, agent: http.Agent, i: number) => {
    const url = new URL(c.url);
    const body = Buffer.from(
      JSON.stringify({
        runId: c.runId,
        toolClass: "http",
        action: "get",
        parameters: { url: `https://api.example.org/data?page=${i}` },
      }),
    );
    let k = 0;
    while (performance.now() < end) {
      const t0 = performance.now();
      const key = keyed ? `${TOKEN}-${i}-${k++}-${Math.round(start)}` : undefined;
      const status = await post(agent, url, body, key).catch(() => 0);
      if (status === 200) samples.push(performance.now() - t0);
      else failed++;
    }
  };
  const agents = nodes.map(() => new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS }));
  await Promise.all(
    nodes.flatMap((c, k) =>
      Array.from({ length: CONNECTIONS }, (_, i) => loop(c, agents[k] as http.Agent, i)),
    ),
  );
  for (const a of agents) a.destroy();
  return { samples, seconds: (performance.now() - start) / 1000, failed };
}

const cpuMsOf = (s: NodeStats) => (s.cpuUs.user + s.cpuUs.system) / 1000;

/** Where the row's time went, from readings before and after it (see the header). */
function breakdown(before: NodeStats[], after: NodeStats[], n: number): Partial<Row> {
  const cpuUs = after.reduce(
    (sum, a, i) => sum + (perOp(cpuMsOf(before[i] as NodeStats), cpuMsOf(a), n) ?? 0),
    0,
  );
  const elu = Math.max(
    ...after.map((a, i) => {
      const b = before[i] as NodeStats;
      const active = a.elu.active - b.elu.active;
      return active / (active + a.elu.idle - b.elu.idle);
    }),
  );
  const commits = after.reduce(
    (sum, a, i) => sum + ((a.commits ?? 0) - ((before[i] as NodeStats).commits ?? 0)),
    0,
  );
  return {
    cpuUs,
    elu,
    ...(commits > 0 ? { perCommit: n / commits } : {}),
    append: appendBreakdown(before, after),
  };
}

interface Sample {
  samples: number[];
  seconds: number;
  extra: Partial<Row>;
}

/** One load slot on already-started nodes, with where its time went. */
async function measure(name: string, nodes: Child[], postmaster?: number, keyed = false): Promise<Sample> {
  const before = await Promise.all(nodes.map((c) => nodeStats(c.proc)));
  const gen0 = process.cpuUsage();
  const pg0 = serverCpuMs(postmaster);
  const r = await load(nodes, keyed);
  const gen = process.cpuUsage(gen0);
  const pgUs = perOp(pg0, serverCpuMs(postmaster), r.samples.length);
  const after = await Promise.all(nodes.map((c) => nodeStats(c.proc)));
  if (r.failed > 0) process.stderr.write(`${name}: ${r.failed} non-200 answers\n`);
  const extra: Partial<Row> = {
    ...breakdown(before, after, r.samples.length),
    genUs: perOp(0, (gen.user + gen.system) / 1000, r.samples.length),
    ...(postmaster !== undefined ? { pgUs } : {}),
  };
  return { samples: r.samples, seconds: r.seconds, extra };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** A case over its rounds: the median round's decisions/s; the rest weighted by decisions. */
function combine(name: string, rounds: Sample[]): Row {
  const all = rounds.flatMap((r) => r.samples);
  const seconds = rounds.reduce((a, r) => a + r.seconds, 0);
  const row = summarize(name, all, seconds);
  row.opsPerSec = median(rounds.map((r) => r.samples.length / r.seconds));
  const weighted = (pick: (x: Partial<Row>) => number | undefined) => {
    let sum = 0;
    let n = 0;
    for (const r of rounds) {
      const v = pick(r.extra);
      if (v === undefined) return undefined;
      sum += v * r.samples.length;
      n += r.samples.length;
    }
    return n === 0 ? undefined : sum / n;
  };
  const ap = (k: keyof AppendBreakdown) => weighted((x) => x.append?.[k]);
  const roundTrips = ap("roundTrips");
  return {
    ...row,
    cpuUs: weighted((x) => x.cpuUs),
    genUs: weighted((x) => x.genUs),
    pgUs: weighted((x) => x.pgUs),
    elu: weighted((x) => x.elu),
    perCommit: weighted((x) => x.perCommit),
    append:
      roundTrips === undefined
        ? undefined
        : {
            roundTrips,
            conflicts: ap("conflicts") ?? 0,
            locked: ap("locked") ?? 0,
            foreign: ap("foreign") ?? 0,
            commitMs: ap("commitMs") ?? 0,
          },
  };
}

async function insertLoop(dbUrl: string): Promise<Row> {
  const pool = new pg.Pool({ connectionString: dbUrl, max: 8 });
  await pool.query("CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, body text NOT NULL)");
  const samples: number[] = [];
  const start = performance.now();
  const end = start + SECONDS * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await pool.query("INSERT INTO bench_insert (body) VALUES ($1) RETURNING id", ["{}"]);
      samples.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  const seconds = (performance.now() - start) / 1000;
  await pool.end();
  return summarize("baseline: bare INSERT … RETURNING (pool 8, 64 in flight)", samples, seconds);
}

function render(rows: Row[], sqlite: Row): string {
  const f = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const o = (x: number | undefined) => (x === undefined ? "-" : f(x));
  const pct = (x: number | undefined) => (x === undefined ? "-" : `${(x * 100).toFixed(0)}%`);
  const ap = (r: Row) =>
    r.append === undefined
      ? "- | - | -"
      : `${r.append.roundTrips.toFixed(2)} | ${pct(r.append.foreign)} / ${pct(r.append.conflicts)} / ${pct(r.append.locked)} | ${f(r.append.commitMs)}`;
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${r.n} | ${Math.round(r.opsPerSec)} | ${f(r.medianMs)} | ${f(r.p99Ms)} | ${((r.opsPerSec / sqlite.opsPerSec) * 100).toFixed(0)}% | ${o(r.cpuUs)} | ${pct(r.elu)} | ${o(r.genUs)} | ${o(r.pgUs)} | ${o(r.perCommit)} | ${ap(r)} |`,
  );
  return (
    "| case | n | decisions/s | median ms | p99 ms | vs SQLite node | sidecar CPU µs/decision (sum of nodes) | busiest sidecar event loop | load generator CPU µs/decision | PostgreSQL CPU µs/decision | decisions per journal transaction | round trips per journal transaction | journal transactions: on another node's head / lost races / took the lock | committing statement ms (incl. fsync) |\n" +
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n${lines.join("\n")}\n`
  );
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-cluster-"));
const server = await startPostgres();
try {
  const journalKey = generateKeyPair("ed25519");
  saveKeyPair(journalKey, dir, { name: "journal" });
  const dbUrl = server.connectionString;
  const admin = new pg.Pool({ connectionString: dbUrl, max: 1 });
  // The test server runs with fsync=off; a durable comparison with SQLite's fsync needs it on.
  await admin.query("ALTER SYSTEM SET fsync = on");
  await admin.query("SELECT pg_reload_conf()");
  await migrate(admin);
  const postmaster = await postmasterPid(admin);
  await admin.end();
  const insert = await insertLoop(dbUrl);
  // Every node starts once; the cases then take turns, ROUNDS times, so a change in the
  // machine's other load hits every case alike (idle nodes cost next to nothing).
  const children: Child[] = [];
  try {
    const sqliteNode = await startChild("sqlite", dir);
    children.push(sqliteNode);
    for (let i = 0; i < 3; i++) children.push(await startChild("pg", dir, dbUrl));
    for (let i = 0; i < 3; i++) children.push(await startChild("pg-global", dir, dbUrl));
    const perNode = children.slice(1, 4);
    const global = children.slice(4, 7);
    const pgCase = (nodes: Child[], what: string) =>
      [1, 2, 3].map((n) => ({
        name: `${n} sidecar(s), PostgreSQL, ${what}`,
        nodes: nodes.slice(0, n),
        ...(postmaster !== undefined ? { postmaster } : {}),
      }));
    const cases: { name: string; nodes: Child[]; postmaster?: number; keyed?: boolean }[] = [
      { name: "baseline: 1 sidecar, SQLite journal", nodes: [sqliteNode] },
      ...pgCase(perNode, "a chain per replica (default)"),
      // Issue 36: the same 1-sidecar case with a fresh Idempotency-Key on every /v1/decide.
      {
        name: "1 sidecar(s), PostgreSQL, a chain per replica, every /v1/decide with an Idempotency-Key",
        nodes: perNode.slice(0, 1),
        ...(postmaster !== undefined ? { postmaster } : {}),
        keyed: true,
      },
      ...pgCase(global, "one global chain"),
    ];
    const rounds = cases.map(() => [] as Sample[]);
    for (let round = 0; round < ROUNDS; round++)
      for (const [i, c] of cases.entries())
        rounds[i]?.push(await measure(c.name, c.nodes, c.postmaster, c.keyed));
    const rows = cases.map((c, i) => combine(c.name, rounds[i] ?? []));
    process.stdout.write(
      `### Distributed mode (${ROUNDS} rounds × ${SECONDS} s per case, ${CONNECTIONS} connections per sidecar, fsync on, load ${loadavg()[0]?.toFixed(1)})\n\n${render([insert, ...rows], rows[0] as Row)}\n`,
    );
    // The sidecars stay idle meanwhile (their timers cost next to nothing).
    process.stdout.write(`${await journalAppendTable(dbUrl, journalKey, ROUNDS, SECONDS)}\n`);
    process.stdout.write(`${await fenceTable(dbUrl, journalKey, ROUNDS, SECONDS)}\n`);
  } finally {
    for (const c of children) await stopChild(c);
  }
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
