// The Claude Code adapter: Claude Code's hook input (one JSON object on stdin: session_id,
// transcript_path, cwd, permission_mode, hook_event_name and the event's fields) → an
// AARTS event, and the engine's verdict → Claude Code's documented answer (stdout JSON and
// exit code). Mapping:
//   PreToolUse       → PreToolUse   deny/ask: hookSpecificOutput.permissionDecision + reason;
//                                   allow: no output (Claude Code's own permission rules
//                                   still apply); allow contained (updated_input): allow
//                                   with updatedInput, the Bash command run in the sandbox
//   PostToolUse      → PostToolUse  (an MCP result's content blocks as {content:[…]})
//                                   deny: {"decision":"block","reason"}; a masked
//                                   credential: additionalContext telling the model
//   UserPromptSubmit → PreUserInput deny or ask: {"decision":"block","reason"} (no prompt UI)
//   SessionStart     → SessionStart; with source "compact" → PostCompact, whose
//                                   inject_context becomes additionalContext
//   PreCompact       → PreCompact   deny: exit 2, the reason on stderr
//   SessionEnd       → SessionEnd   (notification)
//   Stop             → PreOutputDeliver (last_assistant_message); findings as systemMessage
//   SubagentStop     → PostSubAgentResult; findings as systemMessage
// Input that is not a Claude Code event is answered with exit 2 (blocking where Claude Code
// can block) and the engine's coded reason on stderr: fail closed.
import {
  CREDENTIAL_NOTICE,
  contextAnswer,
  type HostAdapter,
  type HostAnswer,
  type HostInput,
  isFailure,
  jsonLine as json,
  obj,
  verdictReason as reason,
  str as s,
  sessionStartAnswer,
  unknownHookPoint,
} from "./host-adapter-common.js";
import type { Verdict } from "./schema-base.js";
import { canonicalToolName } from "./taxonomy.js";

export const CLAUDE_CODE_HOST_ID = "claude-code";

export const CLAUDE_CODE_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Stop",
  "SubagentStop",
] as const;
export type ClaudeCodeEvent = (typeof CLAUDE_CODE_EVENTS)[number];

/** Claude Code's answer (the shared host answer). */
export type ClaudeAnswer = HostAnswer;
type Input = HostInput;

export function isClaudeCodeEvent(v: unknown): v is ClaudeCodeEvent {
  return typeof v === "string" && (CLAUDE_CODE_EVENTS as readonly string[]).includes(v);
}

/**
 * Claude Code's `tool_response` as an AARTS `tool_result`: a string or object as sent; an MCP
 * tool's bare array of content blocks as `{content: [...]}` (the MCP CallToolResult shape,
 * however many blocks); nothing as "". The engine reads the text out of it (tool-result.ts).
 */
function toolResponse(v: unknown): unknown {
  if (v === undefined || v === null) return "";
  if (Array.isArray(v)) return { content: v };
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v;
}

/** The AARTS event for one Claude Code hook input (fields it lacks are left for the parser to refuse). */
export function translateClaudeCode(input: Input, now: string): Record<string, unknown> {
  const name = s(input.hook_event_name);
  const base = {
    session_id: input.session_id,
    timestamp: now,
    host_id: CLAUDE_CODE_HOST_ID,
    aarts_version: "1",
  };
  const turn = { turn_id: s(input.tool_use_id) || "claude-code-turn" };
  const toolName = s(input.tool_name);
  const tool = {
    tool_name: canonicalToolName(toolName),
    ...(toolName ? { tool_name_native: toolName } : {}),
    tool_input: input.tool_input,
    artifacts: [],
  };
  switch (name) {
    case "PreToolUse":
      return { hook_point: "PreToolUse", ...base, ...turn, ...tool };
    case "PostToolUse":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...tool,
        tool_result: toolResponse(input.tool_response),
      };
    case "UserPromptSubmit":
      return {
        hook_point: "PreUserInput",
        ...base,
        ...turn,
        raw_input: input.prompt,
        input_source: "keyboard",
      };
    case "SessionStart":
      if (input.source === "compact") {
        return {
          hook_point: "PostCompact",
          ...base,
          ...turn,
          original_value: "",
          modified_value: "",
          was_modified: true,
          modifier_chain: [],
        };
      }
      return {
        hook_point: "SessionStart",
        ...base,
        environment: {
          cwd: s(input.cwd),
          source: s(input.source),
          permission_mode: s(input.permission_mode),
        },
      };
    case "SessionEnd":
      return { hook_point: "SessionEnd", ...base, summary: { reason: s(input.reason) } };
    case "PreCompact":
      return {
        hook_point: "PreCompact",
        ...base,
        ...turn,
        context_before: s(input.transcript_path),
        compaction_reason: input.trigger === "manual" ? "user_triggered" : "token_limit",
      };
    case "Stop":
      return {
        hook_point: "PreOutputDeliver",
        ...base,
        ...turn,
        output_text: s(input.last_assistant_message),
      };
    case "SubagentStop":
      return {
        hook_point: "PostSubAgentResult",
        ...base,
        sub_agent_id: s(input.agent_id) || `${s(input.session_id)}:sub-agent`,
        result: s(input.last_assistant_message),
      };
    default:
      return { hook_point: unknownHookPoint("ClaudeCode", name), ...base };
  }
}

