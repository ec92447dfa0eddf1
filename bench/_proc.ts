// Linux /proc readings for benchmarks: CPU time of a process (all threads) or of its main
// thread, and resident memory. Undefined where /proc is not available.
import { readFileSync } from "node:fs";

const USER_HZ = 100;

function ticksMs(path: string): number | undefined {
  try {
    const stat = readFileSync(path, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / USER_HZ; // utime + stime
  } catch {
    return undefined;
  }
}

/** CPU ms of process `pid`, every thread. */
export function processCpuMs(pid: number = process.pid): number | undefined {
  return ticksMs(`/proc/${pid}/stat`);
}

/** CPU ms of the main thread of process `pid` (its tid is its pid). */
export function mainThreadCpuMs(pid: number = process.pid): number | undefined {
  return ticksMs(`/proc/${pid}/task/${pid}/stat`);
}

/** Resident set size of process `pid`, MiB. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** µs per op between two readings, or undefined. */
export function perOp(a: number | undefined, b: number | undefined, ops: number): number | undefined {
  return a !== undefined && b !== undefined && ops > 0 ? ((b - a) * 1000) / ops : undefined;
}
