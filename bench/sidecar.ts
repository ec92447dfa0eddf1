// Sidecar throughput and latency over loopback HTTP: /v1/decide against 100 YAML rules
// (the matching rule is the last one, so every pattern is evaluated), next to a bare
// fastify route returning a constant, measured in the same run with the same load
// generator (autocannon, run as a child process so it does not share the server's
// event loop). Rows: the journal on disk (fsync'd group commit, the real configuration)
// with batch signatures (the sidecar default) and with one signature per entry; the
// journal in an in-memory SQLite database (what the disk costs); the HTTP layer alone
// (the Gate replaced by a canned outcome: what src/server adds); and the Gate called
// in-process without HTTP (the floor). Journal entries per decision are counted, not
// assumed. When `wrk` is installed, the baseline and the on-disk row are measured again
// with it, as a second opinion on the load generator.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Fastify from "fastify";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import {
  hashToken,
  type JournalSignatureMode,
  openSidecarRuntime,
  parseSidecarConfig,
  type SidecarServer,
  startSidecar,
} from "../src/server/index.js";
import { stdoutOf } from "./_proc.js";

const DURATION_S = Number(process.env.BENCH_SIDECAR_SECONDS ?? 5);
const RUNS = 2;
const CONNECTIONS = 10;
const TOKEN = "bench-agent-token-0123456789";
const CALL = {
  runId: "bench-run",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.example.org/data?page=1" },
};
/** Runs are created by the runtime: each sidecar's run, by its origin (the baseline has none). */
const runs = new Map<string, string>();
const callFor = (url: string) => ({ ...CALL, runId: runs.get(new URL(url).origin) ?? CALL.runId });
const bodyFor = (url: string) => JSON.stringify(callFor(url));
const AUTH = { authorization: `Bearer ${TOKEN}` };

function policy(n: number): string {
  const rules = [];
  for (let i = 0; i < n - 1; i++) {
    rules.push(`  - id: deny-${i}
    name: blocked host ${i}
    priority: ${100 + i}
    match: { toolClass: http, action: get, parameters: { url: { pattern: "^https://blocked-${i}\\\\.example/" } } }
    decision: deny
    reason: blocked host ${i}`);
  }
  rules.push(`  - id: allow-get
    name: reads
    priority: 800
    match: { toolClass: http, action: get }
    decision: allow
    reason: reads are fine`);
  return `name: bench\nversion: "1.0"\nrules:\n${rules.join("\n")}\n`;
}

/** CPU time (ms) of this process's main thread, from /proc (Linux); undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, USER_HZ = 100
  } catch {
    return undefined;
  }
}

interface Row {
  name: string;
  n: number;
  /** Whole milliseconds for autocannon, microseconds otherwise. */
  medianUs: number;
  p99Us: number;
  opsPerSec: number;
  /** Main-thread CPU per request, µs (Linux only). */
  cpuUs?: number;
  /** Journal entries written per decision, counted. */
  entriesPerDecision?: number;
}

interface Round {
  ops: number;
  total: number;
  ok: number;
  p50Ms: number;
  p99Ms: number;
  cpuUs: number | undefined;
}

const cannonBin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

/** One autocannon round; the main thread's CPU is read around it. */
async function cannon(url: string, headers: Record<string, string>): Promise<Round> {
  const args = [cannonBin, "-c", String(CONNECTIONS), "-d", String(DURATION_S), "-m", "POST", "-j"];
  for (const [k, v] of Object.entries({ "content-type": "application/json", ...headers }))
    args.push("-H", `${k}=${v}`);
  args.push("-b", bodyFor(url), url);
  const c0 = mainThreadCpuMs();
  const r = JSON.parse(await stdoutOf(process.execPath, args, "pipe")) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    "2xx": number;
    non2xx: number;
    errors: number;
  };
  const c1 = mainThreadCpuMs();
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    ops: r.requests.average,
    total: r.requests.total,
    ok: r["2xx"],
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    cpuUs: c0 !== undefined && c1 !== undefined ? ((c1 - c0) * 1000) / r.requests.total : undefined,
  };
}

const hasWrk = spawnSync("wrk", ["--version"]).error === undefined;

