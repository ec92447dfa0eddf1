// §7 standard tool taxonomy: a host's native tool names → canonical names (for adapters),
// and a canonical tool call → the structured Gate request fields (tool class, action,
// parameters) so the host's tools are checked by policy exactly like Warden's own.

import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, normalize, relative, resolve } from "node:path";
import type { CodingProfileConfig } from "./coding-profile.js";
import { fileParameters, fileWhere } from "./file-check.js";
import { mcpCommandParameters, mcpPathParameters } from "./mcp-paths.js";
import type { CanonicalTool } from "./schema-base.js";
import { analyseShell } from "./shell-analysis.js";

const NATIVE: Readonly<Record<string, CanonicalTool>> = {
  bash: "shell",
  powershell: "shell",
  exec: "shell",
  shell: "shell",
  terminal: "shell",
  run_terminal_cmd: "shell",
  write: "file_write",
  create_file: "file_write",
  notebookedit: "file_edit",
  notebookread: "file_read",
  edit: "file_edit",
  multiedit: "file_edit",
  apply_patch: "file_edit",
  str_replace: "file_edit",
  read: "file_read",
  cat: "file_read",
  glob: "file_read",
  grep: "file_read",
  ls: "file_read",
  delete: "file_delete",
  rm: "file_delete",
  webfetch: "web_request",
  web_fetch: "web_request",
  websearch: "web_request",
  http_request: "web_request",
  curl: "web_request",
  mcp: "mcp_call",
  mcp_tool: "mcp_call",
  python_exec: "code_exec",
  jupyter: "code_exec",
  eval: "code_exec",
  browser_navigate: "browser",
  sql_query: "database",
  db_exec: "database",
  task: "delegate",
  agent: "delegate",
  spawn_agent: "delegate",
};

/** The canonical name of a host's native tool name ("other" when none applies). */
export function canonicalToolName(native: string): CanonicalTool {
  if (/^mcp__/.test(native)) return "mcp_call";
  return NATIVE[native.toLowerCase()] ?? "other";
}

const PACKAGE_INSTALL =
  /\b(npm|pnpm|yarn|bun)\s+(i|install|add)\b|\bpip3?\s+install\b|\b(apt|apt-get|brew|cargo|gem|go)\s+(install|get|add)\b/;

/** A shell command that installs packages is classified package_install (§7). */
export function refineShell(command: string): CanonicalTool {
  return PACKAGE_INSTALL.test(command) ? "package_install" : "shell";
}

export interface GateShape {
  toolClass: string;
  action: string;
  /** Scalars the policy matches on; an MCP call's own arguments as `arguments` (for flow control). */
  parameters: Record<string, string | number | boolean | Record<string, unknown>>;
  /** Files a shell command writes (absolute), for the verdict's artifacts. */
  writes?: string[];
}

function str(input: Record<string, unknown>, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = input[k];
    if (typeof v === "string") return v;
  }
  return undefined;
}

/**
 * The path with symbolic links resolved as far as it exists: the deepest existing
 * ancestor through realpath, the rest appended. A link inside the workspace that points
 * out of it is therefore outside.
 */
export function realPlace(abs: string): string {
  let head = abs;
  const rest: string[] = [];
  for (let i = 0; i < 256; i++) {
    try {
      return join(realpathSync(head), ...rest.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return abs;
      rest.push(basename(head));
      head = up;
    }
  }
  return abs;
}

/** Where a path resolves against the workspace: absolute form and whether it stays inside. */
export function placePath(
  path: string,
  workspace: string | undefined,
): { path: string; inWorkspace: boolean } {
  const abs = normalize(isAbsolute(path) || workspace === undefined ? path : resolve(workspace, path));
  if (workspace === undefined) return { path: abs, inWorkspace: false };
  const rel = relative(realPlace(resolve(workspace)), realPlace(abs));
  return { path: abs, inWorkspace: rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)) };
}

/**
 * A file tool call: the path placed as the host will place it and judged against the
 * coding-agent profile (file-check.ts). `stateDirs`: Warden's own state (never readable).
 */
function fileShape(
  action: string,
  native: string | undefined,
  input: Record<string, unknown>,
  workspace: string | undefined,
  stateDirs: readonly string[],
  profile?: Partial<CodingProfileConfig>,
): GateShape {
  const parameters = fileParameters(action, native, input, fileWhere(workspace, stateDirs, profile));
  return { toolClass: "file", action, parameters };
}

