// CLI start-up: `warden --help` spawned as a fresh process, beside a same-run baseline of
// `node -e 0` (what any Node program costs before its first line). The target (issue 16)
// is under 150 ms of wall time on this machine; the command modules and every layer are
// imported only when their command runs, so the root help loads commander and nothing else.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { childrenCpuMs } from "./_proc.js";
import { type Stats, summarize, table } from "./_stats.js";

const here = dirname(fileURLToPath(import.meta.url));
// dist/bench/cli.js → the repository's bin/warden.js (it loads dist/src/cli/main.js).
const WARDEN = join(here, "..", "..", "bin", "warden.js");
const N = 21;

function spawnTimes(name: string, args: string[]): Stats {
  spawnSync(process.execPath, args, { stdio: "ignore" }); // warm the file cache
  const samples = new Float64Array(N);
  const c0 = childrenCpuMs();
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const res = spawnSync(process.execPath, args, { stdio: "ignore" });
    samples[i] = (performance.now() - t0) * 1000;
    if (res.status !== 0) throw new Error(`${name} exited with ${res.status}`);
  }
  const stats = summarize(name, samples, performance.now() - start);
  const c1 = childrenCpuMs();
  // the child processes' CPU (clock ticks, 10 ms resolution: a mean over N runs)
  return c0 === undefined || c1 === undefined ? stats : { ...stats, cpuUs: ((c1 - c0) * 1000) / N };
}

const baseline = spawnTimes("node -e 0 (baseline)", ["-e", "0"]);
const help = spawnTimes("warden --help", [WARDEN, "--help"]);
const version = spawnTimes("warden --version", [WARDEN, "--version"]);
process.stdout.write(table([baseline, help, version], baseline));
const ms = help.medianUs / 1000;
process.stdout.write(
  `\nwarden --help: median ${ms.toFixed(0)} ms wall (target < 150 ms), ` +
    `${(ms - baseline.medianUs / 1000).toFixed(0)} ms above node -e 0\n`,
);
