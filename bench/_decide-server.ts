// Child process for bench/decide.ts: serves either a bare fastify route (the baseline) or
// the real sidecar (100 YAML rules, durable SQLite journal, batch signatures) on loopback,
// so the parent can read this process's CPU and RSS from /proc without the load generator
// in the way. argv: MODE (bare | sidecar | sidecar-http) DIR TOKEN; sidecar-http is the
// sidecar with Gate.evaluate answering a canned outcome (what src/server adds over the
// bare route). Prints {"url": ...} once listening; answers an IPC "stats" message with
// the journal's commit and entry counts.
import { writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Fastify from "fastify";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import { hashToken, openSidecarRuntime, parseSidecarConfig, startSidecar } from "../src/server/index.js";

export interface ServerStats {
  commits: number;
  entries: number;
}

const CANNED_CALL = {
  principalId: "bench-agent",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.example.org/data?page=1" },
};

/** `n` YAML rules: n-1 deny rules on other hosts, the last one allows http:get. */
export function sidecarPolicy(n: number): string {
  const rules = [];
  for (let i = 0; i < n - 1; i++) {
    rules.push(
      `  - {id: deny-${i}, name: blocked host ${i}, priority: ${100 + i}, match: {toolClass: http, action: get, parameters: {url: {pattern: "^https://blocked-${i}\\\\.example/"}}}, decision: deny, reason: blocked host ${i}}`,
    );
  }
  rules.push(
    "  - {id: allow-get, name: reads, priority: 800, match: {toolClass: http, action: get}, decision: allow, reason: reads are fine}",
  );
  return `name: bench\nversion: "1.0"\nrules:\n${rules.join("\n")}\n`;
}

async function bare(): Promise<string> {
  const app = Fastify({ logger: false });
  app.post("/", async () => ({ decision: "allow" }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  process.on("message", (m) => {
    if (m === "stats") process.send?.({ commits: 0, entries: 0 } satisfies ServerStats);
  });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
}

async function sidecar(dir: string, token: string, canned: boolean): Promise<string> {
  saveKeyPair(generateKeyPair("ed25519"), dir, { name: "journal" });
  writeFileSync(join(dir, "policy.yaml"), sidecarPolicy(100));
  const loaded = parseSidecarConfig(
    {
      policies: ["policy.yaml"],
      journal: { path: "journal.db", key: join(dir, "journal.pem"), signatures: "batch" },
      // No contract on the bench call: the decision path without parameter typing.
      gate: { requireContract: false, principals: [{ id: "bench-agent", roles: ["agent"] }] },
      auth: { principals: [{ id: "bench-agent", tokenSha256: hashToken(token) }] },
      limits: { rateLimitPerMinute: 1_000_000 },
    },
    dir,
  );
  const server = await startSidecar(await openSidecarRuntime(loaded), { port: 0 });
  if (canned) {
    const gate = server.runtime.gate;
    const run = await gate.sessions.startRun("bench-agent");
    const outcome = await gate.evaluate({ ...CANNED_CALL, runId: run.runId });
    gate.evaluate = async () => outcome;
  }
  process.on("message", async (m) => {
    if (m !== "stats") return;
    const store = server.runtime.store;
    // Both stores (SQLite, PostgreSQL) count their commits; the interface does not promise it.
    const commits = (store as { commits?: number }).commits ?? 0;
    const stats: ServerStats = { commits, entries: await store.count() };
    process.send?.(stats);
  });
  process.on("disconnect", () => void server.close().then(() => process.exit(0)));
  return `${server.url}/v1/decide`;
}

/** A run the sidecar created for the bench agent (runs are the runtime's, never invented). */
async function createRun(decideUrl: string, token: string): Promise<string> {
  const res = await fetch(decideUrl.replace(/\/v1\/decide$/, "/v1/runs"), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: "{}",
  });
  const body = (await res.json()) as { runId?: string };
  if (res.status !== 201 || typeof body.runId !== "string") throw new Error(`POST /v1/runs: ${res.status}`);
  return body.runId;
}

const [mode, dir, token] = process.argv.slice(2);
if (mode === undefined || dir === undefined || token === undefined) throw new Error("usage: MODE DIR TOKEN");
const url = mode === "bare" ? await bare() : await sidecar(dir, token, mode === "sidecar-http");
if (mode === "bare") process.on("disconnect", () => process.exit(0));
const runId = mode === "bare" ? "bench-run" : await createRun(url, token);
process.stdout.write(`${JSON.stringify({ url, runId })}\n`);
