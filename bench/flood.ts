// Floods as users feel them (issue 37): the sidecar and the MCP gateway (a child process
// each, as deployed; durable journals, default limits) serve an honest principal working one call
// at a time — /v1/decide on the sidecar, tools/call through the gateway — first alone
// (the baseline, measured in the same run), then while a hostile principal floods both
// from another process for `--seconds` (default 60): /v1/decide and POST /v1/runs on the
// sidecar, initialize and tools/call on the gateway, each from several closed loops
// sending again as soon as an answer arrives. Printed: the honest principal's p50/p99
// and error rate under the flood beside its baseline, the hostile answers by status, and
// the server process's RSS and live heap at start, 1/3, 2/3 and end of the flood. Target: p99 within 3× baseline, no errors.
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { FLOOD_TOKENS } from "./_flood-tokens.js";
import { stdoutOf } from "./_proc.js";

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  const v = i < 0 ? undefined : Number(argv[i + 1]);
  return v !== undefined && Number.isFinite(v) && v > 0 ? v : dflt;
};
const SECONDS = flag("seconds", 60);
const BASELINE_SECONDS = Math.min(15, SECONDS);
const CALL = { toolClass: "http", action: "get", parameters: { url: "https://api.example.org/data" } };
const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
const MCP_HEADERS = { accept: "application/json, text/event-stream" };
const log = (m: string) => process.stderr.write(`flood: ${m}\n`);

function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m?.[1] === undefined ? Number.NaN : Number(m[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** Live heap after a full collection, heap V8 holds, memory outside it (MB), as the server reports them. */
type Heap = [used: number, total: number, external: number];

function heapOf(child: ChildProcess): Promise<Heap> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done([Number.NaN, Number.NaN, Number.NaN]), 10_000);
    const onMessage = (m: unknown) => {
      const v = (m as { heap?: unknown }).heap;
      if (Array.isArray(v) && v.length === 3) done(v as Heap);
    };
    const done = (v: Heap) => {
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(v);
    };
    child.on("message", onMessage);
    child.send("heap");
  });
}

/** One server process: the sidecar or the gateway, each its own process as deployed. */
async function startServer(what: "sidecar" | "gateway"): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(here, "_flood-server.js"), [what], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
    execArgv: [...process.execArgv, "--expose-gc"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once("exit", (code) => reject(new Error(`flood server exited ${code}`)));
  });
  return { child, url: (JSON.parse(line) as { url: string }).url };
}

async function newRun(sidecar: string, token: string): Promise<string> {
  const r = await fetch(`${sidecar}/v1/runs`, { method: "POST", headers: json(token), body: "{}" });
  const body = (await r.json()) as { runId?: string };
  if (r.status !== 201 || body.runId === undefined) throw new Error(`POST /v1/runs: ${r.status}`);
  return body.runId;
}

const initialize = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "flood", version: "1" } },
  });

/** A hostile MCP session (raw HTTP): its id, for the tools/call flood. */
async function hostileSession(gateway: string): Promise<string> {
  const headers = { ...json(FLOOD_TOKENS.hostile), ...MCP_HEADERS };
  const r = await fetch(gateway, { method: "POST", headers, body: initialize(1) });
  await r.arrayBuffer();
  const sid = r.headers.get("mcp-session-id");
  if (sid === null) throw new Error(`hostile initialize: ${r.status}`);
  const note = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  await (
    await fetch(gateway, { method: "POST", headers: { ...headers, "mcp-session-id": sid }, body: note })
  ).arrayBuffer();
  return sid;
}

interface Sample {
  decide: number[];
  mcp: number[];
  errors: number;
  calls: number;
}

/** The honest principal: one call at a time, alternating sidecar and gateway, for `seconds`. */
async function honest(sidecar: string, runId: string, client: Client, seconds: number): Promise<Sample> {
  const s: Sample = { decide: [], mcp: [], errors: 0, calls: 0 };
  const body = JSON.stringify({ ...CALL, runId });
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    let t0 = performance.now();
    s.calls++;
    try {
      const r = await fetch(`${sidecar}/v1/decide`, {
        method: "POST",
        headers: json(FLOOD_TOKENS.honest),
        body,
      });
      const out = (await r.json()) as { decision?: string };
      if (r.status !== 200 || out.decision !== "allow") s.errors++;
    } catch {
      s.errors++;
    }
    s.decide.push(performance.now() - t0);
    t0 = performance.now();
    s.calls++;
    try {
      const r = await client.callTool({ name: "test__add", arguments: { a: 2, b: 3 } });
      if (r.isError) s.errors++;
    } catch {
      s.errors++;
    }
    s.mcp.push(performance.now() - t0);
  }
  return s;
}

const pct = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

function rows(label: string, s: Sample, base?: Sample): string[] {
  const line = (target: string, xs: number[], bx: number[] | undefined) =>
    `| ${label} | ${target} | ${xs.length} | ${pct(xs, 0.5).toFixed(2)} | ${pct(xs, 0.99).toFixed(2)} | ${
      bx === undefined ? "1.00×" : `${(pct(xs, 0.99) / pct(bx, 0.99)).toFixed(2)}×`
    } | ${((s.errors / Math.max(1, s.calls)) * 100).toFixed(2)}% |`;
  return [line("sidecar /v1/decide", s.decide, base?.decide), line("gateway tools/call", s.mcp, base?.mcp)];
}

const HEAP_TABLES = [
  "live heap after a full GC",
  "heap V8 holds (heapTotal)",
  "memory outside the heap (external)",
];

