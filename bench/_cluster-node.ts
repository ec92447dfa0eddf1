// Child process for bench/cluster.ts: one sidecar (100 YAML rules, batch signatures) with
// its journal in SQLite (MODE sqlite) or in the shared PostgreSQL (store.url = DBURL): its own
// chain (MODE pg, the default `store.journal.chains: per-node`) or the one global chain every
// replica extends (MODE pg-global). argv: MODE DIR TOKEN [DBURL]. The journal key is
// DIR/journal.pem (made by the parent: every PostgreSQL replica signs with the same key). Prints
// {"url", "runId"} once listening. Answers the parent's "stats" message (IPC) with where
// its time went: CPU, event-loop utilisation, and the journal's transactions (commits).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { hashToken, openSidecarRuntime, parseSidecarConfig, startSidecar } from "../src/server/index.js";

/**
 * The decide bench's policy (bench/_decide-server.ts sidecarPolicy, which cannot be
 * imported: that module starts its server on import): 99 deny rules on other hosts, the
 * last one allows http:get.
 */
function sidecarPolicy(n: number): string {
  const rules = Array.from(
    { length: n - 1 },
    (_, i) =>
      `  - {id: deny-${i}, name: blocked host ${i}, priority: ${100 + i}, match: {toolClass: http, action: get, parameters: {url: {pattern: "^https://blocked-${i}\\\\.example/"}}}, decision: deny, reason: blocked host ${i}}`,
  );
  rules.push(
    "  - {id: allow-get, name: reads, priority: 800, match: {toolClass: http, action: get}, decision: allow, reason: reads are fine}",
  );
  return `name: bench\nversion: "1.0"\nrules:\n${rules.join("\n")}\n`;
}

const [mode, dir, token, dbUrl] = process.argv.slice(2);
if ((mode !== "sqlite" && mode !== "pg" && mode !== "pg-global") || dir === undefined || token === undefined)
  throw new Error("usage: sqlite|pg|pg-global DIR TOKEN [DBURL]");
const chains = mode === "pg-global" ? "global" : "per-node";
writeFileSync(join(dir, `policy-${process.pid}.yaml`), sidecarPolicy(100));
const loaded = parseSidecarConfig(
  {
    policies: [`policy-${process.pid}.yaml`],
    journal: { path: `journal-${process.pid}.db`, key: join(dir, "journal.pem"), signatures: "batch" },
    ...(mode !== "sqlite"
      ? { store: { kind: "postgres", url: dbUrl, pool: { max: 8 }, journal: { chains } } }
      : {}),
    gate: { requireContract: false, principals: [{ id: "bench-agent", roles: ["agent"] }] },
    auth: { principals: [{ id: "bench-agent", tokenSha256: hashToken(token) }] },
    limits: { rateLimitPerMinute: 1_000_000 },
  },
  dir,
);
const server = await startSidecar(await openSidecarRuntime(loaded), { port: 0 });
const res = await fetch(`${server.url}/v1/runs`, {
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: "{}",
});
const { runId } = (await res.json()) as { runId?: string };
if (typeof runId !== "string") throw new Error(`POST /v1/runs: ${res.status}`);
process.on("disconnect", () => void server.close().then(() => process.exit(0)));
const journalStore = server.runtime.store as { commits?: number; appendStats?: () => unknown };
process.on("message", (m) => {
  if (m !== "stats") return;
  process.send?.({
    cpuUs: process.cpuUsage(),
    elu: performance.eventLoopUtilization(),
    commits: journalStore.commits ?? null,
    append: journalStore.appendStats?.() ?? null,
  });
});
process.stdout.write(`${JSON.stringify({ url: server.url, runId })}\n`);
