// One shell command line → the Gate parameters of the host-tools preset (taxonomy.ts
// shellShape; docs/hooks-shell.md): parsed once (shell.ts), then where it writes
// (shell-writes.ts) and what it plainly does (shell-harm.ts). Never throws.

import { isAbsolute, resolve } from "node:path";
import { codingProfile, isCreatableSecret, isProtectedPath } from "./coding-profile.js";
import { loadShellParser, parseShell } from "./shell.js";
import { FINDINGS, type ShellFindings, shellHarm } from "./shell-harm.js";
import { type ShellContext, type ShellWrites, scriptWrites } from "./shell-writes.js";

export interface ShellAnalysis {
  parameters: Record<string, string | boolean>;
  /** The harm findings alone (FINDINGS as booleans, and shellFinding). */
  harm: Record<string, string | boolean>;
  /** Files the command writes (absolute). */
  writes: string[];
  findings: ShellFindings;
  writesOf: ShellWrites;
}

const none = (): ShellFindings =>
  Object.fromEntries(FINDINGS.map((f) => [f, []])) as unknown as ShellFindings;

/** The analysis once the parser is loaded (`loadShellParser`). */
export function analyseShellSync(command: string, ctx: ShellContext): ShellAnalysis {
  const profile = codingProfile(
    { home: ctx.home, workspace: ctx.workspace, stateDirs: ctx.stateDirs ?? [] },
    ctx.profile ?? {},
  );
  const parsed = parseShell(command, { home: ctx.home });
  const start = ctx.cwd !== undefined && isAbsolute(ctx.cwd) ? resolve(ctx.cwd) : ctx.workspace;
  const w: ShellWrites = parsed.ok
    ? scriptWrites(parsed.script, ctx)
    : { parsed: false, reason: parsed.reason, outside: [], inside: [], unresolved: [] };
  const findings = parsed.ok ? shellHarm(parsed.script, { cwd: start, profile }) : none();
  const writes = [...w.outside, ...w.inside, ...(w.scratch ?? [])];
  const protectedTargets = writes.filter(
    (p) => isProtectedPath(profile, p) && !isCreatableSecret(profile, p),
  );
  const firstFinding = FINDINGS.map((f) => findings[f][0]).find((x) => x !== undefined);
  const parameters: Record<string, string | boolean> = {
    shellParsed: w.parsed,
    writesOutsideWorkspace: w.outside.length > 0,
    writesProtected: protectedTargets.length > 0,
    writeUnresolved: w.unresolved.length > 0,
    outsideTarget: w.outside[0] ?? w.unresolved[0] ?? w.reason ?? "",
  };
  const harm: Record<string, string | boolean> = { shellFinding: firstFinding ?? "" };
  for (const f of FINDINGS) harm[f] = findings[f].length > 0;
  Object.assign(parameters, harm, { shellFinding: protectedTargets[0] ?? firstFinding ?? "" });
  return { parameters, harm, writes, findings, writesOf: w };
}

/** Parses and analyses a shell command line (loading the parser on first use). */
export async function analyseShell(command: string, ctx: ShellContext): Promise<ShellAnalysis> {
  await loadShellParser().catch(() => undefined);
  return analyseShellSync(command, ctx);
}
