// The coding-agent sandbox profile as bubblewrap arguments (docs/hooks-containment.md has
// the table). bwrap applies mounts in order, each over the ones before:
//   1. `/` read-only; fresh /dev, /dev/shm and /proc; /run an empty tmpfs (the user's
//      systemd/D-Bus bus in /run/user/$UID, docker.sock and every other daemon socket gone);
//   2. /tmp the session's private directory (never the host's /tmp: agent sockets of ssh,
//      tmux, X11 and VS Code live there, and a connect(2) ignores a read-only mount);
//   3. $HOME read-only (again, when it lies under /tmp or /run), the workspace read-write;
//   4. the never-writable paths in the workspace read-only again: the hosts' settings
//      directories whole (an empty placeholder when missing, so `.claude/settings.local.json`
//      cannot be created), the other protected paths where they exist; Warden's runner files;
//   5. credential locations masked (a directory: an empty read-only tmpfs; a file:
//      /dev/null), only those that exist; Warden's state directories an empty tmpfs;
//   6. every namespace new (network: loopback only), no capability (even for root: the
//      masks cannot be unmounted), a new session (no TIOCSTI), killed with its parent.
import { lstatSync, mkdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { isWithin } from "./coding-profile-match.js";
import { SANDBOX_COMMAND, SANDBOX_CWD, SANDBOX_GATE, SANDBOX_PROXY_SOCKET } from "./contain-env.js";
import type { ContainSpec } from "./contain-spec.js";

/** Hosts' settings directories in the workspace: read-only whole, created empty if missing. */
export const HOST_SETTINGS_DIRS: readonly string[] = [".claude", ".cursor", ".codex", ".gemini", ".warden"];

/** Roots the sandbox replaces: a path below them must be bound again to stay visible. */
const REPLACED = ["/tmp", "/run", "/dev", "/proc"];

type Kind = "dir" | "file" | undefined;

function kindOf(path: string): Kind {
  try {
    const st = statSync(path);
    return st.isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Masks one location: an empty read-only directory, or /dev/null for a file. */
function mask(path: string): string[] {
  const kind = kindOf(path);
  if (kind === undefined) return [];
  const p = real(path);
  return kind === "dir" ? ["--tmpfs", p, "--remount-ro", p] : ["--ro-bind", "/dev/null", p];
}

function readOnly(path: string): string[] {
  if (kindOf(path) === undefined) return [];
  const p = real(path);
  return ["--ro-bind", p, p];
}

/**
 * The hosts' settings directories: read-only whole. A missing one gets an empty placeholder
 * directory (left on the host: git ignores empty directories), so the agent cannot create
 * the settings file a host would load at its next start.
 */
function hostSettings(workspace: string): string[] {
  const out: string[] = [];
  for (const name of HOST_SETTINGS_DIRS) {
    const p = join(workspace, name);
    const kind = kindOf(p);
    if (kind === undefined) {
      try {
        if (lstatSync(p, { throwIfNoEntry: false }) === undefined) mkdirSync(p, { mode: 0o755 });
      } catch {
        // An unwritable workspace: nothing can be created there from inside either.
      }
    }
    if (kindOf(p) === "dir" && isWithin(real(p), workspace)) out.push(...readOnly(p));
    else out.push(...mask(p));
  }
  return out;
}

/**
 * The directories on the way to each protected workspace path, bound onto themselves: a
 * mount point cannot be renamed or removed (EBUSY), so `mv .git .git-old && mkdir .git`
 * cannot swap in a repository whose config the host's git would run. A file on the way
 * (a worktree's `.git` holding `gitdir: …`) is a redirect itself: read-only.
 */
function pinAncestors(ws: string, paths: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    let cur = ws;
    for (const seg of relative(ws, p).split(sep).slice(0, -1)) {
      cur = join(cur, seg);
      const st = lstatSync(cur, { throwIfNoEntry: false });
      if (!seen.has(cur) && st?.isDirectory()) out.push("--bind", cur, cur);
      else if (!seen.has(cur) && st?.isFile()) out.push("--ro-bind", cur, cur);
      seen.add(cur);
      if (!st?.isDirectory()) break;
    }
  }
  return out;
}

/** Binds `path` again when it lies below a root the sandbox replaces. */
function reexpose(path: string, writable: boolean): string[] {
  if (!REPLACED.some((r) => isWithin(path, r))) return [];
  return [writable ? "--bind" : "--ro-bind", path, path];
}

export interface ArgvInput {
  /** The egress proxy's Unix socket (host path). */
  socket: string;
  /** Where the command starts (the host shell's cwd). */
  cwd: string;
  /** A file holding the command (host path), bound read-only at SANDBOX_COMMAND. */
  commandFile: string;
  /** A file the init writes the command's final directory to (host path), bound at SANDBOX_CWD. */
  cwdFile?: string;
  /** The session's gate directory (host path), bound read-only at SANDBOX_GATE. */
  gateDir?: string;
  /**
   * Inside the session's holder (contain-holder.ts): its network and PID namespaces are
   * kept (no `--unshare-net`/`--unshare-pid`) and its /proc — that PID namespace's — is
   * bound; a new user, mount, IPC, UTS and cgroup namespace as always.
   */
  shared?: boolean;
}

/** The namespaces and /proc of a call: its own, or those of the session's holder. */
function namespaces(shared: boolean): string[] {
  const caps = ["--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  if (!shared) return ["--unshare-all", "--unshare-net", ...caps];
  return ["--unshare-user", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", ...caps];
}

/** bwrap's arguments (without the trailing `-- command`) for one contained call. */
export function containArgv(spec: ContainSpec, input: ArgvInput): string[] {
  const ws = real(spec.workspace);
  const home = real(spec.home);
  // No capability even when the host runs as root: with CAP_SYS_ADMIN in its namespace the
  // sandbox could unmount its own masks.
  const args = namespaces(input.shared === true);
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm");
  args.push(...(input.shared === true ? ["--bind", "/proc", "/proc"] : ["--proc", "/proc"]));
  args.push("--tmpfs", "/run", "--bind", input.socket, SANDBOX_PROXY_SOCKET);
  args.push("--ro-bind", input.commandFile, SANDBOX_COMMAND);
  if (input.cwdFile !== undefined) args.push("--bind", input.cwdFile, SANDBOX_CWD);
  if (input.gateDir !== undefined) args.push("--ro-bind", input.gateDir, SANDBOX_GATE);
  args.push("--bind", spec.sessionTmp, "/tmp");
  args.push(...reexpose(home, false), "--bind", ws, ws);
  // Read-only again inside the workspace; then masks and state last, so nothing re-exposes them.
  args.push(...hostSettings(ws));
  const settings = HOST_SETTINGS_DIRS.map((d) => join(ws, d));
  const again = spec.protectedPaths.filter((p) => isWithin(p, ws) && !settings.some((d) => isWithin(p, d)));
  args.push(...pinAncestors(ws, again));
  for (const p of new Set([...again, ...spec.readOnly])) args.push(...readOnly(p));
  for (const c of new Set(spec.credentials)) args.push(...mask(c));
  for (const d of spec.stateDirs) if (kindOf(d) === "dir") args.push("--tmpfs", real(d));
  args.push("--chdir", kindOf(input.cwd) === "dir" ? input.cwd : ws);
  return args;
}

/**
 * Why this spec cannot be contained safely (undefined: it can). `atRun`: the runner's check
 * just before bwrap, which also needs the workspace to exist; the engine asks for the rest.
 */
export function specProblem(spec: ContainSpec, atRun = true): string | undefined {
  const ws = real(spec.workspace);
  if (isWithin(real(spec.home), ws)) return "the workspace contains $HOME, which must stay read-only";
  if (ws === "/" || dirname(ws) === "/") return `the workspace ${ws} is a top-level directory`;
  if (atRun && kindOf(ws) !== "dir") return `the workspace ${spec.workspace} is not a directory`;
  return undefined;
}
