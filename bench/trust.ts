// `npm run bench -- trust`: what APAE costs per governed decision on the real runtime path.
// Every row is `composeRuntime` with the durable SQLite journal (fsync, batch signatures),
// 100 YAML rules and 10 decisions in flight, measured in the same run. The baseline is the
// decision alone (APAE off); the other rows turn APAE on: the trust facts read by policy,
// one action ECT per decision at L1 (unsigned), L2 (ES256 by the runtime's key) or L3 (ES256
// and the journal ledger, appended in the decision's own commit), and a continuous
// behaviour check of each ECT against a signed spec (the live trust feed: a violation would
// be a trust update; these decisions pass). The last table counts journal commits (one
// fsync each) per decision: L3 must not add one.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { generateKeyPair, saveKeyPair } from "../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../src/runtime/index.js";
import { type EctLevel, signBehaviorSpec } from "../src/trust/index.js";
import { gatePolicy, rawCall } from "./_decide-inproc.js";
import { type Stats, summarize, table } from "./_stats.js";

const N = Number(process.env.BENCH_TRUST_N ?? 3000);
const CONCURRENCY = 10;
const journalKey = generateKeyPair("ed25519");

function behavior(dir: string): { keys: string[]; specs: string[] } {
  const operator = generateKeyPair("ed25519");
  const key = saveKeyPair(operator, dir, { name: "operator" });
  const spec = signBehaviorSpec(
    {
      spec_version: "1",
      agent_id: "agent-1",
      allowed_actions: ["http.get"],
      constraints: { max_actions_per_minute: 1_000_000 },
      verification_frequency: "continuous",
    },
    operator,
  );
  writeFileSync(join(dir, "spec.json"), JSON.stringify(spec));
  return { keys: [key.publicPem], specs: [join(dir, "spec.json")] };
}

async function open(dir: string, level: EctLevel | null): Promise<Runtime> {
  return composeRuntime(
    {
      policy: [],
      journal: { path: join(dir, "journal.db"), signer: journalKey, signatureMode: "batch" },
      gate: { principals: { "agent-1": { id: "agent-1", roles: ["agent"] } }, context: { budgets: {} } },
      ...(level === null ? {} : { apae: { ectLevel: level, behavior: behavior(dir) } }),
    },
    { policy: await gatePolicy() },
  );
}

interface Row extends Stats {
  commitsPerDecision: number;
}

async function drive(rt: Runtime, n: number, offset: number): Promise<Omit<Row, "name">> {
  const lat = new Float64Array(n);
  let commits = 0;
  const store = rt.store;
  const appendBatch = store.appendBatch.bind(store);
  store.appendBatch = (build) => {
    commits++;
    return appendBatch(build);
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const out = await rt.gate.evaluate(rawCall(offset + i));
        if (out.decision !== "allow") throw new Error(`bench: expected allow, got ${out.decision}`);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  const stats = summarize("", lat, performance.now() - t0, cpu0);
  await rt.apae?.settled();
  store.appendBatch = appendBatch;
  return { ...stats, commitsPerDecision: commits / n };
}

const NAMES: Record<string, string> = {
  none: "decision alone (APAE off): runtime, durable journal, 100 rules, 10 in flight",
  L1: "+ APAE: ECT L1 (unsigned) + continuous behaviour check",
  L2: "+ APAE: ECT L2 (ES256, runtime key) + continuous behaviour check",
  L3: "+ APAE: ECT L3 (ES256 + journal ledger, same commit) + continuous behaviour check",
};

async function row(level: EctLevel | null): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-trust-"));
  const rt = await open(dir, level);
  try {
    await drive(rt, Math.min(N, 500), 0);
    return { ...(await drive(rt, N, 1000)), name: NAMES[level ?? "none"] as string };
  } finally {
    await rt.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const level of [null, "L1", "L2", "L3"] as const) rows.push(await row(level));
  const baseline = rows[0] as Row;
  process.stdout.write(table(rows, baseline));
  process.stdout.write(
    `\n| case | journal commits (fsyncs) per decision |\n|---|---:|\n${rows
      .map((r) => `| ${r.name} | ${r.commitsPerDecision.toFixed(3)} |`)
      .join("\n")}\n`,
  );
}

await main();