/** One wrk round (one thread, the same connections, body and headers). */
async function wrk(url: string, headers: Record<string, string>, dir: string): Promise<Round> {
  const script = join(dir, "post.lua");
  const lines = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(bodyFor(url))}`];
  for (const [k, v] of Object.entries({ "content-type": "application/json", ...headers }))
    lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  writeFileSync(script, `${lines.join("\n")}\n`);
  const c0 = mainThreadCpuMs();
  const out = await stdoutOf(
    "wrk",
    ["-t1", `-c${CONNECTIONS}`, `-d${DURATION_S}s`, "--latency", "-s", script, url],
    "pipe",
  );
  const c1 = mainThreadCpuMs();
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN);
  const ms = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) return Number.NaN;
    const v = Number(m[1]);
    return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
  };
  if (/Non-2xx/.test(out) || /Socket errors/.test(out)) throw new Error(`${url}: wrk saw errors\n${out}`);
  const total = num(/(\d+) requests in/);
  return {
    ops: num(/Requests\/sec:\s+([\d.]+)/),
    total,
    ok: total,
    p50Ms: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p99Ms: ms(/99%\s+([\d.]+)(us|ms|s)/),
    cpuUs: c0 !== undefined && c1 !== undefined ? ((c1 - c0) * 1000) / total : undefined,
  };
}

/** A warm-up round, then the best-throughput of `RUNS` rounds (the machine is shared). */
async function measureHttp(
  name: string,
  round: () => Promise<Round>,
  count?: () => Promise<number>,
): Promise<Row> {
  const before = count ? await count() : 0;
  let ok = (await round()).ok; // warm-up (JIT, connections); its decisions are journaled too
  let best: Round | undefined;
  for (let i = 0; i < RUNS; i++) {
    const r = await round();
    ok += r.ok;
    if (best === undefined || r.ops > best.ops) best = r;
  }
  const b = best as Round;
  const row: Row = {
    name,
    n: b.total,
    medianUs: b.p50Ms * 1000,
    p99Us: b.p99Ms * 1000,
    opsPerSec: b.ops,
    ...(b.cpuUs !== undefined ? { cpuUs: b.cpuUs } : {}),
  };
  if (count) row.entriesPerDecision = ((await count()) - before) / ok;
  return row;
}

async function sidecar(
  dir: string,
  journalPath: string,
  signatures: JournalSignatureMode,
): Promise<SidecarServer> {
  const loaded = parseSidecarConfig(
    {
      policies: ["policy.yaml"],
      journal: { path: "journal.db", key: join(dir, "journal.pem"), signatures },
      gate: { principals: [{ id: "bench-agent", roles: ["agent"] }] },
      auth: { principals: [{ id: "bench-agent", tokenSha256: hashToken(TOKEN) }] },
      limits: { rateLimitPerMinute: 1_000_000 },
    },
    dir,
  );
  loaded.config.journal.path = journalPath;
  const server = await startSidecar(await openSidecarRuntime(loaded), { port: 0 });
  const run = await server.runtime.gate.sessions.startRun("bench-agent");
  runs.set(new URL(server.url as string).origin, run.runId);
  return server;
}

/** CONNECTIONS concurrent Gate.evaluate loops in this process: the floor without HTTP. */
async function inProcess(name: string, server: SidecarServer): Promise<Row> {
  const gate = server.runtime.gate;
  const call = { ...callFor(server.url as string), principalId: "bench-agent" };
  for (let i = 0; i < 500; i++) await gate.evaluate(call);
  const deadline = performance.now() + DURATION_S * 1000;
  const samples: number[] = [];
  const c0 = mainThreadCpuMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const s0 = performance.now();
        await gate.evaluate(call);
        samples.push((performance.now() - s0) * 1000);
      }
    }),
  );
  const wall = performance.now() - t0;
  const c1 = mainThreadCpuMs();
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return {
    name,
    n: samples.length,
    medianUs: at(0.5),
    p99Us: at(0.99),
    opsPerSec: (samples.length / wall) * 1000,
    ...(c0 !== undefined && c1 !== undefined ? { cpuUs: ((c1 - c0) * 1000) / samples.length } : {}),
  };
}

function render(rows: Row[], baseline: Row): string {
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
  const head =
    "| case | n | median µs | p99 µs | ops/s | vs baseline | main-thread CPU µs/req | journal entries/decision |\n" +
    "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  return (
    head +
    rows
      .map(
        (r) =>
          `| ${r.name} | ${r.n} | ${fmt(r.medianUs)} | ${fmt(r.p99Us)} | ${Math.round(r.opsPerSec)} | ${(
            (r.opsPerSec / baseline.opsPerSec) * 100
          ).toFixed(0)}% | ${r.cpuUs !== undefined ? r.cpuUs.toFixed(0) : "-"} | ${
            r.entriesPerDecision !== undefined ? r.entriesPerDecision.toFixed(2) : "-"
          } |`,
      )
      .join("\n") +
    "\n"
  );
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const dir = mkdtempSync(join(tmpdir(), "warden-bench-sidecar-"));
try {
  saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), policy(100));
  const loadBefore = load();

  const bare = Fastify({ logger: false });
  bare.post("/", async () => ({ decision: "allow" }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/`;
  const baseline = await measureHttp("bare fastify POST → constant (baseline)", () => cannon(bareUrl, {}));
  const wrkBaseline = hasWrk
    ? await measureHttp("wrk: bare fastify POST → constant (baseline)", () => wrk(bareUrl, {}, dir))
    : undefined;
  await bare.close();

  const rows: Row[] = [baseline];
  const wrkRows: Row[] = [];
  const batch = await sidecar(dir, join(dir, "journal-batch.db"), "batch");
  const count = () => batch.runtime.store.count();
  const onDisk = await measureHttp(
    "/v1/decide, 100 rules, journal on disk, batch signatures (default)",
    () => cannon(`${batch.url}/v1/decide`, AUTH),
    count,
  );
  rows.push(onDisk);
  if (hasWrk) {
    wrkRows.push(
      await measureHttp(
        "wrk: /v1/decide, 100 rules, journal on disk, batch signatures",
        () => wrk(`${batch.url}/v1/decide`, AUTH, dir),
        count,
      ),
    );
  }
  const floor = await inProcess("Gate.evaluate in-process, same Gate (disk, batch), no HTTP (floor)", batch);
  await batch.close();

  const entry = await sidecar(dir, join(dir, "journal-entry.db"), "entry");
  rows.push(
    await measureHttp(
      "/v1/decide, 100 rules, journal on disk, one signature per entry",
      () => cannon(`${entry.url}/v1/decide`, AUTH),
      () => entry.runtime.store.count(),
    ),
  );
  await entry.close();

  const mem = await sidecar(dir, ":memory:", "batch");
  rows.push(
    await measureHttp(
      "/v1/decide, 100 rules, journal in :memory: SQLite, batch signatures",
      () => cannon(`${mem.url}/v1/decide`, AUTH),
      () => mem.runtime.store.count(),
    ),
  );
  // The HTTP layer alone: the same server with Gate.evaluate answering a canned outcome.
  const canned = await mem.runtime.gate.evaluate({
    ...callFor(mem.url as string),
    principalId: "bench-agent",
  });
  mem.runtime.gate.evaluate = async () => canned;
  rows.push(
    await measureHttp("/v1/decide, HTTP layer only (Gate replaced by a canned outcome)", () =>
      cannon(`${mem.url}/v1/decide`, AUTH),
    ),
  );
  await mem.close();
  rows.push(floor);

  process.stdout.write(
    `${CONNECTIONS} connections, ${DURATION_S} s per round, best of ${RUNS} rounds after a warm-up; loopback, ` +
      `load generator in a child process. HTTP latencies are autocannon's (whole ms); the in-process row is per call. ` +
      `Load average ${loadBefore} before, ${load()} after (2 cores, shared: rows vary by ±20% between runs).\n\n`,
  );
  process.stdout.write(render(rows, baseline));
  if (wrkBaseline !== undefined) {
    process.stdout.write(
      `\nSecond load generator (wrk, one thread):\n\n${render([wrkBaseline, ...wrkRows], wrkBaseline)}`,
    );
  }
  const ratio = (onDisk.opsPerSec / baseline.opsPerSec) * 100;
  const budget =
    baseline.cpuUs !== undefined
      ? ` (a budget of about ${(2 * baseline.cpuUs).toFixed(0)} µs of main-thread CPU per decision)`
      : "";
  process.stdout.write(
    `\ntarget: ≥ 50% of baseline throughput${budget} and p99 < 5 ms — journal on disk, batch signatures: ` +
      `${ratio.toFixed(0)}%, p99 ${(onDisk.p99Us / 1000).toFixed(2)} ms${
        ratio >= 50 && onDisk.p99Us < 5000 ? " (met)" : " (not met)"
      }; ${onDisk.entriesPerDecision?.toFixed(2)} journal entries per decision (counted).\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
