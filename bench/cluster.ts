// `npm run bench -- cluster`: distributed mode's throughput (issue 22). Decisions/s and p99
// of POST /v1/decide for 1, 2 and 3 sidecar processes on one local PostgreSQL (embedded,
// started here, as the tests do), beside two same-run baselines: one sidecar on its SQLite
// journal, and a bare `INSERT … RETURNING` loop on the same PostgreSQL. 64 HTTP connections
// per sidecar (a request loop each on a kept-alive node:http connection, in this process); CPU per decision is each sidecar
// process's, from /proc. Where the time goes, per decision: each process's CPU (sidecars,
// this load generator, PostgreSQL), the sidecars' event-loop utilisation (the busiest
// one's: near 100% means its main thread is the bottleneck), and decisions per journal
// transaction (group commit). Environment: BENCH_CLUSTER_SECONDS per row (default 4).
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
import { type NodeStats, nodeStats, postmasterPid, serverCpuMs } from "./_cluster-stats.js";
import { perOp } from "./_proc.js";

const SECONDS = Number(process.env.BENCH_CLUSTER_SECONDS ?? 4);
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
}

interface Child {
  proc: ChildProcess;
  url: string;
  runId: string;
}

function startChild(mode: "sqlite" | "pg", dir: string, dbUrl = ""): Promise<Child> {
  const proc = spawn(process.execPath, [join(here, "_cluster-node.js"), mode, dir, TOKEN, dbUrl], {
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
function post(agent: http.Agent, url: URL, body: Buffer): Promise<number> {
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

/** CONNECTIONS request loops per node (one kept-alive connection each) for SECONDS; latencies in ms. */
async function load(nodes: Child[]): Promise<{ samples: number[]; seconds: number; failed: number }> {
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
    while (performance.now() < end) {
      const t0 = performance.now();
      const status = await post(agent, url, body).catch(() => 0);
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
  return { cpuUs, elu, ...(commits > 0 ? { perCommit: n / commits } : {}) };
}

async function sidecars(
  name: string,
  mode: "sqlite" | "pg",
  count: number,
  dir: string,
  pg?: { url: string; postmaster: number | undefined },
): Promise<Row> {
  const nodes: Child[] = [];
  try {
    for (let i = 0; i < count; i++) nodes.push(await startChild(mode, dir, pg?.url));
    const before = await Promise.all(nodes.map((c) => nodeStats(c.proc)));
    const gen0 = process.cpuUsage();
    const pg0 = serverCpuMs(pg?.postmaster);
    const r = await load(nodes);
    const gen = process.cpuUsage(gen0);
    const pgUs = perOp(pg0, serverCpuMs(pg?.postmaster), r.samples.length);
    const after = await Promise.all(nodes.map((c) => nodeStats(c.proc)));
    if (r.failed > 0) process.stderr.write(`${name}: ${r.failed} non-200 answers\n`);
    return summarize(name, r.samples, r.seconds, {
      ...breakdown(before, after, r.samples.length),
      genUs: perOp(0, (gen.user + gen.system) / 1000, r.samples.length),
      ...(mode === "pg" ? { pgUs } : {}),
    });
  } finally {
    for (const c of nodes) await stopChild(c);
  }
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
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${r.n} | ${Math.round(r.opsPerSec)} | ${f(r.medianMs)} | ${f(r.p99Ms)} | ${((r.opsPerSec / sqlite.opsPerSec) * 100).toFixed(0)}% | ${o(r.cpuUs)} | ${pct(r.elu)} | ${o(r.genUs)} | ${o(r.pgUs)} | ${o(r.perCommit)} |`,
  );
  return (
    "| case | n | decisions/s | median ms | p99 ms | vs SQLite node | sidecar CPU µs/decision (sum of nodes) | busiest sidecar event loop | load generator CPU µs/decision | PostgreSQL CPU µs/decision | decisions per journal transaction |\n" +
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n${lines.join("\n")}\n`
  );
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-cluster-"));
const server = await startPostgres();
try {
  saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  const dbUrl = server.connectionString;
  const admin = new pg.Pool({ connectionString: dbUrl, max: 1 });
  // The test server runs with fsync=off; a durable comparison with SQLite's fsync needs it on.
  await admin.query("ALTER SYSTEM SET fsync = on");
  await admin.query("SELECT pg_reload_conf()");
  await migrate(admin);
  const postmaster = await postmasterPid(admin);
  await admin.end();
  const insert = await insertLoop(dbUrl);
  const sqlite = await sidecars("baseline: 1 sidecar, SQLite journal", "sqlite", 1, dir);
  const rows = [insert, sqlite];
  for (const n of [1, 2, 3])
    rows.push(await sidecars(`${n} sidecar(s), PostgreSQL store`, "pg", n, dir, { url: dbUrl, postmaster }));
  process.stdout.write(
    `### Distributed mode (${SECONDS} s per row, ${CONNECTIONS} connections per sidecar, fsync on, load ${loadavg()[0]?.toFixed(1)})\n\n${render(rows, sqlite)}\n`,
  );
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
