// HTTP rows of bench/decide.ts: a server in a child process (bench/_decide-server.ts) and
// autocannon in another, so the server's CPU per request is its own (/proc), and a flood
// of calls on fresh runs with the server's RSS sampled every 10 s.
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ServerStats } from "./_decide-server.js";
import { mainThreadCpuMs, perOp, processCpuMs, rssMiB, stdoutOf } from "./_proc.js";

export const TOKEN = "bench-agent-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const CALL = {
  runId: "bench-run",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.example.org/data?page=1" },
};
const here = dirname(fileURLToPath(import.meta.url));
const cannonBin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

export interface HttpRow {
  name: string;
  n: number;
  medianUs: number;
  p99Us: number;
  opsPerSec: number;
  /** Server process CPU per request, every thread / main thread only (µs). */
  cpuUs?: number;
  mainCpuUs?: number;
  /** Journal commits (one fsync each) per decision, counted in the server. */
  fsyncsPerDecision?: number;
}

export interface Server {
  url: string;
  /** A run the sidecar created for the bench agent (the bare route ignores it). */
  runId: string;
  pid: number;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

/** Starts bench/_decide-server.js in MODE with its own temporary DIR. */
export function startServer(mode: "bare" | "sidecar" | "sidecar-http", dir: string): Promise<Server> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const child: ChildProcess = fork(join(here, "_decide-server.js"), [mode, dir, TOKEN], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`bench server (${mode}) exited ${code}`)));
    child.stdout?.once("data", (b: Buffer) => {
      const { url, runId } = JSON.parse(b.toString()) as { url: string; runId: string };
      resolve({
        url,
        runId,
        pid: child.pid as number,
        stats: () =>
          new Promise((res) => {
            child.once("message", (m) => res(m as ServerStats));
            child.send("stats");
          }),
        close: () =>
          new Promise((res) => {
            child.removeAllListeners("exit");
            child.once("exit", () => res());
            child.disconnect();
          }),
      });
    });
  });
}

/** One autocannon round of `seconds` with `connections`; the server's CPU read around it. */
async function round(server: Server, connections: number, seconds: number, auth: boolean): Promise<HttpRow> {
  const args = [cannonBin, "-c", String(connections), "-d", String(seconds), "-m", "POST", "-j"];
  for (const [k, v] of Object.entries({ "content-type": "application/json", ...(auth ? AUTH : {}) }))
    args.push("-H", `${k}=${v}`);
  args.push("-b", JSON.stringify({ ...CALL, runId: server.runId }), server.url);
  const s0 = await server.stats();
  const [p0, m0] = [processCpuMs(server.pid), mainThreadCpuMs(server.pid)];
  const r = JSON.parse(await stdoutOf(process.execPath, args)) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  const [p1, m1] = [processCpuMs(server.pid), mainThreadCpuMs(server.pid)];
  const s1 = await server.stats();
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${server.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const n = r.requests.total;
  const row: HttpRow = {
    name: "",
    n,
    medianUs: r.latency.p50 * 1000,
    p99Us: r.latency.p99 * 1000,
    opsPerSec: r.requests.average,
  };
  const cpu = perOp(p0, p1, n);
  const main = perOp(m0, m1, n);
  if (cpu !== undefined) row.cpuUs = cpu;
  if (main !== undefined) row.mainCpuUs = main;
  if (auth) row.fsyncsPerDecision = (s1.commits - s0.commits) / n;
  return row;
}

/** A short warm-up round, then the best throughput of `rounds` rounds (the machine is shared). */
export async function measureHttp(
  name: string,
  server: Server,
  opts: { connections: number; seconds: number; rounds: number; auth: boolean },
): Promise<HttpRow> {
  await round(server, opts.connections, Math.max(1, Math.ceil(opts.seconds / 2)), opts.auth);
  let best: HttpRow | undefined;
  for (let i = 0; i < opts.rounds; i++) {
    const r = await round(server, opts.connections, opts.seconds, opts.auth);
    if (best === undefined || r.opsPerSec > best.opsPerSec) best = r;
  }
  return { ...(best as HttpRow), name };
}

export interface FloodReport {
  samples: { atS: number; rssMiB: number | undefined; calls: number }[];
  statuses: Record<string, number>;
}

/**
 * The flood an agent can mount with a valid token: every worker opens a new run
 * (POST /v1/runs) every 8th call and decides in it, and every 16th call names a run it
 * invented. Run caps (429), the per-run chain bound and the unknown-run refusal (404)
 * are what keep the sidecar's memory flat; statuses are counted per endpoint.
 */
export async function flood(server: Server, seconds: number, concurrency: number): Promise<FloodReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<string, number> = {};
  const samples: FloodReport["samples"] = [];
  let calls = 0;
  const send = (path: string, payload: unknown) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const body = JSON.stringify(payload);
      const req = request(
        new URL(path, server.url),
        {
          method: "POST",
          agent,
          headers: { ...AUTH, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const k = `${path} ${res.statusCode}`;
            statuses[k] = (statuses[k] ?? 0) + 1;
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
          });
        },
      );
      req.on("error", () => {
        statuses.error = (statuses.error ?? 0) + 1;
        resolve({ status: 0, body: "" });
      });
      req.end(body);
    });
  const worker = async (i: number, runId: string): Promise<string> => {
    if (i % 16 === 15) {
      await send("/v1/decide", { ...CALL, runId: `invented-${i}` });
      return runId;
    }
    let current = runId;
    if (i % 8 === 0) {
      const r = await send("/v1/runs", {});
      if (r.status === 201) current = (JSON.parse(r.body) as { runId: string }).runId;
    }
    await send("/v1/decide", { ...CALL, runId: current });
    return current;
  };
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  samples.push({ atS: 0, rssMiB: rssMiB(server.pid), calls: 0 });
  const timer = setInterval(() => {
    samples.push({ atS: Math.round((performance.now() - t0) / 1000), rssMiB: rssMiB(server.pid), calls });
  }, 10_000);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      let runId = server.runId;
      while (performance.now() < end) runId = await worker(calls++, runId);
    }),
  );
  clearInterval(timer);
  // The end, unless the last 10 s sample already is (no call since).
  if (samples.at(-1)?.calls !== calls) {
    samples.push({ atS: Math.round((performance.now() - t0) / 1000), rssMiB: rssMiB(server.pid), calls });
  }
  agent.destroy();
  return { samples, statuses };
}
