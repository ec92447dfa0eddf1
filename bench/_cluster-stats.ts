// Where a decision's time goes in bench/cluster.ts, per process: the sidecars' CPU and
// event-loop utilisation and their journal transactions (from each child over IPC), the
// load generator's own CPU (this process), and PostgreSQL's CPU (the postmaster and its
// backends, from /proc). Linux only; missing
// readings are undefined and print as "-".
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type pg from "pg";

export interface NodeStats {
  cpuUs: { user: number; system: number };
  elu: { idle: number; active: number; utilization: number };
  commits: number | null;
  /** PgJournalStore.appendStats() (PostgreSQL mode only). */
  append: AppendCounters | null;
}

interface AppendCounters {
  commits: number;
  roundTrips: number;
  foreignHeads: number;
  conflicts: number;
  locked: number;
  commitMs: number;
}

/** Per journal transaction, over a row's nodes. */
export interface AppendBreakdown {
  roundTrips: number;
  /** Lost races (the head had moved) per transaction. */
  conflicts: number;
  /** Share of transactions that took the head lock. */
  locked: number;
  /** Share that started on another node's head (read the head and last entry first). */
  foreign: number;
  /** ms of the committing statement (includes the WAL flush). */
  commitMs: number;
}

/** The journal transactions of a row, summed over its nodes: per-transaction averages. */
export function appendBreakdown(before: NodeStats[], after: NodeStats[]): AppendBreakdown | undefined {
  const sum: AppendCounters = {
    commits: 0,
    roundTrips: 0,
    foreignHeads: 0,
    conflicts: 0,
    locked: 0,
    commitMs: 0,
  };
  for (const [i, a] of after.entries()) {
    const b = before[i]?.append;
    if (a.append === null || b === null || b === undefined) return undefined;
    for (const k of Object.keys(sum) as (keyof AppendCounters)[]) sum[k] += a.append[k] - b[k];
  }
  const n = sum.commits;
  if (n === 0) return undefined;
  return {
    roundTrips: sum.roundTrips / n,
    conflicts: sum.conflicts / n,
    locked: sum.locked / n,
    foreign: sum.foreignHeads / n,
    commitMs: sum.commitMs / n,
  };
}

/** Asks a bench child for its stats (bench/_cluster-node.ts answers "stats"). */
export function nodeStats(proc: ChildProcess): Promise<NodeStats> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("no stats from the bench node")), 10_000);
    proc.once("message", (m) => {
      clearTimeout(t);
      resolve(m as NodeStats);
    });
    proc.send("stats");
  });
}

/** utime, stime (and the waited-for children's) of a /proc stat file, in ms; ppid too. */
function statOf(pid: number): { ppid: number; ms: number; childrenMs: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const tick = (i: number) => (Number(f[i]) * 1000) / 100;
    return { ppid: Number(f[1]), ms: tick(11) + tick(12), childrenMs: tick(13) + tick(14) };
  } catch {
    return undefined;
  }
}

/** The postmaster's pid: the parent of this connection's backend. */
export async function postmasterPid(pool: pg.Pool): Promise<number | undefined> {
  const r = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const backend = r.rows[0]?.pid;
  return backend === undefined ? undefined : statOf(backend)?.ppid;
}

/** CPU ms of the whole server: the postmaster, its exited backends (waited for) and live ones. */
export function serverCpuMs(postmaster: number | undefined): number | undefined {
  if (postmaster === undefined) return undefined;
  const top = statOf(postmaster);
  if (top === undefined) return undefined;
  let ms = top.ms + top.childrenMs;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(Number(name));
    if (s !== undefined && s.ppid === postmaster) ms += s.ms;
  }
  return ms;
}
