// Trust levels of tool-result sources (docs/hooks-sessions.md "Trust levels"). A result
// from a trusted source — the user's own workspace files, commands run in the workspace,
// the host's bookkeeping — is scanned and its findings journaled, but instruction phrasing
// in it does not poison the session (Warden's own README quotes "ignore previous
// instructions"). A result from an untrusted source — the web, MCP servers, files outside
// the workspace or in its dependency directories, network commands, skills, unknown tools —
// taints the session, and instruction phrasing in it poisons it. Anything not recognised
// is untrusted.
import { statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { TaintLabel } from "../contracts/index.js";
import type { CanonicalTool } from "./schema-base.js";
import type { SessionState } from "./state.js";
import { placePath } from "./taxonomy.js";

type TaintSource = TaintLabel["source"];

export interface TrustEntry {
  trust: "trusted" | "untrusted";
  /** The taint label an untrusted result adds to the session. */
  taint?: TaintSource;
  reason: string;
}

/** The table of result sources: the one place a source's trust is decided. */
export const TRUST_LEVELS = {
  "workspace-file": {
    trust: "trusted",
    reason: "a file of the user's workspace, read by a file tool",
  },
  "workspace-shell": {
    trust: "trusted",
    reason: "output of a command run in the workspace, with no network program, URL or outside path",
  },
  "host-internal": {
    trust: "trusted",
    reason: "the host's bookkeeping (todos, plan mode, the user's answers, an edit's confirmation)",
  },
  "sub-agent-clean": {
    trust: "trusted",
    reason:
      "a sub-agent whose own tool calls this engine saw (its session) and found no untrusted content in",
  },
  "changed-workspace-file": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "a workspace file changed after untrusted content entered the session: it may carry that content",
  },
  "dependency-file": {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason:
      "a file in a dependency directory of the workspace (node_modules, vendor, .venv, …): third-party text",
  },
  "outside-file": {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason: "a file outside the workspace",
  },
  "network-shell": {
    trust: "untrusted",
    taint: "web",
    reason: "output of a command that can fetch from the network (curl, git clone, an install, a URL)",
  },
  "outside-shell": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "output of a command that names paths outside the workspace",
  },
  "background-shell": {
    trust: "untrusted",
    taint: "tool-output",
    reason: "output of a background shell, whose command the result does not name",
  },
  web: { trust: "untrusted", taint: "web", reason: "a web page or search result" },
  mcp: { trust: "untrusted", taint: "mcp", reason: "an MCP server's tool result, resource or tool list" },
  skill: {
    trust: "untrusted",
    taint: "retrieved-doc",
    reason:
      "skill or slash-command text, which plugins and marketplaces install too; the host does not say whose",
  },
  "sub-agent": {
    trust: "untrusted",
    taint: "tool-output",
    reason:
      "a sub-agent's result whose reads are unknown (Claude Code skips hooks inside sub-agents in some versions)",
  },
  database: { trust: "untrusted", taint: "tool-output", reason: "rows of a database" },
  unknown: { trust: "untrusted", taint: "tool-output", reason: "a tool Warden does not know" },
} as const satisfies Record<string, TrustEntry>;

export type ResultSource = keyof typeof TRUST_LEVELS;

/** Host tools of kind `other` by their result's source (lower-case native names). */
const HOST_TOOL_SOURCES: Readonly<Record<string, ResultSource>> = {
  todowrite: "host-internal",
  todoread: "host-internal",
  exitplanmode: "host-internal",
  enterplanmode: "host-internal",
  askuserquestion: "host-internal",
  killshell: "host-internal",
  killbash: "host-internal",
  taskstop: "host-internal",
  taskcreate: "host-internal",
  taskget: "host-internal",
  tasklist: "host-internal",
  taskupdate: "host-internal",
  lsp: "workspace-file",
  bashoutput: "background-shell",
  taskoutput: "background-shell",
  listmcpresourcestool: "mcp",
  readmcpresourcetool: "mcp",
  toolsearch: "mcp",
  skill: "skill",
  slashcommand: "skill",
};

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

function fileSource(
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
  result: unknown,
): ResultSource {
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

function shellSource(
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
): ResultSource {
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

/** Whether the session already holds content from an untrusted source. */
export function holdsUntrusted(session: SessionState): boolean {
  return session.taint.length > 0 || session.poisoned.length > 0;
}

/**
 * A sub-agent's result: trusted only when the engine saw the sub-agent's own tool calls
 * (its session, by its id) and neither it nor the parent holds untrusted content. A host
 * may run a sub-agent's tools without firing hooks, so an unseen sub-agent is untrusted.
 */
export function subAgentSource(parent: SessionState, own: SessionState | undefined): ResultSource {
  return own !== undefined && !holdsUntrusted(own) && !holdsUntrusted(parent)
    ? "sub-agent-clean"
    : "sub-agent";
}

/** The source of one tool result, by the tool, its input and the session so far. */
export function resultSource(
  tool: CanonicalTool,
  native: string,
  input: Record<string, unknown>,
  workspace: string | undefined,
  session: SessionState,
  /** The result itself: a Grep or Glob result's file names are judged one by one. */
  result?: unknown,
): ResultSource {
  switch (tool) {
    case "file_read":
      return fileSource(input, workspace, session, result);
    case "file_write":
    case "file_edit":
    case "file_delete":
      return "host-internal";
    case "shell":
    case "package_install":
    case "code_exec":
      return shellSource(input, workspace, session);
    case "web_request":
    case "browser":
      return "web";
    case "mcp_call":
      return "mcp";
    case "delegate":
      // The Task / Agent result names no sub-agent id: its reads are unknown.
      return subAgentSource(session, undefined);
    case "database":
      return "database";
    case "other":
      return HOST_TOOL_SOURCES[native.toLowerCase()] ?? "unknown";
  }
}

/** The trust entry of a source. */
export function trustOf(source: ResultSource): TrustEntry {
  return TRUST_LEVELS[source];
}
