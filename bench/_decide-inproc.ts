// In-process rows of bench/decide.ts: the Gate with 100 YAML rules on a stub journal (its
// own cost), on the durable segment journal (fdatasync per batch, batch signatures) and on
// the SQLite store (the same-run baseline), N in flight, with CPU per decision for the whole
// process (process.cpuUsage) and for the main thread (/proc), and journal commits — one
// fsync each — per decision, counted by the store. The segment journal's index writes fall
// inside the timed loop (it indexes every 2048 rows even when appends never yield to a timer).
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSessionStore } from "../src/context/index.js";
import type { KeyPair } from "../src/crypto/index.js";
import { Gate, type GateJournal, type GatePolicy } from "../src/gate/index.js";
import {
  type Durability,
  type JournalEntry,
  openJournal,
  SegmentJournalStore,
  SqliteJournalStore,
} from "../src/journal/index.js";
import { loadPolicyBundle } from "../src/policy/index.js";
import { mainThreadCpuMs, perOp } from "./_proc.js";
import { type Stats, summarize } from "./_stats.js";

export interface InprocRow extends Stats {
  cpuUs: number;
  mainCpuUs?: number;
  fsyncsPerDecision?: number;
}

/** 99 deny rules on shell commands, then the rule that allows the bench call. */
export function gatePolicy(): ReturnType<typeof loadPolicyBundle> {
  const rules = ["name: bench", "rules:"];
  for (let i = 0; i < 99; i++) {
    rules.push(
      `  - {id: r${i}, name: r${i}, priority: ${100 + i}, match: {toolClass: shell, parameters: {command: {pattern: "^cmd${i} "}}}, decision: deny, reason: r}`,
    );
  }
  rules.push(
    '  - {id: allow-api, name: api, priority: 800, match: {toolClass: http, action: get, parameters: {url: {pattern: "^https://api\\\\.example\\\\.com/"}}}, decision: allow, reason: r}',
  );
  return loadPolicyBundle({ yaml: [{ name: "bench.yaml", text: `${rules.join("\n")}\n` }] });
}

export const rawCall = (i: number) => ({
  principalId: "agent-1",
  runId: `run-${i % 64}`,
  toolClass: "http",
  action: "get",
  parameters: { url: `https://api.example.com/v1/items?page=${i}` },
});

const principals = { "agent-1": { id: "agent-1", roles: ["agent"] } };

function gateOn(policy: GatePolicy, journal: GateJournal, signer: KeyPair): Gate {
  return new Gate({ policy, journal, signer, principals, sessions: createSessionStore({ budgets: {} }) });
}

/** `n` decisions, `concurrency` at a time; CPU per decision read around the timed loop. */
async function drive(
  gate: Gate,
  n: number,
  concurrency: number,
  offset: number,
): Promise<Omit<InprocRow, "name">> {
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const m0 = mainThreadCpuMs();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const out = await gate.evaluate(rawCall(offset + i));
        if (out.decision !== "allow") throw new Error(`bench: expected allow, got ${out.decision}`);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  const stats = summarize("", lat, performance.now() - t0);
  const cpu = process.cpuUsage(cpu0);
  const main = perOp(m0, mainThreadCpuMs(), n);
  return { ...stats, cpuUs: (cpu.user + cpu.system) / n, ...(main !== undefined ? { mainCpuUs: main } : {}) };
}

export async function stubRow(policy: GatePolicy, signer: KeyPair, n: number): Promise<InprocRow> {
  let seq = 0;
  const stub: GateJournal = {
    append: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
    appendBuilt: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
  };
  const gate = gateOn(policy, stub, signer);
  await drive(gate, Math.min(n, 5000), 10, 0);
  return {
    ...(await drive(gate, n, 10, 5000)),
    name: "Gate in process, 100 rules, stub journal, 10 in flight",
  };
}

export async function durableRow(
  policy: GatePolicy,
  signer: KeyPair,
  opts: {
    dir: string;
    durability: Durability;
    n: number;
    concurrency: number;
    store?: "sqlite" | "segments";
  },
): Promise<InprocRow> {
  const kind = opts.store ?? "segments";
  const file = join(opts.dir, `gate-${kind}-${opts.durability}-${opts.concurrency}.db`);
  // The segment journal has no "os" durability: it always fdatasyncs each batch.
  const store =
    kind === "segments"
      ? SegmentJournalStore.open(file)
      : SqliteJournalStore.open(file, { durability: opts.durability });
  const journal = await openJournal({ store, signer, signatureMode: "batch" });
  try {
    const gate = gateOn(policy, journal, signer);
    await drive(gate, 1000, opts.concurrency, 0);
    const c0 = store.commits;
    const row = await drive(gate, opts.n, opts.concurrency, 1000);
    const sync = opts.durability === "fsync" ? "fsync" : "durability: os (opt-in, no fsync)";
    const what = kind === "segments" ? "segment journal (fdatasync per batch" : `SQLite journal (${sync}`;
    return {
      ...row,
      name: `Gate + ${what}, batch signatures), ${opts.concurrency} in flight`,
      fsyncsPerDecision: (store.commits - c0) / opts.n,
    };
  } finally {
    await journal.close();
    await store.close();
  }
}
