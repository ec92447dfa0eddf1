// The hook daemon's files, all in its state directory (default ~/.warden/hooks, 0700):
//   daemon.sock   the Unix socket of the lean command entry (bin/warden-hook.js), 0600
//   daemon.token  the random credential every caller presents (HTTP and socket), 0600
//   daemon.pid    the running daemon's pid, created exclusively (one daemon per directory)
//   daemon.json   what `--status` and the installer read: pid, HTTP port, socket, start time
// bin/warden-hook.js names the same files (plain JS, no import of this module): keep them
// in step (test/hooks/daemon-entry.test.ts runs the real entry against this daemon).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { HookError } from "../contracts/index.js";

export interface DaemonPaths {
  dir: string;
  socket: string;
  token: string;
  pid: string;
  info: string;
}

export function daemonPaths(dir: string): DaemonPaths {
  return {
    dir,
    socket: join(dir, "daemon.sock"),
    token: join(dir, "daemon.token"),
    pid: join(dir, "daemon.pid"),
    info: join(dir, "daemon.json"),
  };
}

/** Creates the state directory 0700, or tightens one this user owns; refuses another's. */
export function prepareDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new HookError("ERR_HOOK_CONFIG_INVALID", `${dir} is not a directory`);
  if (typeof process.getuid === "function" && st.uid !== process.getuid())
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `${dir} belongs to another user`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** The credential of this state directory: created once (256 random bits, 0600), then read. */
export function ensureToken(path: string): string {
  try {
    const fd = openSync(path, "wx", 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString("base64url")}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  chmodSync(path, 0o600);
  return readToken(path);
}

export function readToken(path: string): string {
  const token = readFileSync(path, "utf8").trim();
  if (!/^[A-Za-z0-9_-]{32,128}$/.test(token))
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `${path} does not hold a daemon token`);
  return token;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time comparison (of digests, so the lengths never leak either). */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** True when `pid` is a live process (and, where /proc exists, a Warden hook daemon). */
export function isDaemonPid(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const cmdline = `/proc/${pid}/cmdline`;
  if (!existsSync("/proc/self/cmdline")) return true;
  try {
    const argv = readFileSync(cmdline, "utf8").split("\u0000");
    return argv.includes("hooks") && argv.includes("daemon");
  } catch {
    return false;
  }
}

export function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the pid file (O_EXCL): `{ ok: false, pid }` when a live daemon holds it; a stale one
 * (its process gone) is removed and taken.
 */
export function acquirePid(path: string): { ok: true } | { ok: false; pid: number } {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return { ok: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const pid = readPid(path);
      if (pid !== undefined && pid !== process.pid && isDaemonPid(pid)) return { ok: false, pid };
      try {
        unlinkSync(path);
      } catch {
        // Another starter removed it first: try again.
      }
    }
  }
  throw new HookError("ERR_HOOK_ENGINE_FAULT", `could not take ${path}`);
}

/** Removes a file only if it still names this process (a successor's is left alone). */
export function releasePid(path: string): void {
  if (readPid(path) === process.pid) unlinkSync(path);
}

export interface DaemonInfo {
  pid: number;
  port: number | null;
  socket: string;
  startedAt: string;
  version: string;
  httpError?: string;
}

export function writeInfo(path: string, info: DaemonInfo): void {
  writeFileSync(path, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export function readInfo(path: string): DaemonInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as DaemonInfo;
    return typeof v.pid === "number" ? v : undefined;
  } catch {
    return undefined;
  }
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}
