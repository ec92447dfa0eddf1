// Child process for bench/flood.ts: argv[2] `sidecar` (durable journal, default limits) or
// `gateway` (the MCP gateway over Streamable HTTP, the reference test upstream), each with
// two principals — `hostile` and `honest` — on loopback, each in its own process as
// deployed (`warden sidecar`, `warden mcp serve`). Prints {"url"} once it listens; exits
// when the parent disconnects. Its RSS is read by the parent from /proc; its live heap is
// reported on the message `heap`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import { Gateway, parseGatewayConfig, serveHttp } from "../src/mcp-gateway/index.js";
import { hashToken, openSidecarRuntime, parseSidecarConfig, startSidecar } from "../src/server/index.js";
import { FLOOD_TOKENS } from "./_flood-tokens.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const UPSTREAM = join(ROOT, "test", "fixtures", "executors", "mcp-server.mjs");

const SIDECAR_POLICY = `name: flood
version: "1.0"
rules:
  - {id: allow-get, name: reads, priority: 800, match: {toolClass: http, action: get}, decision: allow, reason: reads}
`;
const GATEWAY_POLICY = `name: flood
version: "1"
rules:
  - { id: mcp, name: mcp, priority: 1, match: { toolClass: mcp, action: call }, decision: allow, reason: bench }
`;

const principals = [
  { id: "hostile", roles: ["agent"] },
  { id: "honest", roles: ["agent"] },
];
const credentials = [
  { id: "hostile", tokenSha256: hashToken(FLOOD_TOKENS.hostile) },
  { id: "honest", tokenSha256: hashToken(FLOOD_TOKENS.honest) },
];

async function sidecar(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "sidecar" });
  writeFileSync(join(dir, "sidecar-policy.yaml"), SIDECAR_POLICY);
  const loaded = parseSidecarConfig(
    {
      policies: ["sidecar-policy.yaml"],
      journal: { path: "sidecar.db", key: key.privatePem },
      gate: { requireContract: false, principals },
      auth: { principals: credentials },
    },
    dir,
  );
  const server = await startSidecar(await openSidecarRuntime(loaded), { port: 0 });
  return { url: server.url as string, close: () => server.close() };
}

async function gateway(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const key = saveKeyPair(generateKeyPair("ed25519"), dir, { name: "gateway" });
  writeFileSync(join(dir, "gateway-policy.yaml"), GATEWAY_POLICY);
  const loaded = parseGatewayConfig(
    {
      policies: ["gateway-policy.yaml"],
      journal: { path: "gateway.db", key: key.privatePem },
      gate: { principals },
      upstreams: { test: { command: process.execPath, args: [UPSTREAM], cwd: ROOT } },
      pins: "pins.json",
      http: { port: 0, principals: credentials, maxSessions: 64 },
    },
    dir,
  );
  const gw = await Gateway.open(loaded);
  const http = await serveHttp(gw);
  return {
    url: http.url,
    async close() {
      await http.close();
      await gw.close();
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-flood-"));
const served = process.argv[2] === "gateway" ? await gateway(dir) : await sidecar(dir);
process.on("disconnect", () => {
  void (async () => {
    await served.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  })();
});
// `heap`: the live heap after a full collection (run with --expose-gc), so a plateau of
// what the process retains shows apart from the collector's timing; with the heap V8 holds
// (used or not) and the memory outside it (Buffers, native), in MB.
process.on("message", (m) => {
  if (m !== "heap") return;
  (globalThis as { gc?: () => void }).gc?.();
  const m2 = process.memoryUsage();
  const mb = (n: number) => n / 2 ** 20;
  process.send?.({ heap: [mb(m2.heapUsed), mb(m2.heapTotal), mb(m2.external)] });
});
process.stdout.write(`${JSON.stringify({ url: served.url })}\n`);
