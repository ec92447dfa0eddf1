// Shared measurement helpers for benchmarks: timing loops and a markdown table with the
// process CPU (user + system, all threads, process.cpuUsage) per operation.
import { performance } from "node:perf_hooks";

export interface Stats {
  name: string;
  n: number;
  medianUs: number;
  p99Us: number;
  opsPerSec: number;
  /** Process CPU µs per operation over the timed loop, when measured. */
  cpuUs?: number;
}

/** Times `fn` `n` times individually (after `warmup` runs); per-call latencies in µs. */
export function measure(name: string, n: number, fn: (i: number) => void, warmup = Math.min(1000, n)): Stats {
  for (let i = 0; i < warmup; i++) fn(i);
  const samples = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn(i);
    samples[i] = (performance.now() - t0) * 1000;
  }
  const total = performance.now() - start;
  return summarize(name, samples, total, cpu0);
}

/** `measure` for an async operation: each call awaited before the next. */
export async function measureAsync(
  name: string,
  n: number,
  fn: () => Promise<unknown>,
  warmup = Math.min(1000, n),
): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = new Float64Array(n);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples[i] = (performance.now() - t0) * 1000;
  }
  return summarize(name, samples, performance.now() - start, cpu0);
}

/**
 * Builds Stats from latency samples (µs) and the wall time (ms) they took together; with
 * `cpu0` (process.cpuUsage() taken when the timed loop started), the CPU per operation.
 */
export function summarize(
  name: string,
  samples: Float64Array,
  totalMs: number,
  cpu0?: NodeJS.CpuUsage,
): Stats {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const cpu = cpu0 === undefined ? undefined : process.cpuUsage(cpu0);
  return {
    name,
    n: samples.length,
    medianUs: at(0.5),
    p99Us: at(0.99),
    opsPerSec: (samples.length / totalMs) * 1000,
    ...(cpu !== undefined ? { cpuUs: (cpu.user + cpu.system) / samples.length } : {}),
  };
}

export function table(rows: Stats[], baseline?: Stats): string {
  const head =
    "| case | n | median µs | p99 µs | ops/s | vs baseline | CPU µs/op |\n|---|---:|---:|---:|---:|---:|---:|\n";
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
  return (
    head +
    rows
      .map(
        (r) =>
          `| ${r.name} | ${r.n} | ${fmt(r.medianUs)} | ${fmt(r.p99Us)} | ${Math.round(r.opsPerSec)} | ${
            baseline ? `${((r.opsPerSec / baseline.opsPerSec) * 100).toFixed(0)}%` : ""
          } | ${r.cpuUs === undefined ? "-" : fmt(r.cpuUs)} |`,
      )
      .join("\n") +
    "\n"
  );
}
