// What the Codex, Copilot and Gemini adapters share to name a host's tool call in the §7
// taxonomy: a per-host name map (native name → canonical tool and, where the host's tool
// is Claude Code's, the Claude Code name the preset already knows), MCP names in the one
// `mcp__<server>__<tool>` form, patches (`apply_patch`) placed on the riskiest file they
// touch, URLs found in a prompt, and a tool result as text.
import { parseStrictJson } from "../contracts/index.js";
import {
  type HostAnswer,
  type HostInput,
  isObject,
  jsonLine,
  obj,
  str,
  verdictReason,
} from "./host-adapter-common.js";
import type { CanonicalTool, Verdict } from "./schema-base.js";
import { canonicalToolName, placePath } from "./taxonomy.js";

/** A host's native tool: its canonical name and the Claude Code name of the same tool, if any. */
export interface ToolName {
  canonical: CanonicalTool;
  claude?: string;
}
export type ToolNameMap = Readonly<Record<string, ToolName>>;

/** The tool fields of an AARTS tool event. */
export interface ToolFields {
  tool_name: CanonicalTool;
  tool_name_native: string;
  tool_input: HostInput;
  artifacts: [];
}

/** A label usable as one `__`-free part of an MCP name. */
export const mcpPart = (v: string): string =>
  v
    .replace(/_{2,}/g, "_")
    .replace(/[^A-Za-z0-9_.:-]+/g, "-")
    .slice(0, 128) || "unknown";

/** A host tool call in the taxonomy: the map first, then MCP names, then Claude-style names. */
export function toolFields(native: string, input: HostInput, map: ToolNameMap): ToolFields {
  const known = Object.hasOwn(map, native) ? map[native] : undefined;
  if (known !== undefined) {
    return {
      tool_name: known.canonical,
      tool_name_native: known.claude ?? native,
      tool_input: input,
      artifacts: [],
    };
  }
  return {
    tool_name: canonicalToolName(native),
    tool_name_native: native || "unknown",
    tool_input: input,
    artifacts: [],
  };
}

/** Tool arguments sent as a JSON string (older Copilot payloads) → an object; text kept. */
export function argsObject(raw: unknown): HostInput {
  if (isObject(raw)) return raw;
  if (typeof raw !== "string" || raw === "") return {};
  try {
    const parsed = parseStrictJson(raw, { maxLength: 4 * 1024 * 1024, maxDepth: 64 });
    return isObject(parsed) ? parsed : { input: raw };
  } catch {
    return { input: raw };
  }
}

type PatchOp = "add" | "update" | "delete";
const PATCH_LINE = /^\*\*\* (Add File|Update File|Delete File|Move to): (.+)$/gm;

/** The files an `apply_patch` body touches, with what it does to each. */
export function patchFiles(patch: string): { path: string; op: PatchOp }[] {
  const out: { path: string; op: PatchOp }[] = [];
  for (const m of patch.matchAll(PATCH_LINE)) {
    const verb = m[1] ?? "";
    const path = (m[2] ?? "").trim();
    if (path === "") continue;
    out.push({ path, op: verb === "Add File" ? "add" : verb === "Delete File" ? "delete" : "update" });
  }
  return out;
}

/** A path segment that names a hidden directory or file (settings, keys, hooks live there). */
const hidden = (p: string): boolean =>
  p.split(/[\\/]/).some((s) => s.startsWith(".") && s !== "." && s !== "..");

/**
 * A patch as one file tool call on the file most likely to be refused: one that resolves
 * outside the workspace (links followed), else a hidden path, else the first. Every path
 * is kept in `paths`; a patch naming no file is a file_edit of nothing (the policy refuses).
 */
export function patchFields(patch: string, cwd: string | undefined, native: string): ToolFields {
  const files = patchFiles(patch);
  const rank = (p: string): number => (!placePath(p, cwd).inWorkspace ? 0 : hidden(p) ? 1 : 2);
  const chosen = [...files].sort((a, b) => rank(a.path) - rank(b.path))[0];
  const tool: CanonicalTool =
    chosen?.op === "add" ? "file_write" : chosen?.op === "delete" ? "file_delete" : "file_edit";
  const input = { file_path: chosen?.path ?? "", paths: files.map((f) => f.path), patch };
  return { tool_name: tool, tool_name_native: native, tool_input: input, artifacts: [] };
}

/** The first URL a text names (Gemini's web_fetch takes URLs inside its prompt). */
export function firstUrl(text: string): string {
  return /\b(?:https?|file|ftp|data):[^\s"'<>`)\]]+/i.exec(text)?.[0] ?? "";
}

/** A tool result as text: a string as is, content blocks' text joined, anything else as JSON. */
export function resultText(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) {
    const texts = v.map((b) => (isObject(b) && typeof b.text === "string" ? b.text : JSON.stringify(b)));
    return texts.join("\n");
  }
  return v === undefined || v === null ? "" : JSON.stringify(v);
}

/** A session id the engine accepts: the host's, else a stable one for the workspace. */
export function sessionOf(host: string, id: unknown, cwd: unknown): string {
  const given = str(id);
  if (given !== "") return given.slice(0, 256);
  return `${host}:${str(cwd, "unknown")}`.slice(0, 256);
}

/** The AARTS fields every event of one host input carries. */
export type Base = Record<string, unknown>;

/** A type guard for a host's list of event names. */
export const memberOf =
  <T extends string>(list: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === "string" && (list as readonly string[]).includes(v);

/** The hook_event_name of a host input, if it has one. */
export const hookEventName = (input: unknown): string => str(obj(input).hook_event_name, "unknown");

/** The workspace a host input names by its cwd. */
export const cwdOf = (input: HostInput): string | undefined =>
  typeof input.cwd === "string" && input.cwd !== "" ? input.cwd : undefined;

/** A prompt the user submitted (PreUserInput). */
export const promptEvent = (base: Base, turn: Base, prompt: unknown): Base => ({
  hook_point: "PreUserInput",
  ...base,
  ...turn,
  raw_input: prompt,
  input_source: "keyboard",
});

/** A compaction about to start (PreCompact), manual or automatic. */
export const compactEvent = (base: Base, turn: Base, transcript: string, trigger: unknown): Base => ({
  hook_point: "PreCompact",
  ...base,
  ...turn,
  context_before: transcript,
  compaction_reason: trigger === "manual" ? "user_triggered" : "token_limit",
});

/** A host answer for an event that cannot block: nothing when clean, else the findings shown. */
export function findingsAnswer(v: Verdict, clean: HostAnswer): HostAnswer {
  return v.decision === "allow" && v.severity === "info"
    ? clean
    : { exitCode: 0, stdout: jsonLine({ systemMessage: verdictReason(v) }) };
}
