// Linux /proc readings for benchmarks: CPU time of a process (all threads) or of its main
// thread, and resident memory. Undefined where /proc is not available.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const USER_HZ = 100;

/** Two CPU-tick fields of a /proc stat line (counted after the command name), in ms. */
function ticksMs(path: string, first = 11): number | undefined {
  try {
    const stat = readFileSync(path, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[first]) + Number(f[first + 1])) * 1000) / USER_HZ; // utime + stime
  } catch {
    return undefined;
  }
}

/** CPU ms of this process's waited-for children (cutime + cstime). */
export function childrenCpuMs(): number | undefined {
  return ticksMs("/proc/self/stat", 13);
}

/** Runs a command to its end and resolves with its stdout; a non-zero exit rejects. */
export function stdoutOf(
  cmd: string,
  args: string[],
  stderr: "inherit" | "pipe" = "inherit",
): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { stdio: ["ignore", "pipe", stderr] });
    let out = "";
    c.stdout?.on("data", (b: Buffer) => {
      out += b.toString();
    });
    c.on("error", reject);
    c.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} exited ${code}`))));
  });
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
