// Sidecar throughput and latency over loopback HTTP: /v1/decide against 100 YAML rules
// (the matching rule is the last one, so every pattern is evaluated), next to a bare
// fastify route returning a constant, measured in the same run with the same load
// generator (autocannon, run as a child process so it does not share the server's
// event loop). Each decision writes two journal entries (fsync'd, group commit); a
// second row with the journal on an in-memory SQLite database shows what the disk costs.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import {
  hashToken,
  openSidecarRuntime,
  parseSidecarConfig,
  type SidecarServer,
  startSidecar,
} from "../src/server/index.js";
import { type Stats, summarize, table } from "./_stats.js";

const DURATION_S = Number(process.env.BENCH_SIDECAR_SECONDS ?? 5);
const RUNS = 2;
const CONNECTIONS = 10;
const TOKEN = "bench-agent-token-0123456789";
const BODY = JSON.stringify({
  runId: "bench-run",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.example.org/data?page=1" },
});

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

interface Cannon {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}

const cannonBin = createRequire(import.meta.url).resolve("autocannon/autocannon.js");

function cannon(url: string, headers: Record<string, string>): Promise<Cannon> {
  const args = [cannonBin, "-c", String(CONNECTIONS), "-d", String(DURATION_S), "-m", "POST", "-j"];
  for (const [k, v] of Object.entries({ "content-type": "application/json", ...headers }))
    args.push("-H", `${k}=${v}`);
  args.push("-b", BODY, url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`autocannon exited ${code}`));
      else resolve(JSON.parse(out) as Cannon);
    });
  });
}

/** Runs `RUNS` rounds and keeps the best throughput round (the machine is shared). */
async function measureHttp(name: string, url: string, headers: Record<string, string>): Promise<Stats> {
  await cannon(url, headers).catch(() => undefined); // warm-up round (JIT, connections)
  let best: Cannon | undefined;
  for (let i = 0; i < RUNS; i++) {
    const r = await cannon(url, headers);
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    if (best === undefined || r.requests.average > best.requests.average) best = r;
  }
  const b = best as Cannon;
  return {
    name,
    n: b.requests.total,
    medianUs: b.latency.p50 * 1000,
    p99Us: b.latency.p99 * 1000,
    opsPerSec: b.requests.average,
  };
}

async function sidecar(dir: string, journalPath: string): Promise<SidecarServer> {
  const loaded = parseSidecarConfig(
    {
      policies: ["policy.yaml"],
      journal: { path: "journal.db", key: join(dir, "journal.pem") },
      gate: { principals: [{ id: "bench-agent", roles: ["agent"] }] },
      auth: { principals: [{ id: "bench-agent", tokenSha256: hashToken(TOKEN) }] },
      limits: { rateLimitPerMinute: 1_000_000 },
    },
    dir,
  );
  loaded.config.journal.path = journalPath;
  return startSidecar(await openSidecarRuntime(loaded), { port: 0 });
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-sidecar-"));
try {
  mkdirSync(dir, { recursive: true });
  saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), policy(100));

  const bare = Fastify({ logger: false });
  bare.post("/", async () => ({ decision: "allow" }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/`;
  const baseline = await measureHttp("bare fastify POST → constant (baseline)", bareUrl, {});
  await bare.close();

  const auth = { authorization: `Bearer ${TOKEN}` };
  const disk = await sidecar(dir, join(dir, "journal.db"));
  const onDisk = await measureHttp(
    "/v1/decide, 100 rules, journal on disk (fsync)",
    `${disk.url}/v1/decide`,
    auth,
  );
  const entries = await disk.runtime.store.count();
  // The floor without HTTP: the same Gate (journal on disk), CONNECTIONS calls in flight.
  const gate = disk.runtime.gate;
  const call = { ...JSON.parse(BODY), principalId: "bench-agent" };
  const inProcess = await (async (): Promise<Stats> => {
    const deadline = performance.now() + DURATION_S * 1000;
    const samples: number[] = [];
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
    return summarize(
      "Gate.evaluate in-process, same Gate, no HTTP (floor)",
      Float64Array.from(samples),
      performance.now() - t0,
    );
  })();
  await disk.close();

  const mem = await sidecar(dir, ":memory:");
  const inMemory = await measureHttp(
    "/v1/decide, 100 rules, journal in :memory: SQLite (no disk)",
    `${mem.url}/v1/decide`,
    auth,
  );
  await mem.close();

  process.stdout.write(
    `${CONNECTIONS} connections, ${DURATION_S} s per round, best of ${RUNS} rounds after a warm-up; ` +
      `loopback, autocannon in a child process. HTTP latencies are autocannon's (whole ms); the in-process row is per call.\n\n`,
  );
  process.stdout.write(table([baseline, onDisk, inMemory, inProcess], baseline));
  const ratio = (onDisk.opsPerSec / baseline.opsPerSec) * 100;
  process.stdout.write(
    `\ntarget: ≥ 50% of baseline throughput and p99 < 5 ms — journal on disk: ${ratio.toFixed(0)}%, ` +
      `p99 ${(onDisk.p99Us / 1000).toFixed(2)} ms; ${entries} journal entries written (2 per decision).\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
