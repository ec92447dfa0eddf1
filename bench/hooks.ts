// AARTS PreToolUse round trip per transport, beside the Gate alone in the same run:
//  - gate alone: runtime.gate.evaluate on the structured request the engine builds for
//    the event (same runtime, same host-tools preset, same SQLite file journal);
//  - in-process: engine.handle(event) — parse, taxonomy, artifacts, the Gate, the verdict
//    entry (a second durable journal append), state in memory;
//  - stdio: one line to a long-lived `warden hooks serve --stdio` child and its answer
//    line (the child's engine journals to its own file and saves its state file);
//  - http: a HookHost (httpTransport) posting to POST /v1/hooks/events of a real sidecar
//    on loopback in this process (host role, bearer token, its own SQLite file journal).
// One request at a time; every decision is durable before it is answered.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import {
  createEngine,
  type Engine,
  HookHost,
  hostToolsPolicyPath,
  httpTransport,
} from "../src/hooks/index.js";
import {
  hashToken,
  openSidecarRuntime,
  parseSidecarConfig,
  type SidecarServer,
  startSidecar,
} from "../src/server/index.js";
import { type Stats, summarize, table } from "./_stats.js";

const N = Number(process.env.HOOKS_BENCH_N ?? 400);
const WARMUP = 40;

/** The PreToolUse fields a host sends (HookHost adds the envelope). */
const fields = (i: number) => ({
  turn_id: `t${i}`,
  tool_name: "shell",
  tool_name_native: "Bash",
  tool_input: { command: `npm test -- --shard ${i}` },
  artifacts: [],
});

const event = (i: number) => ({
  hook_point: "PreToolUse",
  session_id: "bench-session",
  timestamp: new Date().toISOString(),
  host_id: "bench",
  aarts_version: "1",
  ...fields(i),
});

async function timeAsync(name: string, fn: (i: number) => Promise<void>): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await fn(i);
  const lat = new Float64Array(N);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    await fn(WARMUP + i);
    lat[i] = (performance.now() - s) * 1000;
  }
  return summarize(name, lat, performance.now() - t0, cpu0);
}

async function gateAlone(engine: Engine): Promise<Stats> {
  const gate = engine.runtime.gate;
  return timeAsync("gate alone (evaluate, file journal)", async (i) => {
    const o = await gate.evaluate({
      principalId: "host:bench",
      runId: "aarts:bench:gate-alone",
      toolClass: "shell",
      action: "exec",
      parameters: { command: `npm test -- --shard ${i}` },
    });
    if (o.decision !== "allow") throw new Error(`bench: gate said ${o.decision}`);
    gate.release(o.decisionId);
  });
}

function startStdio(dir: string): {
  child: ChildProcessWithoutNullStreams;
  ask: (line: string) => Promise<string>;
} {
  const bin = resolve(dirname(fileURLToPath(import.meta.url)), "../../bin/warden.js");
  const child = spawn(process.execPath, [bin, "hooks", "serve", "--stdio", "--dir", dir], { stdio: "pipe" });
  let buf = "";
  const waiting: ((l: string) => void)[] = [];
  child.stdout.on("data", (b: Buffer) => {
    buf += b.toString();
    for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
      const l = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      waiting.shift()?.(l);
    }
  });
  const ask = (line: string) =>
    new Promise<string>((res) => {
      waiting.push(res);
      child.stdin.write(`${line}\n`);
    });
  return { child, ask };
}

const HTTP_TOKEN = "bench-host-token-0123456789abcdef";

async function startHttp(dir: string): Promise<{ server: SidecarServer; host: HookHost }> {
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  const loaded = parseSidecarConfig(
    {
      policies: [hostToolsPolicyPath()],
      journal: { path: "journal.db", key: key.privatePem },
      gate: { requireContract: false, principals: [{ id: "bench-host", roles: ["host"] }] },
      auth: { principals: [{ id: "bench-host", tokenSha256: hashToken(HTTP_TOKEN) }] },
      limits: { rateLimitPerMinute: 1_000_000 },
    },
    dir,
  );
  const server = await startSidecar(await openSidecarRuntime(loaded), { port: 0 });
  if (server.url === undefined) throw new Error("bench: the sidecar is not listening");
  const host = await HookHost.connect({ transport: httpTransport(server.url, HTTP_TOKEN), hostId: "bench" });
  if (!host.handshake.compatible) throw new Error("bench: http handshake failed");
  return { server, host };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-hooks-bench-"));
  const engine = await createEngine({
    journal: { path: join(dir, "inproc.db"), signer: generateKeyPair("ed25519") },
    transport: "in-process",
  });
  const { child, ask } = startStdio(join(dir, "stdio"));
  try {
    await engine.versionCheck({ aarts_version: "1" });
    const rows: Stats[] = [await gateAlone(engine)];
    rows.push(
      await timeAsync("in-process engine.handle(PreToolUse)", async (i) => {
        const v = await engine.handle(event(i));
        if (v.decision !== "allow") throw new Error(`bench: engine said ${v.decision}`);
      }),
    );
    const hello = JSON.parse(await ask(JSON.stringify({ aarts_version: "1" }))) as { compatible: boolean };
    if (!hello.compatible) throw new Error("bench: stdio handshake failed");
    rows.push(
      await timeAsync("stdio `warden hooks serve --stdio` round trip", async (i) => {
        const v = JSON.parse(await ask(JSON.stringify(event(i)))) as { decision: string };
        if (v.decision !== "allow") throw new Error(`bench: stdio said ${v.decision}`);
      }),
    );
    const http = await startHttp(mkdtempSync(join(dir, "http-")));
    try {
      rows.push(
        await timeAsync("http HookHost → POST /v1/hooks/events round trip", async (i) => {
          const o = await http.host.fire("PreToolUse", fields(i));
          if (!o.proceed) throw new Error(`bench: http said ${o.verdict.decision}`);
        }),
      );
    } finally {
      await http.host.close();
      await http.server.close();
    }
    process.stdout.write(table(rows, rows[0]));
    process.stdout.write(
      "\nCPU µs/op is this process's (process.cpuUsage); the stdio row's server runs in a child process whose CPU is not included; the http row's sidecar runs in this process (its CPU is included).\n",
    );
  } finally {
    child.stdin.end();
    await new Promise((r) => child.on("close", r));
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
