// Where a file or shell result comes from, for the trust table (taint-trust.ts): a file in
// the workspace, in its dependency directories, outside it, or changed after untrusted
// content entered the session; a command that fetches from the network, names paths
// outside the workspace, names a changed file, or stays in the workspace.
import { statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { SessionState } from "./state.js";
import { placePath } from "./taxonomy.js";

export type FilePlace = "workspace-file" | "changed-workspace-file" | "dependency-file" | "outside-file";
export type ShellPlace = "workspace-shell" | "changed-workspace-file" | "network-shell" | "outside-shell";

/** Whether the session already holds content from an untrusted source. */
export function holdsUntrusted(session: SessionState): boolean {
  return session.taint.length > 0 || session.poisoned.length > 0;
}

/** Directories of a workspace that hold other people's code. */
export const DEPENDENCY_DIRS: readonly string[] = [
  "node_modules",
  "bower_components",
  "jspm_packages",
  "vendor",
  ".venv",
  "venv",
  "site-packages",
  ".tox",
  "Pods",
  ".yarn",
  ".pnpm-store",
  ".bundle",
];

function inputPath(input: Record<string, unknown>): string | undefined {
  for (const k of ["file_path", "path", "notebook_path", "filename"]) {
    const v = input[k];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}

/** When untrusted content first entered the session (undefined: it holds none). */
function untrustedSince(session: SessionState): number | undefined {
  if (!holdsUntrusted(session)) return undefined;
  const times = session.taint.map((t) => Date.parse(t.addedAt ?? "")).filter((t) => !Number.isNaN(t));
  return times.length > 0 ? Math.min(...times) : Date.parse(session.startedAt) || 0;
}

/** Whether a file was modified at or after `since` (a download or a copy the agent made). */
function changedSince(path: string, since: number | undefined): boolean {
  if (since === undefined) return false;
  try {
    const st = statSync(path);
    return st.isFile() && st.mtimeMs >= since;
  } catch {
    return false;
  }
}

const MAX_NAMED = 64;

/** Whether any of the named files (relative to `base`, the workspace) changed since. */
function anyChanged(names: readonly string[], base: string, since: number | undefined): boolean {
  if (since === undefined) return false;
  return names.slice(0, MAX_NAMED).some((n) => changedSince(resolve(base, n), since));
}

/** File names a Grep or Glob result lists (Claude Code: `filenames`). */
function listedFiles(result: unknown): string[] {
  const names = (result as { filenames?: unknown } | null)?.filenames;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
}

export function fileSource(
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
  result: unknown,
): FilePlace {
  if (workspace === undefined) return "outside-file";
  const raw = inputPath(input) ?? workspace;
  const home = raw === "~" || raw.startsWith("~/");
  const placed = placePath(raw, workspace);
  if (home || !placed.inWorkspace) return "outside-file";
  const segs = relative(workspace, placed.path).split(sep);
  if (DEPENDENCY_DIRS.some((d) => segs.includes(d))) return "dependency-file";
  const since = untrustedSince(session);
  const changed = changedSince(placed.path, since) || anyChanged(listedFiles(result), placed.path, since);
  return changed ? "changed-workspace-file" : "workspace-file";
}

/** Programs whose output can be fetched from the network, and subcommands that fetch. */
const NETWORK_PROGRAM =
  /(^|[\s;&|(`$])(curl|wget|fetch|http|https|xh|aria2c|lynx|w3m|links|elinks|nc|ncat|netcat|socat|telnet|ssh|scp|sftp|ftp|rsync|gh|glab|hub|dig|nslookup|host)(\s|$)/;
const NETWORK_SUBCOMMAND =
  /(^|[\s;&|(`$])(git\s+(clone|fetch|pull|ls-remote|submodule|archive)|(npm|pnpm|yarn|bun|npx)\s+(i|install|add|view|info|show|search|create|dlx|exec)|pip3?\s+(install|download|index|search)|uv\s+(pip|add|sync|tool)|(cargo|go|gem|brew|apt|apt-get|dnf|yum)\s+(install|get|search|fetch|add|info|update|download)|(docker|podman)\s+(pull|run|build|search|login))\b/;
const URL_LIKE = /\b(https?|ftp|wss?|ssh|git):\/\/|\bgit@[\w.-]+:/i;
const SYSTEM_DIRS = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/etc",
  "/dev",
  "/proc",
  "/sys",
  "/opt",
  "/nix",
];
const PATH_TOKEN = /(?:^|[\s=<>'"(])((?:~|\$\{?HOME\}?)(?:\/[^\s;|&<>'"()]*)?|\/[^\s;|&<>'"()]*)/g;

function namesOutsidePath(command: string, workspace: string): boolean {
  for (const m of command.matchAll(PATH_TOKEN)) {
    const token = m[1] ?? "";
    if (!isAbsolute(token)) return true; // ~ or $HOME: the user's home, outside the workspace
    if (SYSTEM_DIRS.some((d) => token === d || token.startsWith(`${d}/`))) continue;
    if (!placePath(token, workspace).inWorkspace) return true;
  }
  return false;
}

export function shellSource(
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
): ShellPlace {
  const command = ["command", "cmd", "code", "script"]
    .map((k) => input[k])
    .find((v) => typeof v === "string");
  if (typeof command !== "string" || workspace === undefined) return "outside-shell";
  if (NETWORK_PROGRAM.test(command) || NETWORK_SUBCOMMAND.test(command) || URL_LIKE.test(command))
    return "network-shell";
  const cwd = input.cwd;
  if (typeof cwd === "string" && !placePath(cwd, workspace).inWorkspace) return "outside-shell";
  if (namesOutsidePath(command, workspace)) return "outside-shell";
  // A file the command names that changed after untrusted content entered (`cat notes.md`).
  const words = command
    .split(/[\s;&|()<>'"`]+/)
    .filter((w) => w !== "" && !w.startsWith("-") && !w.includes("$"));
  return anyChanged(words, workspace, untrustedSince(session)) ? "changed-workspace-file" : "workspace-shell";
}
