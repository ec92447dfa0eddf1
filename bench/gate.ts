// The whole Gate pipeline per decision — parse, principal, session context (taint,
// provenance, budgets, behavioural rules), 100 YAML rules, DARE record, journal commit —
// beside a same-run baseline: the policy bundle's evaluate alone on the same request.
// Rows:
//  - one at a time and 64 in flight on a SQLite file journal (WAL, synchronous=FULL): each
//    decision pays for a durable commit (group commit across concurrent decisions);
//  - 10 in flight (the sidecar's autocannon setting) on a file journal and on :memory:;
//  - 10 in flight on a stub journal that only hands back a sequence number: the Gate's own
//    cost per decision, without the journal's append (validate, mask, hash, sign, insert).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSessionStore } from "../src/context/index.js";
import { GateRequest } from "../src/contracts/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { Gate, type GateJournal } from "../src/gate/index.js";
import { type JournalEntry, openJournal, SqliteJournalStore } from "../src/journal/index.js";
import { gatePolicy, rawCall } from "./_decide-inproc.js";
import { measure, type Stats, summarize, table } from "./_stats.js";

// The same 100-rule policy as the decide bench (99 shell denials, then the allow).
const policy = gatePolicy();
const raw = rawCall;

const principals = { "agent-1": { id: "agent-1", roles: ["agent"] } };

/** `n` decisions, `inFlight` at a time, each awaited; latency per decision. */
async function inFlight(
  name: string,
  gate: Gate,
  n: number,
  concurrency: number,
  offset = 0,
): Promise<Stats> {
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const out = await gate.evaluate(raw(offset + i));
        if (out.decision !== "allow")
          throw new Error(`bench: expected allow, got ${out.reasonCodes.join(",")}`);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  const stats = summarize(name, lat, performance.now() - t0, cpu0);
  const cpu = process.cpuUsage(cpu0);
  cpuPerDecision.push([name, (cpu.user + cpu.system) / n, stats.opsPerSec > 0 ? 1e6 / stats.opsPerSec : 0]);
  return stats;
}

/** [row, CPU µs per decision (every thread of the process), wall µs per decision]. */
const cpuPerDecision: [string, number, number][] = [];

const dir = mkdtempSync(join(tmpdir(), "warden-bench-gate-"));
try {
  const key = generateKeyPair("ed25519");
  const journal = await openJournal({ store: SqliteJournalStore.open(join(dir, "j.db")), signer: key });
  const gate = new Gate({
    policy,
    journal,
    signer: key,
    principals,
    sessions: createSessionStore({ budgets: {} }),
  });

  const N = 5000;
  const facts = createSessionStore({}).open({ runId: "x", principalId: "agent-1" }).snapshot();
  const parsed = GateRequest.parse(raw(0));
  const baseline = measure("baseline: policy bundle evaluate (100 rules)", 20_000, () =>
    policy.evaluate({
      request: parsed,
      principal: { id: "agent-1", roles: ["agent"] },
      taint: [],
      session: facts,
    }),
  );

  // Sequential: each decision waits for its own durable commit.
  const seq = new Float64Array(1000);
  const seqCpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < seq.length; i++) {
    const s = performance.now();
    await gate.evaluate(raw(i));
    seq[i] = (performance.now() - s) * 1000;
  }
  const sequential = summarize(
    "gate.evaluate, one at a time (fsync each)",
    seq,
    performance.now() - t0,
    seqCpu0,
  );

  // Concurrent: 64 runs in flight share commits.
  const concurrent = await inFlight("gate.evaluate, 64 in flight (group commit)", gate, N, 64, 1000);
  await journal.close();

  // 10 in flight, as the sidecar bench drives /v1/decide: file journal, :memory:, stub.
  const rows: Stats[] = [];
  for (const [label, path] of [
    ["file journal", join(dir, "c10.db")],
    ["journal :memory:", ":memory:"],
  ] as const) {
    const j = await openJournal({ store: SqliteJournalStore.open(path), signer: key });
    const g = new Gate({
      policy,
      journal: j,
      signer: key,
      principals,
      sessions: createSessionStore({ budgets: {} }),
    });
    await inFlight("warm-up", g, 1000, 10);
    rows.push(await inFlight(`gate.evaluate, 10 in flight, ${label}`, g, N, 10, 1000));
    await j.close();
  }
  let seqNo = 0;
  const stub: GateJournal = {
    append: async (e) => ({ seq: seqNo++, type: e.type }) as unknown as JournalEntry,
    appendBuilt: async (e) => ({ seq: seqNo++, type: e.type }) as unknown as JournalEntry,
  };
  const g = new Gate({
    policy,
    journal: stub,
    signer: key,
    principals,
    sessions: createSessionStore({ budgets: {} }),
  });
  await inFlight("warm-up", g, 5000, 10);
  rows.push(
    await inFlight("gate.evaluate, 10 in flight, stub journal (the Gate alone)", g, 20_000, 10, 5000),
  );

  process.stdout.write(table([baseline, sequential, concurrent, ...rows], baseline));
  const shown = cpuPerDecision.filter(([name]) => name !== "warm-up");
  process.stdout.write(
    "\n| case | CPU µs per decision (all threads) | wall µs per decision (1e6 / ops/s) |\n|---|---:|---:|\n" +
      shown.map(([name, cpu, wall]) => `| ${name} | ${cpu.toFixed(1)} | ${wall.toFixed(1)} |`).join("\n") +
      "\n\nThe stub-journal row is the Gate's own cost per decision; the others add the journal's\n" +
      "append (validate, mask, hash, sign — partly on signing workers — and insert) and commit.\n",
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
