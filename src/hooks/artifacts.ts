// §6.4 artifact extraction. Hosts send raw data; the engine extracts: URLs, commands (with
// `piped_to_shell` when a download is piped into an interpreter), file paths, packages and
// credentials (masked). Artifacts a host already sent are kept and merged.
import { redactString } from "../journal/index.js";
import type { Artifact, CanonicalTool } from "./schema-base.js";

const URL_RE = /\bhttps?:\/\/[^\s"'<>`|;)]{1,2048}/gi;
const PIPED_TO_SHELL =
  /\b(curl|wget|fetch)\b[^|;&\n]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(curl|wget)\b[^|;&\n]*\|\s*(python3?|node|perl|ruby)\b/i;
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
      const context = PIPED_TO_SHELL.test(v) ? "piped_to_shell" : undefined;
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

/** True when a command artifact downloads code and pipes it into an interpreter. */
export function pipesToShell(command: string): boolean {
  return PIPED_TO_SHELL.test(command);
}

/** Artifact values a verdict names (credentials stay masked). */
export function artifactValues(artifacts: readonly Artifact[]): string[] {
  return artifacts.filter((a) => a.type !== "content").map((a) => a.value.slice(0, 4096));
}
