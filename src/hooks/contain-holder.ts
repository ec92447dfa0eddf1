// The session's namespaces (docs/hooks-containment.md "One network per session"): a
// long-lived bubblewrap "holder" per host session owns a user, network and PID namespace
// and a mount namespace whose `/` is the host's. Each contained call of the session enters
// them (`nsenter --user --mount --net --pid`) and builds its own sandbox inside (bwrap with a
// new user, mount, IPC and UTS namespace — not a new network or PID namespace), so a server
// started by one call (`npm run dev &`) lives on in the holder's PID namespace and is
// reachable on 127.0.0.1 from the next call, while the host's loopback stays out of reach
// (the holder's network namespace has only its own loopback).
//
// The holder is bwrap alone (no Node): its init is a shell loop that exits once no process
// but its own has lived in its PID namespace for IDLE_SECONDS. It is started detached by
// the first call (lock: an exclusive mkdir) and described by `holder.json` (bwrap's
// --info-fd) in a private 0700 directory beside the session's /tmp — never inside anything
// the sandbox can see. A call checks that the recorded PID still has the recorded
// namespaces (a reused PID is not a holder). Anything wrong: the call runs in its own
// namespaces as before (still contained; only the sharing is lost).
import { spawn } from "node:child_process";
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  statSync,
} from "node:fs";
import { join } from "node:path";

/** An idle holder (no process of the session's calls for this long) ends itself. */
export const IDLE_SECONDS = 60;

/** A running holder: the PID (host) of its namespaces' first process and their identities. */
export interface Holder {
  pid: number;
  net: string;
  pidns: string;
}

/** The holder's private directory of a session (beside its /tmp, outside the sandbox's view). */
export function holderDir(sessionTmp: string): string {
  return `${sessionTmp}.ns`;
}

function nsOf(pid: number, kind: "net" | "pid"): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

/** The running holder recorded in `dir`, or undefined (none, dead, or a reused PID). */
export function liveHolder(dir: string): Holder | undefined {
  let info: Record<string, unknown>;
  try {
    info = JSON.parse(readFileSync(join(dir, "holder.json"), "utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const pid = info["child-pid"];
  const net = info["net-namespace"];
  const pidns = info["pid-namespace"];
  if (typeof pid !== "number" || typeof net !== "number" || typeof pidns !== "number") return undefined;
  const h = { pid, net: `net:[${net}]`, pidns: `pid:[${pidns}]` };
  return nsOf(pid, "net") === h.net && nsOf(pid, "pid") === h.pidns ? h : undefined;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function parentOf(pid: number): number | undefined {
  try {
    const m = /\) \S+ (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"));
    return m?.[1] !== undefined ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Host PIDs of the processes living in the holder's PID namespace — the calls' processes
 * and what they left running —, the holder's own (its first process, its init shell and
 * that shell's `sleep`) excepted.
 */
export function sessionProcesses(h: Holder): number[] {
  const all: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid !== h.pid && nsOf(pid, "pid") === h.pidns) all.push(pid);
  }
  const init = new Set(all.filter((p) => parentOf(p) === h.pid && cmdline(p).endsWith("\0warden-holder\0")));
  return all.filter((p) => !init.has(p) && !init.has(parentOf(p) ?? -1));
}

/**
 * The holder's init (argv of `sh -c`, $0 = warden-holder): every 2 s it counts the
 * processes of its PID namespace (bwrap's reaper, itself and its sleep are 3); after
 * IDLE_SECONDS with none more it exits, and the namespaces end with it.
 */
function holderScript(idle: number): string {
  return [
    "idle=0",
    "while :; do",
    "  n=0; for p in /proc/[0-9]*; do n=$((n+1)); done",
    '  if [ "$n" -le 3 ]; then idle=$((idle+2)); else idle=0; fi',
    `  [ "$idle" -ge ${idle} ] && exit 0`,
    "  sleep 2",
    "done",
  ].join("\n");
}

const LOCK_STALE_MS = 10_000;

function takeLock(dir: string): boolean {
  const lock = join(dir, "lock");
  try {
    mkdirSync(lock, { mode: 0o700 });
    return true;
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmdirSync(lock);
    } catch {
      // Gone meanwhile.
    }
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the session's holder (detached: it outlives the call that started it). */
function startHolder(bwrap: string, dir: string, idle: number): void {
  const fd = openSync(join(dir, "holder.json"), "w", 0o600);
  try {
    const argv = ["--unshare-all", "--unshare-net", "--cap-drop", "ALL", "--bind", "/", "/"];
    // The host's /dev bound, not --dev: for an unprivileged user bwrap would nest a second
    // user namespace to mount devpts, and the network namespace would belong to one a call
    // cannot enter. A call builds its own /dev from it (--dev).
    argv.push("--dev-bind", "/dev", "/dev", "--proc", "/proc", "--info-fd", "3");
    argv.push("--", "/bin/sh", "-c", holderScript(idle), "warden-holder");
    const child = spawn(bwrap, argv, { detached: true, stdio: ["ignore", "ignore", "ignore", fd], env: {} });
    child.on("error", () => undefined);
    child.unref();
  } finally {
    closeSync(fd);
  }
}

/**
 * The session's holder: the running one, else one started now (undefined when none could
 * be: the call then runs in namespaces of its own). `dir` is created 0700 by the caller.
 */
export async function ensureHolder(
  bwrap: string,
  dir: string,
  idle = IDLE_SECONDS,
): Promise<Holder | undefined> {
  const found = liveHolder(dir);
  if (found !== undefined) return found;
  const mine = takeLock(dir);
  try {
    if (mine && liveHolder(dir) === undefined) startHolder(bwrap, dir, idle);
    for (let i = 0; i < 100; i++) {
      const h = liveHolder(dir);
      if (h !== undefined) return h;
      await sleep(20);
    }
    return undefined;
  } finally {
    if (mine) rmdirSync(join(dir, "lock"));
  }
}

/** Ends a session's holder (and every process of its calls still living): tests, `hooks clear`. */
export function stopHolder(dir: string): void {
  const h = liveHolder(dir);
  if (h === undefined) return;
  try {
    process.kill(h.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