/**
 * An allowed call: no output (Claude Code's own permission rules decide), or — contained
 * (directive `updated_input`) — allow with the rewritten input. Claude Code's documented
 * PreToolUse `allow` skips its prompt but not the user's deny/ask rules.
 */
function allowPreToolUse(v: Verdict): ClaudeAnswer {
  const updatedInput = v.directives?.updated_input;
  if (updatedInput === undefined) return { exitCode: 0 };
  return {
    exitCode: 0,
    stdout: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput,
        permissionDecisionReason: "Warden: contained",
      },
    }),
  };
}

/** Claude Code's answer to a verdict, by the Claude Code event it answers. */
export function renderClaudeCode(event: string, v: Verdict): ClaudeAnswer {
  const failed = isFailure(v);
  if (!isClaudeCodeEvent(event)) return { exitCode: 2, stderr: `${reason(v)}\n` };
  switch (event) {
    case "PreToolUse":
      if (v.decision === "allow") return allowPreToolUse(v);
      return {
        exitCode: 0,
        stdout: json({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: v.decision,
            // An ask of a contained call (unknownEgress "ask"): Claude Code shows and, on
            // approval, runs the rewritten input — never the original command.
            ...(v.decision === "ask" && v.directives?.updated_input !== undefined
              ? { updatedInput: v.directives.updated_input }
              : {}),
            permissionDecisionReason: reason(v),
          },
        }),
      };
    case "UserPromptSubmit":
      return v.decision === "allow"
        ? { exitCode: 0 }
        : { exitCode: 0, stdout: json({ decision: "block", reason: reason(v) }) };
    case "PostToolUse":
      if (v.decision !== "allow")
        return { exitCode: 0, stdout: json({ decision: "block", reason: reason(v) }) };
      if (v.directives?.replacement_text !== undefined)
        return contextAnswer("PostToolUse", CREDENTIAL_NOTICE);
      return { exitCode: 0 };
    case "SessionStart":
      return sessionStartAnswer(v, { exitCode: 0 });
    case "PreCompact":
      return v.decision === "deny" || failed ? { exitCode: 2, stderr: `${reason(v)}\n` } : { exitCode: 0 };
    case "SessionEnd":
      return { exitCode: 0 };
    case "Stop":
    case "SubagentStop":
      return v.decision === "allow" && v.severity === "info"
        ? { exitCode: 0 }
        : { exitCode: 0, stdout: json({ systemMessage: reason(v) }) };
  }
}

/** The hook_event_name of a Claude Code input, if it has one. */
export function claudeEventName(input: unknown): string {
  return s(obj(input).hook_event_name, "unknown");
}

/** The Claude Code adapter for the shared host flow (answerHostEvent). */
export const claudeCodeAdapter: HostAdapter = {
  hostId: CLAUDE_CODE_HOST_ID,
  workspaceEnv: "CLAUDE_PROJECT_DIR",
  eventName: claudeEventName,
  workspaceOf: (input) => (typeof input.cwd === "string" ? input.cwd : undefined),
  translate: translateClaudeCode,
  render: renderClaudeCode,
};