/** Server memory (MB) at the flood's start, 1/3, 2/3 and end: a plateau shows as level columns. */
function memoryTable(what: string, samples: readonly number[][]): string {
  const n = samples.length - 1;
  const at = samples.map((_, i) => (i === 0 ? "start" : i === n ? "end" : `${i}/${n}`));
  const row = (name: string, i: number) =>
    `| ${name} | ${samples.map((s) => s[i]?.toFixed(1) ?? "?").join(" | ")} |`;
  return [
    `Server ${what}, MB (flood of ${SECONDS} s):\n`,
    `| process | ${at.join(" | ")} |`,
    `|---|${at.map(() => "---:").join("|")}|`,
    row("sidecar", 0),
    row("gateway", 1),
  ].join("\n");
}

async function main(): Promise<void> {
  const servers = [await startServer("sidecar"), await startServer("gateway")] as const;
  const [sidecar, gateway] = [servers[0].url, servers[1].url];
  const rss = () => servers.map((s) => rssMb(s.child.pid));
  const heap = () => Promise.all(servers.map((s) => heapOf(s.child)));
  const client = new Client({ name: "honest", version: "1" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway), {
        requestInit: { headers: { authorization: `Bearer ${FLOOD_TOKENS.honest}` } },
      }),
    );
    log("honest client connected");
    const honestRun = await newRun(sidecar, FLOOD_TOKENS.honest);
    const hostileRun = await newRun(sidecar, FLOOD_TOKENS.hostile);
    const sid = await hostileSession(gateway);
    log("runs and sessions open; baseline");
    await honest(sidecar, honestRun, client, 1); // warm-up
    // The live heap first (it runs a full GC), then RSS, read after that collection.
    const heapStart = await heap();
    const rssStart = rss();
    const base = await honest(sidecar, honestRun, client, BASELINE_SECONDS);
    const mcpHeaders = { ...json(FLOOD_TOKENS.hostile), ...MCP_HEADERS };
    const spec = {
      seconds: SECONDS,
      kinds: [
        {
          name: "sidecar /v1/decide",
          url: `${sidecar}/v1/decide`,
          headers: json(FLOOD_TOKENS.hostile),
          body: JSON.stringify({ ...CALL, runId: hostileRun }),
          concurrency: 8,
        },
        {
          name: "sidecar /v1/runs",
          url: `${sidecar}/v1/runs`,
          headers: json(FLOOD_TOKENS.hostile),
          body: "{}",
          concurrency: 2,
        },
        {
          name: "gateway tools/call",
          url: gateway,
          headers: { ...mcpHeaders, "mcp-session-id": sid },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 0,
            method: "tools/call",
            params: { name: "test__add", arguments: { a: 1, b: 1 } },
          }),
          concurrency: 8,
        },
        {
          name: "gateway initialize",
          url: gateway,
          headers: mcpHeaders,
          body: initialize(0),
          concurrency: 2,
        },
      ],
    };
    log("flood");
    const flood = stdoutOf(process.execPath, [join(here, "_flood-client.js"), JSON.stringify(spec)]);
    // RSS at 1/3 and 2/3 of the flood too: growth that levels off is a plateau, not a leak.
    const rssMid: number[][] = [];
    const heapMid: Promise<Heap[]>[] = [];
    const timers = [1, 2].map((n) =>
      setTimeout(
        () => {
          heapMid.push(
            heap().then((h) => {
              rssMid.push(rss());
              return h;
            }),
          );
        },
        (n * SECONDS * 1000) / 3,
      ),
    );
    const loaded = await honest(sidecar, honestRun, client, SECONDS);
    for (const t of timers) clearTimeout(t);
    const hostile = JSON.parse(await flood) as Record<string, Record<string, number>>;
    const heaps = [heapStart, ...(await Promise.all(heapMid)), await heap()];
    const rssEnd = rss();
    process.stdout.write(
      `Honest principal, one call at a time; baseline ${BASELINE_SECONDS} s alone, then ${SECONDS} s beside the hostile flood.\n\n` +
        "| phase | target | n | p50 ms | p99 ms | p99 vs baseline | honest errors |\n|---|---|---:|---:|---:|---:|---:|\n" +
        [...rows("baseline (alone)", base), ...rows("under flood", loaded, base)].join("\n") +
        "\n\nHostile answers by status:\n\n| request | answers |\n|---|---|\n" +
        Object.entries(hostile)
          .map(
            ([k, v]) =>
              `| ${k} | ${Object.entries(v)
                .map(([st, n]) => `${st}: ${n}`)
                .join(", ")} |`,
          )
          .join("\n") +
        `\n\n${memoryTable("RSS", [rssStart, ...rssMid, rssEnd])}\n\n${HEAP_TABLES.map((t, k) =>
          memoryTable(
            t,
            heaps.map((at) => at.map((h) => h[k] ?? Number.NaN)),
          ),
        ).join("\n\n")}\n`,
    );
    const worst = Math.max(
      pct(loaded.decide, 0.99) / pct(base.decide, 0.99),
      pct(loaded.mcp, 0.99) / pct(base.mcp, 0.99),
    );
    process.stdout.write(
      `Target: p99 within 3× baseline and no errors — ${worst <= 3 && loaded.errors === 0 ? "met" : "NOT met"} (worst ${worst.toFixed(2)}×, ${loaded.errors} errors).\n`,
    );
  } finally {
    await client.close().catch(() => undefined);
    for (const s of servers) s.child.disconnect();
  }
}

await main();
