// §6.4 artifact extraction. Hosts send raw data; the engine extracts: URLs, commands (with
// `piped_to_shell` when a download is piped into an interpreter), file paths, packages and
// credentials (masked). Artifacts a host already sent are kept and merged. Whether a command
// runs downloaded or decoded code is read from its parse (shell-analysis.ts), not its text.
import { homedir } from "node:os";
import { redactString } from "../journal/index.js";
import type { Artifact, CanonicalTool } from "./schema-base.js";
import { shellParserReady } from "./shell.js";
import { analyseShell, analyseShellSync, type ShellAnalysis } from "./shell-analysis.js";

const URL_RE = /\bhttps?:\/\/[^\s"'<>`|;)]{1,2048}/gi;
const INSTALL_RE =
  /\b(?:npm|pnpm|yarn|bun)\s+(?:i|install|add)\s+([^\s;&|]+)|\bpip3?\s+install\s+([^\s;&|]+)/g;
const MAX_ARTIFACTS = 64;

function add(out: Artifact[], seen: Set<string>, a: Artifact): void {
  const key = `${a.type}\u0000${a.value}\u0000${a.context ?? ""}`;
  if (seen.has(key) || out.length >= MAX_ARTIFACTS) return;
  seen.add(key);
  out.push(a);
}

function fromText(out: Artifact[], seen: Set<string>, text: string, field: string): void {
  for (const m of text.matchAll(URL_RE)) add(out, seen, { type: "url", value: m[0], source_field: field });
  const red = redactString(text);
  for (const kind of new Set(red.kinds)) {
    add(out, seen, { type: "credential", value: `[REDACTED:${kind}]`, context: kind, source_field: field });
  }
}

/** The artifacts of one tool call (its input), merged with those the host sent. */
export function toolArtifacts(
  tool: CanonicalTool,
  input: Record<string, unknown>,
  hostArtifacts: readonly Artifact[] = [],
): Artifact[] {
  const out: Artifact[] = [];
  const seen = new Set<string>();
  for (const a of hostArtifacts) add(out, seen, a);
  for (const [field, v] of Object.entries(input)) {
    if (typeof v !== "string") continue;
    const source_field = `tool_input.${field}`;
    if (field === "command" || field === "cmd") {
      const context =
        shellParserReady() && runsFetched(analyseShellSync(v, where())) ? "piped_to_shell" : undefined;
      add(out, seen, { type: "command", value: v, source_field, ...(context ? { context } : {}) });
      for (const m of v.matchAll(INSTALL_RE)) {
        const pkg = m[1] ?? m[2];
        if (pkg !== undefined) add(out, seen, { type: "package", value: pkg, source_field });
      }
    } else if (/^(file_path|path|notebook_path|filename)$/.test(field)) {
      add(out, seen, { type: "file_path", value: v, source_field });
    } else if (field === "url") {
      add(out, seen, { type: "url", value: v, source_field });
    } else if (/^(content|new_string|new_source)$/.test(field) && tool !== "file_read") {
      add(out, seen, { type: "content", value: v.slice(0, 65_536), source_field });
    }
    fromText(out, seen, v, source_field);
  }
  return out;
}

const where = () => ({ workspace: undefined, home: homedir() });
const runsFetched = (a: ShellAnalysis) =>
  a.findings.remoteCode.length > 0 || a.findings.decodedCode.length > 0;

/**
 * True when a command runs downloaded or decoded code through an interpreter (`curl … | sh`
 * in any spelling the parser sees: `| env bash`, `| tee x | "sh"`, `bash <(curl …)`, …).
 */
export async function pipesToShell(command: string): Promise<boolean> {
  return runsFetched(await analyseShell(command, where()));
}

/** Artifact values a verdict names (credentials stay masked). */
export function artifactValues(artifacts: readonly Artifact[]): string[] {
  return artifacts.filter((a) => a.type !== "content").map((a) => a.value.slice(0, 4096));
}
