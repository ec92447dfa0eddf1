// `npm run bench -- trust`: what APAE trust costs per decision. The baseline is the decide
// bench's stub row (the Gate in process, 100 YAML rules, a stub journal, 10 in flight);
// the other rows run the same Gate and, per decision, apply a trust event to the
// principal's row (in-memory store) and emit the decision's ECT at L1 (unsigned), L2
// (ES256) or L3 (ES256, DAG-validated and appended to a durable SQLite journal with batch
// signatures, parented on the previous ECT). All rows are measured in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSessionStore } from "../src/context/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { Gate, type GateJournal } from "../src/gate/index.js";
import {
  builtinEventTypes,
  type JournalEntry,
  openJournal,
  SqliteJournalStore,
} from "../src/journal/index.js";
import {
  EctEmitter,
  EctLedger,
  type EctLevel,
  ectHash,
  MemoryTrustStore,
  registerEctLedgerEventType,
  TrustEngine,
} from "../src/trust/index.js";
import { gatePolicy, rawCall, stubRow } from "./_decide-inproc.js";
import { type Stats, summarize, table } from "./_stats.js";

const N = Number(process.env.BENCH_TRUST_N ?? 5000);
const CONCURRENCY = 10;
const journalKey = generateKeyPair("ed25519");
const ectKey = { kid: "bench-1", privateKey: generateKeyPair("p256").privateKey };

function stubGate(policy: Awaited<ReturnType<typeof gatePolicy>>): Gate {
  let seq = 0;
  const stub: GateJournal = {
    append: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
    appendBuilt: async (e) => ({ seq: seq++, type: e.type }) as unknown as JournalEntry,
  };
  const principals = { "agent-1": { id: "agent-1", roles: ["agent"] } };
  return new Gate({
    policy,
    journal: stub,
    signer: journalKey,
    principals,
    sessions: createSessionStore({ budgets: {} }),
  });
}

type PerDecision = (i: number, decision: string) => Promise<void>;

async function drive(
  gate: Gate,
  n: number,
  offset: number,
  after: PerDecision,
): Promise<Omit<Stats, "name">> {
  const lat = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        const out = await gate.evaluate(rawCall(offset + i));
        if (out.decision !== "allow") throw new Error(`bench: expected allow, got ${out.decision}`);
        await after(offset + i, out.decision);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  return summarize("", lat, performance.now() - t0, cpu0);
}

async function trustRow(level: EctLevel, dir: string): Promise<Stats> {
  const gate = stubGate(await gatePolicy());
  const engine = new TrustEngine({ store: new MemoryTrustStore() });
  let close = async () => {};
  let ledger: EctLedger | undefined;
  if (level === "L3") {
    const registry = builtinEventTypes();
    registerEctLedgerEventType(registry);
    const store = SqliteJournalStore.open(join(dir, "ect.db"));
    const journal = await openJournal({ store, signer: journalKey, registry, signatureMode: "batch" });
    ledger = await EctLedger.open(journal);
    close = () => journal.close();
  }
  const emitter = new EctEmitter({
    level,
    issuer: "spiffe://bench/runtime",
    key: ectKey,
    ...(ledger ? { ledger } : {}),
  });
  let last: string | undefined;
  const after: PerDecision = async (i, decision) => {
    await engine.apply({ subject: "agent-1", event: "task_success" });
    const par = last === undefined ? [] : [last];
    const { claims } = await emitter.emit({
      exec_act: "http.get",
      aud: "agent-1",
      par,
      inp_hash: ectHash(String(i)),
      pol: "bench",
      pol_decision: decision,
    });
    last = claims.jti;
  };
  try {
    await drive(gate, Math.min(N, 1000), 0, after);
    const row = await drive(gate, N, 1000, after);
    const what =
      level === "L1"
        ? "unsigned"
        : level === "L2"
          ? "ES256"
          : "ES256 + ledger (SQLite, fsync, batch signatures)";
    return { ...row, name: `Gate + trust update + ECT ${level} (${what}), 10 in flight` };
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-trust-"));
  try {
    const baseline = await stubRow(await gatePolicy(), journalKey, N);
    const rows: Stats[] = [baseline];
    for (const level of ["L1", "L2", "L3"] as const) rows.push(await trustRow(level, dir));
    process.stdout.write(table(rows, baseline));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
