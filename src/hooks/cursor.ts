// The Cursor adapter: Cursor's agent hook input (one JSON object on stdin: conversation_id,
// generation_id, hook_event_name, workspace_roots and the event's fields; documented at
// https://cursor.com/docs/agent/hooks) → an AARTS event, and the verdict → Cursor's
// documented output. Mapping:
//   beforeShellExecution → PreToolUse shell     {permission, user_message, agent_message};
//                                                an allow Warden would contain is asked
//                                                (Cursor cannot rewrite a command)
//   beforeMCPExecution   → PreToolUse mcp_call  {permission, user_message, agent_message}
//   beforeReadFile       → PreToolUse file_read {permission: allow|deny} (ask → deny)
//   afterShellExecution  → PostToolUse shell     (output: taint, injection) {}
//   afterMCPExecution    → PostToolUse mcp_call  (result_json) {}
//   afterFileEdit        → PostToolUse file_edit (recorded; Cursor cannot undo an edit) {}
//   beforeSubmitPrompt   → PreUserInput          {continue, user_message}
//   afterAgentResponse   → PreOutputDeliver      {} (observe only)
//   stop                 → SessionEnd            {}
// A denied shell, MCP or read call also exits 2 (Cursor treats exit 2 as deny), so a Cursor
// that ignores the JSON still blocks; input that is not a Cursor event exits 2 with the
// coded reason on stderr: fail closed.
import { parseStrictJson } from "../contracts/index.js";
import {
  type HostAdapter,
  type HostAnswer,
  type HostInput,
  isObject,
  jsonLine,
  obj,
  str,
  unknownHookPoint,
  verdictReason,
} from "./host-adapter-common.js";
import type { Verdict } from "./schema-base.js";

export const CURSOR_HOST_ID = "cursor";

export const CURSOR_EVENTS = [
  "beforeShellExecution",
  "beforeMCPExecution",
  "beforeReadFile",
  "afterShellExecution",
  "afterMCPExecution",
  "afterFileEdit",
  "beforeSubmitPrompt",
  "afterAgentResponse",
  "stop",
] as const;
export type CursorEvent = (typeof CURSOR_EVENTS)[number];

export function isCursorEvent(v: unknown): v is CursorEvent {
  return typeof v === "string" && (CURSOR_EVENTS as readonly string[]).includes(v);
}

/** Cursor sends MCP tool_input as a JSON string; an object of it, or the raw text. */
function mcpInput(raw: unknown): HostInput {
  if (isObject(raw)) return raw;
  if (typeof raw !== "string") return {};
  try {
    const parsed = parseStrictJson(raw, { maxLength: 4 * 1024 * 1024, maxDepth: 64 });
    return isObject(parsed) ? parsed : { input: raw };
  } catch {
    return { input: raw };
  }
}

/** A label for the MCP server (its URL's host, else its command's first word), without "__". */
function serverLabel(input: HostInput): string {
  const url = str(input.url);
  let label = str(input.command).trim().split(/\s+/)[0] ?? "";
  if (url) {
    try {
      label = new URL(url).host;
    } catch {
      label = url;
    }
  }
  return label.replace(/[^A-Za-z0-9.:-]+/g, "-").slice(0, 128) || "unknown";
}

function mcpTool(input: HostInput): Record<string, unknown> {
  const name = str(input.tool_name).replace(/_{2,}/g, "_").slice(0, 128);
  const server = { server_url: str(input.url), server_command: str(input.command) };
  return {
    tool_name: "mcp_call",
    tool_name_native: `mcp__${serverLabel(input)}__${name}`,
    tool_input: { ...mcpInput(input.tool_input), ...server },
    artifacts: [],
  };
}

function shellTool(input: HostInput): Record<string, unknown> {
  const cwd = str(input.cwd);
  return {
    tool_name: "shell",
    tool_name_native: "Shell",
    tool_input: { command: str(input.command), ...(cwd ? { cwd } : {}) },
    artifacts: [],
  };
}

function fileTool(canonical: string, native: string, input: HostInput): Record<string, unknown> {
  const tool_input = { file_path: str(input.file_path) };
  return { tool_name: canonical, tool_name_native: native, tool_input, artifacts: [] };
}

