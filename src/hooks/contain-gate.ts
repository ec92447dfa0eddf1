// No concurrent writer while the host's own file tool runs (docs/hooks-containment.md
// "The host's file tools and running commands"). Warden judges a Write/Edit/Read path at
// PreToolUse, but the host performs it later, outside the sandbox: a command of the same
// session left running (a background Bash call, `cmd &`) could swap the judged file for a
// link to ~/.bashrc or ~/.ssh/id_rsa in between. Every contained process of a session lives
// in its holder's PID namespace (contain-holder.ts), so at a file tool's PreToolUse the
// engine shuts the session's gate and stops them all (SIGSTOP, repeated until no new one
// appears, each seen stopped) BEFORE it judges the path; new calls wait at the gate inside
// their sandbox (contain-init.ts). The gate opens (SIGCONT) at that call's PostToolUse, when
// the call is not allowed, at any event of the session that is not a tool call (the turn
// ended: Stop, a new prompt, SessionEnd), or after STALE_MS (a host that never reports).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionKeyOf, sessionTmpOf } from "./contain.js";
import { type Holder, holderDir, liveHolder, sessionProcesses } from "./contain-holder.js";
import type { HookEvent } from "./schema-points.js";

/** A gate shut longer than this opens at the session's next event. */
export const STALE_MS = 30_000;

interface Frozen {
  turns: string[];
  at: number;
}

const gateFile = (dir: string) => join(dir, "gate", "frozen");

function readFrozen(dir: string): Frozen | undefined {
  try {
    const f = JSON.parse(readFileSync(gateFile(dir), "utf8")) as Partial<Frozen>;
    return { turns: Array.isArray(f.turns) ? f.turns.map(String) : [], at: Number(f.at) || 0 };
  } catch {
    return undefined;
  }
}

function stateOf(pid: number): string | undefined {
  try {
    return /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

const STOPPED = new Set(["T", "t", "Z", "X"]);

/** Waits (≤ 200 ms) until `pid` is stopped or gone. */
function seenStopped(pid: number): boolean {
  for (let i = 0; i < 200; i++) {
    const s = stateOf(pid);
    if (s === undefined || STOPPED.has(s)) return true;
    pause(1);
  }
  return false;
}

/**
 * Stops every process of the session: passes of SIGSTOP to each one not seen stopped, until
 * a pass finds every one stopped (a process may fork, or continue another with SIGCONT,
 * until it is stopped itself). Not settled after 50 passes: the session's processes are
 * killed instead (its holder, and with it everything in its PID namespace) — fail closed.
 */
function stopAll(h: Holder): void {
  for (let pass = 0; pass < 50; pass++) {
    const running = sessionProcesses(h).filter((p) => !STOPPED.has(stateOf(p) ?? "X"));
    if (running.length === 0) return;
    for (const p of running) {
      try {
        process.kill(p, "SIGSTOP");
      } catch {
        // Gone.
      }
    }
    for (const p of running) seenStopped(p);
  }
  try {
    process.kill(h.pid, "SIGKILL");
  } catch {
    // Gone.
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

const cont = (pid: number) => {
  try {
    process.kill(pid, "SIGCONT");
  } catch {
    // Gone.
  }
};

/**
 * Continues the session's processes, and the `nsenter` each call was started through (on
 * the host, outside the PID namespace): it stops itself when its child stops and would
 * otherwise never reap it.
 */
function continueAll(dir: string): void {
  const h = liveHolder(dir);
  if (h === undefined) return;
  const procs = sessionProcesses(h);
  const inside = new Set(procs);
  for (const p of procs) cont(p);
  for (const p of procs) {
    const parent = parentOf(p);
    if (parent === undefined || inside.has(parent) || parent === h.pid) continue;
    if (stateOf(parent) === "T" && readFileSync(`/proc/${parent}/comm`, "utf8").trim() === "nsenter")
      cont(parent);
  }
}

/**
 * Shuts the session's gate for a host file tool call (`turn`) and stops the session's
 * processes. `dir` is the session's holder directory; nothing to do when the session has
 * never run a contained call there.
 */
export function shutGate(dir: string, turn: string): void {
  const h = liveHolder(dir);
  if (h === undefined) return;
  const f = readFrozen(dir) ?? { turns: [], at: Date.now() };
  if (!f.turns.includes(turn)) f.turns.push(turn);
  mkdirSync(join(dir, "gate"), { recursive: true, mode: 0o700 });
  writeFileSync(gateFile(dir), JSON.stringify(f), { mode: 0o600 });
  stopAll(h);
}

/** Opens the gate for `turn` (every turn: undefined) and lets the session's processes run again. */
export function openGate(dir: string, turn?: string): void {
  const f = readFrozen(dir);
  if (f === undefined) return;
  const left = turn === undefined || Date.now() - f.at > STALE_MS ? [] : f.turns.filter((t) => t !== turn);
  if (left.length > 0) {
    writeFileSync(gateFile(dir), JSON.stringify({ ...f, turns: left }), { mode: 0o600 });
    return;
  }
  rmSync(gateFile(dir), { force: true });
  continueAll(dir);
}

/** Whether the gate has been shut longer than STALE_MS. */
export function gateStale(dir: string): boolean {
  const f = readFrozen(dir);
  return f !== undefined && Date.now() - f.at > STALE_MS;
}

/** The host's own file tools: judged with the session's processes stopped (contain-gate.ts). */
const HOST_FILE_TOOLS: ReadonlySet<string> = new Set(["file_read", "file_write", "file_edit", "file_delete"]);

/**
 * The session's gate around one event: a host file tool's PreToolUse shuts it (returned, to
 * open again if the call is not allowed); its PostToolUse opens it for that call; any event
 * of the session that is not a tool call, or a gate shut too long, opens it.
 */
export function gateFor(e: HookEvent): [string, string] | undefined {
  const dir = holderDir(sessionTmpOf(sessionKeyOf(e.host_id, e.session_id)));
  if (e.hook_point === "PreToolUse" && HOST_FILE_TOOLS.has(e.tool_name)) {
    shutGate(dir, e.turn_id);
    return [dir, e.turn_id];
  }
  if (e.hook_point === "PostToolUse") openGate(dir, e.turn_id);
  else if (e.hook_point !== "PreToolUse" || gateStale(dir)) openGate(dir);
  return undefined;
}
