// The sandbox wrapper's added cost (docs/hooks-containment.md "Cost"): a shell call run as
// Claude Code runs Warden's rewritten command (`bash -c '<node> contain-run.js …'`: the
// egress proxy, bubblewrap, the in-sandbox init, the command) beside the same command run
// bare (`bash -c <command>`), in the same run: on `true` and on `npm test` of a small
// project. CPU is the waited-for children's (/proc cutime+cstime): the processes inside the
// sandbox's PID namespace are reaped by bwrap's own init and are not all counted, so the
// contained rows' CPU is mostly the wrapper's (runner, bwrap). `containBench()` is exported
// for the combined `hooks-host` bench; `npm run bench -- hooks-contain` runs it alone.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { containCommand, containmentUnavailable, containSpec, runnerFiles } from "../src/hooks/index.js";
import { childrenCpuMs } from "./_proc.js";
import { type Stats, summarize, table } from "./_stats.js";

const N_TRUE = Number(process.env.HOOKS_CONTAIN_BENCH_N ?? 40);
const N_NPM = Number(process.env.HOOKS_CONTAIN_BENCH_NPM_N ?? 15);

function run(command: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // npm's update check off in both (the sandbox sets it): the same work on each side.
    const env = { ...process.env, npm_config_update_notifier: "false" };
    const c = spawn("/bin/bash", ["-c", command], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    c.stderr.on("data", (d) => {
      err += d;
    });
    c.on("error", reject);
    c.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`exit ${code}: ${err.slice(0, 500)}`)),
    );
  });
}

/** Times `n` runs (after 2 warm-ups); CPU per run from the waited-for children's ticks. */
async function time(name: string, n: number, command: string, cwd: string): Promise<Stats> {
  for (let i = 0; i < 2; i++) await run(command, cwd);
  const samples = new Float64Array(n);
  const cpu0 = childrenCpuMs();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await run(command, cwd);
    samples[i] = (performance.now() - t0) * 1000;
  }
  const stats = summarize(name, samples, performance.now() - start);
  const cpu1 = childrenCpuMs();
  return cpu0 !== undefined && cpu1 !== undefined ? { ...stats, cpuUs: ((cpu1 - cpu0) * 1000) / n } : stats;
}

function project(): { root: string; ws: string; hooksDir: string } {
  const root = mkdtempSync(join(tmpdir(), "warden-bench-contain-"));
  const ws = join(root, "project");
  mkdirSync(ws);
  const pkg = { name: "tiny", version: "1.0.0", scripts: { test: `node -e "console.log('ok')"` } };
  writeFileSync(join(ws, "package.json"), JSON.stringify(pkg));
  const hooksDir = join(root, "hooks");
  mkdirSync(hooksDir);
  return { root, ws, hooksDir };
}

/** The four rows and the markdown, or why containment cannot run here. */
export async function containBench(): Promise<{ rows: Stats[]; text: string } | { unavailable: string }> {
  const why = containmentUnavailable();
  if (why !== undefined) return { unavailable: why };
  const { root, ws, hooksDir } = project();
  try {
    const spec = containSpec({ hooksDir, stateDirs: [] }, ws, { sessionKey: "bench", callId: "bench" });
    const runner = runnerFiles().run;
    const contained = (c: string) => containCommand({ command: c, spec, runner });
    const bareTrue = await time("bash -c true (bare)", N_TRUE, "true", ws);
    const cTrue = await time("true, contained", N_TRUE, contained("true"), ws);
    const bareNpm = await time("npm test (bare)", N_NPM, "npm test --silent", ws);
    const cNpm = await time("npm test, contained", N_NPM, contained("npm test --silent"), ws);
    const added = (a: Stats, b: Stats) => `${((b.medianUs - a.medianUs) / 1000).toFixed(1)} ms`;
    const text =
      `${table([bareTrue, cTrue], bareTrue)}\nadded median on true: ${added(bareTrue, cTrue)}\n\n` +
      `${table([bareNpm, cNpm], bareNpm)}\nadded median on npm test: ${added(bareNpm, cNpm)}\n`;
    return { rows: [bareTrue, cTrue, bareNpm, cNpm], text };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const r = await containBench();
  if ("unavailable" in r) {
    process.stdout.write(`containment unavailable: ${r.unavailable}\n`);
    process.exitCode = 1;
  } else process.stdout.write(r.text);
}