/**
 * A shell call: the command line, and what parsing it says (shell-analysis.ts, docs/hooks-shell.md);
 * a code_exec call gets only the harm findings, when its code reads as a shell line:
 * `shellParsed` (false: unreadable, denied), `writesOutsideWorkspace` (denied),
 * `writesProtected` (a protected path: denied), `writeUnresolved` (a target behind an
 * expansion: asked), the harm findings (remoteCode, decodedCode, reverseShell, destructive,
 * persistence, exfiltration, credentialAccess, wardenCommand: denied; urlInstall: asked) and
 * `dynamic` (code the parser cannot see: runs contained). `cwd` in the input (Cursor sends
 * it) is where relative targets start; default the workspace.
 */
async function shellShape(
  tool: CanonicalTool,
  input: Record<string, unknown>,
  workspace: string | undefined,
  stateDirs: readonly string[],
  profile?: Partial<CodingProfileConfig>,
): Promise<GateShape> {
  const command = str(input, "command", "cmd", "code", "script") ?? "";
  const action = tool === "package_install" ? "install" : tool === "code_exec" ? "eval" : "exec";
  const a = await analyseShell(command, {
    cwd: str(input, "cwd"),
    workspace,
    home: homedir(),
    stateDirs,
    ...(profile !== undefined ? { profile } : {}),
  });
  if (tool === "code_exec") {
    // Code in an unknown language: what reads as a shell line is judged by the harm rules;
    // what does not (Python, JavaScript) is not refused as unparsable.
    return {
      toolClass: "shell",
      action,
      parameters: { command, ...(a.parameters.shellParsed ? a.harm : {}) },
    };
  }
  return { toolClass: "shell", action, parameters: { command, ...a.parameters }, writes: a.writes };
}

/**
 * The Gate request fields of a canonical tool call. Only structured values the policy
 * matches on are passed: the command line, the path and whether it is in the workspace,
 * the URL, the MCP server and tool. File contents and prompts never are.
 */
export async function gateShape(
  tool: CanonicalTool,
  native: string | undefined,
  input: Record<string, unknown>,
  workspace: string | undefined,
  stateDirs: readonly string[] = [],
  profile?: Partial<CodingProfileConfig>,
): Promise<GateShape> {
  switch (tool) {
    case "shell":
    case "package_install":
    case "code_exec":
      return await shellShape(tool, input, workspace, stateDirs, profile);
    case "file_read":
      return fileShape("read", native, input, workspace, stateDirs, profile);
    case "file_write":
      return fileShape("write", native, input, workspace, stateDirs, profile);
    case "file_edit":
      return fileShape("edit", native, input, workspace, stateDirs, profile);
    case "file_delete":
      return fileShape("delete", native, input, workspace, stateDirs, profile);
    case "web_request":
    case "browser": {
      // WebFetch of a file: URL reads a local file: the file tool's checks, not the web's.
      const url = str(input, "url") ?? "";
      if (/^file:/i.test(url)) return fileShape("read", native, { url }, workspace, stateDirs, profile);
      return {
        toolClass: "http",
        action: (str(input, "method") ?? "get").toLowerCase(),
        parameters: { url: str(input, "url", "query") ?? "" },
      };
    }
    case "mcp_call": {
      const [, server = "", name = ""] = (native ?? "").split("__");
      const paths = mcpPathParameters(input, workspace, stateDirs, profile);
      const command = await mcpCommandParameters(input, workspace, stateDirs, profile);
      // The tool's own arguments, for flow control (src/gate/flow.ts): where a recipient or
      // address came from. Not the server's location some hosts merge in (cursor.ts).
      const { server_url: _u, server_command: _c, ...args } = input;
      const parameters = { server, tool: name, ...paths, ...command, arguments: args };
      return { toolClass: "mcp", action: "call", parameters };
    }
    case "database":
      return {
        toolClass: "database",
        action: "query",
        parameters: { query: str(input, "query", "sql") ?? "" },
      };
    case "delegate":
      return {
        toolClass: "delegate",
        action: "spawn",
        parameters: { agent: str(input, "subagent_type") ?? "" },
      };
    case "other":
      return { toolClass: "other", action: "call", parameters: { native: native ?? "" } };
  }
}

/**
 * Canonical tools that can carry data out of the machine (a credential in their input is
 * denied). What a poisoned session may still use is poisoned.ts's table: shell commands run
 * contained, so only the direct egress tools there are refused.
 */
export const EGRESS_TOOLS: ReadonlySet<CanonicalTool> = new Set<CanonicalTool>([
  "web_request",
  "browser",
  "mcp_call",
  "shell",
  "package_install",
  "code_exec",
]);
