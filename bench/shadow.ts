// What a shadow bundle costs the decision path (docs/policy.md#shadow-policies): the Gate on a
// durable SQLite file journal (synchronous=FULL, group commit), 64 decisions in flight, with
// the same-run baseline of no shadow bundle beside
//  - a shadow bundle that agrees on every call (the 100-rule policy again: evaluated, nothing
//    journaled), and
//  - a shadow bundle that disagrees on every call (one more journal entry per decision:
//    the worst case, a shadow that would change everything).
// The shadow is evaluated after the decision is answered, so its CPU is counted here but
// its latency is not on the decision's path.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSessionStore } from "../src/context/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { Gate, ShadowPolicy } from "../src/gate/index.js";
import { openJournal, SqliteJournalStore } from "../src/journal/index.js";
import { loadPolicyBundle } from "../src/policy/index.js";
import { gatePolicy, rawCall } from "./_decide-inproc.js";
import { type Stats, summarize, table } from "./_stats.js";

const N = Number(process.argv.find((a) => a.startsWith("--n="))?.slice(4) ?? 5000);
const principals = { "agent-1": { id: "agent-1", roles: ["agent"] } };
const denyAll = loadPolicyBundle({
  yaml: [
    {
      name: "deny.yaml",
      text: "name: candidate\nrules:\n  - {id: deny-api, name: d, priority: 1, match: {toolClass: http}, decision: deny, reason: r}\n",
    },
  ],
});

type Case = "none" | "agrees" | "disagrees";

async function row(dir: string, label: string, c: Case): Promise<[Stats, number]> {
  const key = generateKeyPair("ed25519");
  const journal = await openJournal({ store: SqliteJournalStore.open(join(dir, `${c}.db`)), signer: key });
  const shadow =
    c === "none" ? undefined : new ShadowPolicy(c === "agrees" ? gatePolicy() : denyAll, journal);
  const gate = new Gate({
    policy: gatePolicy(),
    ...(shadow !== undefined ? { shadow } : {}),
    journal,
    signer: key,
    principals,
    sessions: createSessionStore({ budgets: {} }),
  });
  const run = async (n: number, offset: number) => {
    const lat = new Float64Array(n);
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) {
          const i = next++;
          const s = performance.now();
          const o = await gate.evaluate(rawCall(offset + i));
          if (o.decision !== "allow")
            throw new Error(`bench: expected allow, got ${o.reasonCodes.join(",")}`);
          lat[i] = (performance.now() - s) * 1000;
        }
      }),
    );
    await shadow?.settle();
    return lat;
  };
  await run(1000, 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const lat = await run(N, 1000);
  const stats = summarize(label, lat, performance.now() - t0, cpu0);
  const cpu = process.cpuUsage(cpu0);
  await journal.close();
  return [stats, (cpu.user + cpu.system) / N];
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-shadow-"));
try {
  const rows: [Stats, number][] = [];
  rows.push(await row(dir, "baseline: gate.evaluate, 64 in flight, no shadow", "none"));
  rows.push(await row(dir, "with a shadow bundle that agrees (100 rules)", "agrees"));
  rows.push(await row(dir, "with a shadow bundle that disagrees on every call (+1 entry each)", "disagrees"));
  const base = rows[0]?.[0];
  if (base === undefined) throw new Error("bench: no baseline");
  process.stdout.write(
    table(
      rows.map(([s]) => s),
      base,
    ),
  );
  process.stdout.write(
    "\n| case | CPU µs per decision (all threads, shadow included) |\n|---|---:|\n" +
      rows.map(([s, cpu]) => `| ${s.name} | ${cpu.toFixed(1)} |`).join("\n") +
      "\n",
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
