// MCP gateway overhead per tools/call, against the same upstream in the same run (the
// reference test server, `add`, over stdio):
//  - direct: the SDK client's callTool on the upstream connection itself (the baseline);
//  - gateway session: a governed call in process — the Gate decision durable in the
//    SQLite journal, the pin check (one tools/list round trip to the upstream), the call,
//    the evidence and the recorded result;
//  - gateway over Streamable HTTP: an SDK client → the gateway's HTTP listener → the same.
// One call at a time; every decision is durable before the call reaches the upstream.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import { Gateway, parseGatewayConfig, serveHttp } from "../src/mcp-gateway/index.js";
import { hashToken } from "../src/server/index.js";
import { measureAsync, type Stats, table } from "./_stats.js";

const N = Number(process.env.MCP_BENCH_N ?? 300);
const WARMUP = 30;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const UPSTREAM = join(ROOT, "test", "fixtures", "executors", "mcp-server.mjs");
const TOKEN = "bench-token-0123456789abcdef";

const POLICY = `name: bench
version: "1"
rules:
  - { id: mcp, name: mcp, priority: 1, match: { toolClass: mcp, action: call }, decision: allow, reason: bench }
`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-mcp-"));
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const loaded = parseGatewayConfig(
    {
      policies: ["policy.yaml"],
      journal: { path: "journal.db", key: key.privatePem },
      gate: { principals: [{ id: "agent", roles: [] }] },
      upstreams: { test: { command: process.execPath, args: [UPSTREAM], cwd: ROOT } },
      pins: "pins.json",
      http: { port: 0, principals: [{ id: "agent", tokenSha256: hashToken(TOKEN) }] },
    },
    dir,
  );
  const gw = await Gateway.open(loaded);
  const http = await serveHttp(gw);
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  try {
    const upstream = await gw.executor.upstreams.get("test");
    const session = await gw.session("agent");
    const signal = () => new AbortController().signal;
    const args = { a: 2, b: 3 };
    const rows: Stats[] = [];
    const direct = await measureAsync(
      "direct: SDK callTool on the upstream",
      N,
      () => upstream.callTool("add", args, signal()),
      WARMUP,
    );
    rows.push(direct);
    rows.push(
      await measureAsync(
        "Gate alone: authorize + recordResult (no upstream)",
        N,
        async () => {
          const o = await gw.runtime.gate.authorize({
            principalId: "agent",
            runId: session.runId,
            toolClass: "mcp",
            action: "call",
            tool: "test__add",
            parameters: args,
          });
          if (o.decisionId !== null) await gw.runtime.gate.recordResult(o.decisionId, {});
        },
        WARMUP,
      ),
    );
    rows.push(
      await measureAsync(
        "gateway session (Gate + journal + pin check + call)",
        N,
        async () => {
          const r = await session.callTool("test__add", args, signal());
          if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
        },
        WARMUP,
      ),
    );
    rows.push(
      await measureAsync(
        "SDK client → gateway over Streamable HTTP",
        N,
        async () => {
          const r = await client.callTool({ name: "test__add", arguments: args });
          if (r.isError) throw new Error(JSON.stringify(r.content));
        },
        WARMUP,
      ),
    );
    process.stdout.write(`${table(rows, direct)}\n`);
    process.stdout.write(
      `\nSame upstream process for all rows. The gateway row includes one extra tools/list round trip (the rug-pull pin check) and a durable journal decision per call.\n`,
    );
  } finally {
    await client.close();
    await http.close();
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