/** The AARTS event for one Cursor hook input. */
export function translateCursor(input: HostInput, now: string): Record<string, unknown> {
  const name = str(input.hook_event_name);
  const base = {
    session_id: input.conversation_id,
    timestamp: now,
    host_id: CURSOR_HOST_ID,
    aarts_version: "1",
  };
  const turn = { turn_id: str(input.generation_id) || "cursor-generation" };
  switch (name) {
    case "beforeShellExecution":
      return { hook_point: "PreToolUse", ...base, ...turn, ...shellTool(input) };
    case "beforeMCPExecution":
      return { hook_point: "PreToolUse", ...base, ...turn, ...mcpTool(input) };
    case "beforeReadFile":
      return { hook_point: "PreToolUse", ...base, ...turn, ...fileTool("file_read", "Read", input) };
    case "afterShellExecution":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...shellTool(input),
        tool_result: str(input.output),
      };
    case "afterMCPExecution":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...mcpTool(input),
        tool_result: str(input.result_json),
      };
    case "afterFileEdit":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...fileTool("file_edit", "Edit", input),
        tool_result: "",
      };
    case "beforeSubmitPrompt":
      return {
        hook_point: "PreUserInput",
        ...base,
        ...turn,
        raw_input: input.prompt,
        input_source: "keyboard",
      };
    case "afterAgentResponse":
      return { hook_point: "PreOutputDeliver", ...base, ...turn, output_text: str(input.text) };
    case "stop":
      return { hook_point: "SessionEnd", ...base, summary: { reason: str(input.status) } };
    default:
      return { hook_point: unknownHookPoint("Cursor", name), ...base };
  }
}

const answer = (exitCode: 0 | 2, o: unknown, stderr?: string): HostAnswer => ({
  exitCode,
  stdout: jsonLine(o),
  ...(stderr !== undefined ? { stderr } : {}),
});

function permission(v: Verdict, allowAsk: boolean): HostAnswer {
  const decision = v.decision === "ask" && !allowAsk ? "deny" : v.decision;
  if (decision === "allow") return answer(0, { permission: "allow" });
  const why = verdictReason(v);
  const o = { permission: decision, user_message: why, agent_message: why };
  return decision === "deny" ? answer(2, o, `${why}\n`) : answer(0, o);
}

/** Cursor cannot rewrite a call: an allow that needs containment (`updated_input`) is asked. */
function uncontainable(v: Verdict): Verdict {
  if (v.decision !== "allow" || v.directives?.updated_input === undefined) return v;
  const why = "Cursor cannot run this command in Warden's sandbox; approve to run it uncontained";
  return { ...v, decision: "ask", severity: "warning", reasons: [why] };
}

/** Cursor's answer to a verdict, by the Cursor event it answers. */
export function renderCursor(event: string, v: Verdict): HostAnswer {
  if (!isCursorEvent(event)) return { exitCode: 2, stderr: `${verdictReason(v)}\n` };
  switch (event) {
    case "beforeShellExecution":
    case "beforeMCPExecution":
      return permission(uncontainable(v), true);
    case "beforeReadFile":
      return permission(v, false);
    case "beforeSubmitPrompt":
      return v.decision === "allow"
        ? answer(0, { continue: true })
        : answer(0, { continue: false, user_message: verdictReason(v) });
    default:
      // after* and stop: Cursor reads no decision; the verdict is journaled and kept in state.
      return answer(0, {});
  }
}

/** The hook_event_name of a Cursor input, if it has one. */
export function cursorEventName(input: unknown): string {
  return str(obj(input).hook_event_name, "unknown");
}

/** The first workspace root Cursor names, else the shell's cwd. */
function cursorWorkspace(input: HostInput): string | undefined {
  const roots = input.workspace_roots;
  const first = Array.isArray(roots) ? roots.find((r) => typeof r === "string" && r !== "") : undefined;
  if (typeof first === "string") return first;
  return typeof input.cwd === "string" && input.cwd !== "" ? input.cwd : undefined;
}

export const cursorAdapter: HostAdapter = {
  hostId: CURSOR_HOST_ID,
  eventName: cursorEventName,
  workspaceOf: cursorWorkspace,
  translate: translateCursor,
  render: renderCursor,
};
