// The paths an MCP tool call names (docs/hooks.md "MCP tools"): a host's MCP server runs
// outside Warden's sandbox (a filesystem server's `write_file`, a git server's `repo_path`,
// a code-execution server's working directory), so every argument that names a local path
// is placed and judged as the host's own file tools' paths are (file-check.ts). Which
// argument is a path is read from its value, not from the tool's name: a string that starts
// like a path (`/`, `~`, `./`, `../`, `file:`) or any string under a path-like key, at any
// depth (bounded). What the tool does with it (read or write) is unknown, so a credential
// location or a protected path is refused either way. A shell command line in the
// arguments (`command`, `cmd`, `script` of a shell or code-execution server) is parsed as a
// Bash call's is, but it cannot be contained: harm or a write outside the workspace is
// refused, code the parser cannot see is asked.
import { homedir } from "node:os";
import type { CodingProfileConfig } from "./coding-profile.js";
import { fileParameters, fileWhere } from "./file-check.js";
import { analyseShell } from "./shell-analysis.js";

const PATH_LIKE = /^(?:\/|~(?:\/|$)|\.\.?\/|file:)/i;
const PATH_KEY =
  /(?:^|_)(?:path|paths|file|files|filename|dir|directory|source|destination|target|root|cwd)$/i;
const MAX_DEPTH = 4;
const MAX_STRINGS = 256;

/** The path-like strings of an MCP call's arguments (bounded walk). */
export function mcpPathArguments(input: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, key: string, depth: number) => {
    if (out.length >= MAX_STRINGS || depth > MAX_DEPTH) return;
    if (typeof v === "string") {
      if (v !== "" && v.length <= 4096 && !v.includes("\n") && (PATH_LIKE.test(v) || PATH_KEY.test(key)))
        out.push(v);
    } else if (Array.isArray(v)) for (const x of v) walk(x, key, depth + 1);
    else if (typeof v === "object" && v !== null)
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, k, depth + 1);
  };
  walk(input, "", 0);
  return out;
}

/** `credentialPath` / `protectedPath` over every path the MCP call names (false when it names none). */
export function mcpPathParameters(
  input: Record<string, unknown>,
  workspace: string | undefined,
  stateDirs: readonly string[],
  profile?: Partial<CodingProfileConfig>,
): { credentialPath: boolean; protectedPath: boolean } {
  const paths = mcpPathArguments(input);
  if (paths.length === 0) return { credentialPath: false, protectedPath: false };
  if (paths.length >= MAX_STRINGS) return { credentialPath: true, protectedPath: true };
  const where = fileWhere(workspace, stateDirs, profile);
  let credentialPath = false;
  let protectedPath = false;
  for (const p of paths) {
    const f = fileParameters("read", undefined, { path: p.replace(/^file:(\/\/)?/i, "") }, where);
    credentialPath ||= f.credentialPath === true;
    protectedPath ||= f.protectedPath === true;
  }
  return { credentialPath, protectedPath };
}

/** `commandHarm` / `commandDynamic` of a shell line an MCP call carries (both false without one). */
export async function mcpCommandParameters(
  input: Record<string, unknown>,
  workspace: string | undefined,
  stateDirs: readonly string[],
  profile?: Partial<CodingProfileConfig>,
): Promise<{ commandHarm: boolean; commandDynamic: boolean }> {
  const key = ["command", "cmd", "script"].find((k) => typeof input[k] === "string" && input[k] !== "");
  if (key === undefined) return { commandHarm: false, commandDynamic: false };
  const cwd = typeof input.cwd === "string" ? input.cwd : undefined;
  const a = await analyseShell(input[key] as string, {
    cwd,
    workspace,
    home: homedir(),
    stateDirs,
    ...(profile !== undefined ? { profile } : {}),
  });
  const p = a.parameters;
  if (p.shellParsed !== true) return { commandHarm: false, commandDynamic: true };
  // Every harm finding but the two the Bash rules ask for or contain (`dynamic`, `urlInstall`).
  const harmful = Object.entries(a.harm).some(
    ([k, v]) => v === true && k !== "dynamic" && k !== "urlInstall",
  );
  const commandHarm = harmful || p.writesProtected === true || p.writesOutsideWorkspace === true;
  const asked = p.dynamic === true || p.writeUnresolved === true || p.urlInstall === true;
  return { commandHarm, commandDynamic: asked };
}
