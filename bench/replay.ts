// The replay recorder's cost and replay's speed. One workload — governed file reads
// through the `warden run` runtime (authorize, execute, report the result) — measured with
// the recorder off (baseline) and on, in the same process; the Gate's decision alone
// (evaluate) is measured both ways too (the recorder is not on the decision path). Then the
// recorded runs are replayed (`replayRuns`: pinned bundle, snapshots, no executor) and the
// replay's steps per second are set against the original run's.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { cliReplayHost } from "../src/cli/replay-host.js";
import { openRuntime, type Runtime } from "../src/cli/runtime.js";
import { replayRuns } from "../src/evidence/index.js";
import { type ExecutionTicket, ticketOf } from "../src/gate/index.js";
import { measureAsync, type Stats, table } from "./_stats.js";

const N = 400;
const PER_RUN = 40;
const POLICY = `rules:
  - { id: reads, name: reads, priority: 1, match: { toolClass: file, action: read }, decision: allow, reason: r }
`;

async function open(dir: string, record: boolean): Promise<Runtime> {
  return openRuntime({
    contracts: join(dir, "contracts"),
    policy: [join(dir, "p.yaml")],
    principal: "agent",
    db: join(dir, record ? "on.db" : "off.db"),
    sandbox: join(dir, "sandbox"),
    record,
  });
}

/** A workload step: a fresh run every PER_RUN calls (the run's call budget stays out of it). */
function workload(rt: Runtime, execute: boolean) {
  let runId = "";
  let i = 0;
  return async () => {
    if (i++ % PER_RUN === 0) runId = (await rt.startRun("agent")).runId;
    const request = {
      principalId: "agent",
      runId,
      toolClass: "file",
      action: "read",
      tool: "file_read",
      parameters: { path: `f${i % 8}.json` },
    };
    if (!execute) {
      const o = await rt.gate.evaluate(request);
      if (o.decisionId !== null) rt.gate.release(o.decisionId);
      return;
    }
    const o = await rt.gate.authorize(request);
    const r = await rt.execute(ticketOf(o) as ExecutionTicket);
    if (!r.ok || o.decisionId === null) throw new Error("bench call failed");
    await rt.gate.recordResult(o.decisionId, { taintLabels: r.taint, data: r.output });
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-bench-replay-"));
  mkdirSync(join(dir, "contracts"));
  mkdirSync(join(dir, "sandbox"));
  for (let f = 0; f < 8; f++)
    writeFileSync(join(dir, "sandbox", `f${f}.json`), JSON.stringify({ n: f, body: "x".repeat(512) }));
  writeFileSync(join(dir, "p.yaml"), POLICY);
  const off = await open(dir, false);
  const on = await open(dir, true);
  const rows: Stats[] = [];
  try {
    rows.push(await measureAsync("decide (evaluate), recorder off", N, workload(off, false), 50));
    rows.push(await measureAsync("decide (evaluate), recorder on", N, workload(on, false), 50));
    rows.push(await measureAsync("decide + execute + result, recorder off", N, workload(off, true), 40));
    const recorded = await measureAsync("decide + execute + result, recorder on", N, workload(on, true), 40);
    rows.push(recorded);
    process.stdout.write(`${table(rows, rows[2])}\n`);
    const t0 = performance.now();
    const reports = await replayRuns({
      db: join(dir, "on.db"),
      keys: [join(dir, "on.db.key.pem")],
      from: "2000-01-01T00:00:00Z",
      to: "2999-01-01T00:00:00Z",
      host: cliReplayHost,
    });
    const ms = performance.now() - t0;
    const steps = reports.reduce((n, r) => n + r.steps.length, 0);
    const identical = reports.reduce((n, r) => n + r.counts.identical, 0);
    const replayRate = (steps / ms) * 1000;
    process.stdout.write(
      "| run | steps | steps/s | vs original |\n|---|---:|---:|---:|\n" +
        `| original (decide + execute + result, recorder on) | ${recorded.n} | ${Math.round(recorded.opsPerSec)} | 100% |\n` +
        `| replay (verify journal, pinned bundle, snapshots; ${reports.length} runs, ${identical}/${steps} identical) | ${steps} | ${Math.round(replayRate)} | ${((replayRate / recorded.opsPerSec) * 100).toFixed(0)}% |\n`,
    );
  } finally {
    await off.close();
    await on.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
