// Sandbox tier spawn cost and memory firewall cost, each beside its baseline in the same
// run:
//  - spawn: /usr/bin/true through the ProcessExecutor (ticket, evidence, no journal) in
//    the process tier without limits (the baseline: today's plain spawn), the process tier
//    with limits (prlimit), and the namespace tier (bubblewrap) when it works here;
//  - memory: write and read through the memory firewall (Gate decision journaled to a
//    SQLite file, store write/read, result recorded) beside a bare Gate decision.
// One operation at a time. The namespace row says why when it cannot run.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uuidv7 } from "../src/contracts/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import {
  bwrapUnavailable,
  type ProcessBinding,
  ProcessExecutor,
  type SandboxOptions,
} from "../src/executors/index.js";
// The executor alone is timed: the ticket is minted directly, as the executor tests do.
import { ExecutionTicket } from "../src/gate/ticket.js";
import { MemoryFirewall, memoryClassify, withMemoryContracts } from "../src/memory/index.js";
import { composeRuntime } from "../src/runtime/index.js";
import { classifyContract } from "../src/tools/index.js";
import { measureAsync, type Stats, table } from "./_stats.js";

const N_SPAWN = Number(process.env.SANDBOX_BENCH_N ?? 150);
const N_MEMORY = Number(process.env.MEMORY_BENCH_N ?? 300);
const RUN_AS = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;

const binding: ProcessBinding = { name: "true", version: "1", build: () => ({ argv: ["/usr/bin/true"] }) };
const mint = () =>
  ExecutionTicket.mint({
    decisionId: uuidv7(),
    runId: "bench-run",
    principalId: "bench",
    toolClass: "shell",
    action: "exec",
    tool: "true",
    parameters: {},
  });

async function spawnRow(name: string, work: string, sandbox: SandboxOptions): Promise<Stats> {
  const ex = new ProcessExecutor({
    workDir: work,
    sandbox: { ...(RUN_AS ? { runAs: RUN_AS } : {}), ...sandbox },
  });
  return measureAsync(
    name,
    N_SPAWN,
    async () => {
      const r = await ex.execute(mint(), binding);
      if (!r.ok) throw new Error(`${name}: ${r.code} ${r.message}`);
    },
    10,
  );
}

async function spawnBench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "warden-bench-sbx-"));
  // The tool's user (nobody when the bench runs as root) must be able to use it.
  chmodSync(work, 0o777);
  const base = await spawnRow("process tier, no limits (plain spawn)", work, {});
  const rows = [base];
  rows.push(
    await spawnRow("process tier + prlimit (cpu, as, fsize, nofile)", work, {
      limits: { cpuSeconds: 10, memoryBytes: 1 << 30, fileSizeBytes: 1 << 26, openFiles: 256 },
    }),
  );
  const why = bwrapUnavailable(undefined);
  if (why === undefined) rows.push(await spawnRow("namespace tier (bwrap)", work, { tier: "namespace" }));
  process.stdout.write(table(rows, base));
  if (why !== undefined) process.stdout.write(`\nnamespace tier not measured: ${why}\n`);
  rmSync(work, { recursive: true, force: true });
}

async function memoryBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-mem-"));
  const policy = join(dir, "p.yaml");
  writeFileSync(
    policy,
    "rules:\n  - { id: m, name: m, priority: 1, match: { toolClass: memory }, decision: allow, reason: m }\n",
  );
  const rt = await composeRuntime({
    policy: [policy],
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: {
      principals: { a: { id: "a", roles: [] } },
      runs: "runtime",
      contractLookup: (reg) => withMemoryContracts(reg),
      classify: memoryClassify(classifyContract),
      context: { limits: { maxCallsPerRun: 1_000_000 } },
    },
  });
  const fw = MemoryFirewall.open(rt, { path: join(dir, "journal.db.memory.db") });
  const run = await rt.startRun("a");
  const caller = { principalId: "a", runId: run.runId };
  const gate = await measureAsync(
    "Gate decision alone (memory_read, evaluate)",
    N_MEMORY,
    () =>
      rt.gate.evaluate({
        principalId: "a",
        runId: run.runId,
        toolClass: "memory",
        action: "read",
        tool: "memory_read",
        parameters: { id: `mem_${"0".repeat(32)}` },
      }),
    20,
  );
  const ids: string[] = [];
  let i = 0;
  const write = await measureAsync(
    "memory write (Gate + store + journal)",
    N_MEMORY,
    async () => {
      const r = await fw.write(caller, {
        content: `note number ${i++} about the quarterly report`,
        classification: "public",
      });
      if (!r.ok) throw new Error(r.code);
      ids.push(r.value.id);
    },
    20,
  );
  let j = 0;
  const read = await measureAsync(
    "memory read (Gate + store + recordResult)",
    N_MEMORY,
    async () => {
      const r = await fw.read(caller, ids[j++ % ids.length] ?? "");
      if (!r.ok) throw new Error(r.code);
    },
    20,
  );
  process.stdout.write(`\n${table([gate, write, read], gate)}`);
  fw.close();
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
}

await spawnBench();
await memoryBench();
