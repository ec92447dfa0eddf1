// The OpenAI Codex CLI adapter: Codex's hook input (one JSON object on stdin: session_id,
// turn_id, transcript_path, cwd, hook_event_name, model, permission_mode and the event's
// fields; https://developers.openai.com/codex/hooks) → an AARTS event, and the verdict →
// Codex's documented answer. Mapping:
//   PreToolUse        → PreToolUse    deny (and ask: Codex's PreToolUse has no ask, an "ask"
//                                     answer is an invalid output Codex skips — fail open —
//                                     so ask is deny): exit 2 with the reason on stderr;
//                                     a contained shell call: permissionDecision "allow" +
//                                     updatedInput; allow: no output
//   PermissionRequest → PreToolUse    deny: decision.behavior "deny"; allow and ask: no output
//                                     (Codex's own approval prompt asks the user)
//   PostToolUse       → PostToolUse   deny: {"decision":"block","reason"}; masked credential:
//                                     additionalContext
//   UserPromptSubmit  → PreUserInput  deny/ask: {"decision":"block","reason"}
//   SessionStart      → SessionStart  inject_context as additionalContext
//   PreCompact/PostCompact → PreCompact/PostCompact; SubagentStart → PreSubAgentSpawn;
//   SubagentStop      → PostSubAgentResult; Stop → PreOutputDeliver (findings as systemMessage)
// Codex answers only known fields (an unknown one fails the hook, open), so every answer
// here is within its output schemas. Input that is not a Codex event exits 2 with the coded
// reason on stderr (Codex blocks a PreToolUse on exit 2).
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
  sessionStartAnswer,
  str,
  unknownHookPoint,
} from "./host-adapter-common.js";
import {
  compactEvent,
  cwdOf,
  findingsAnswer,
  hookEventName,
  memberOf,
  patchFields,
  promptEvent,
  resultText,
  type ToolFields,
  type ToolNameMap,
  toolFields,
} from "./host-tools.js";
import type { Verdict } from "./schema-base.js";

export const CODEX_HOST_ID = "codex";

export const CODEX_EVENTS = [
  "SessionStart",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "PreCompact",
  "PostCompact",
  "SubagentStart",
  "SubagentStop",
] as const;
export type CodexEvent = (typeof CODEX_EVENTS)[number];

/** Codex's hook-facing tool names (shell-like tools are all `Bash`; MCP tools `mcp__s__t`). */
export const CODEX_TOOLS: ToolNameMap = {
  Bash: { canonical: "shell" },
  NetworkAccess: { canonical: "web_request", claude: "WebFetch" },
};

export const isCodexEvent = memberOf(CODEX_EVENTS);

/** A Codex tool call in the taxonomy; apply_patch is a file tool on the files it touches. */
export function codexTool(input: HostInput): ToolFields {
  const name = str(input.tool_name);
  const args = obj(input.tool_input);
  if (name === "apply_patch") return patchFields(str(args.command), str(input.cwd) || undefined, name);
  if (name === "NetworkAccess") {
    return { ...toolFields(name, args, CODEX_TOOLS), tool_input: { ...args, url: str(args.command) } };
  }
  return toolFields(name, args, CODEX_TOOLS);
}

/** The AARTS event for one Codex hook input (fields it lacks are left for the parser to refuse). */
export function translateCodex(input: HostInput, now: string): Record<string, unknown> {
  const name = str(input.hook_event_name);
  const base = { session_id: input.session_id, timestamp: now, host_id: CODEX_HOST_ID, aarts_version: "1" };
  const turn = { turn_id: str(input.tool_use_id) || str(input.turn_id) || "codex-turn" };
  switch (name) {
    case "PreToolUse":
    case "PermissionRequest":
      return { hook_point: "PreToolUse", ...base, ...turn, ...codexTool(input), ...subagent(input) };
    case "PostToolUse":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...codexTool(input),
        tool_result: resultText(input.tool_response),
      };
    case "UserPromptSubmit":
      return promptEvent(base, turn, input.prompt);
    case "SessionStart":
      return {
        hook_point: "SessionStart",
        ...base,
        environment: {
          cwd: str(input.cwd),
          source: str(input.source),
          permission_mode: str(input.permission_mode),
        },
      };
    case "PreCompact":
      return compactEvent(base, turn, str(input.transcript_path), input.trigger);
    case "PostCompact":
      return compacted(base, turn);
    case "SubagentStart":
      return {
        hook_point: "PreSubAgentSpawn",
        ...base,
        sub_agent_id: str(input.agent_id) || `${str(input.session_id)}:sub-agent`,
        sub_agent_type: str(input.agent_type).slice(0, 64),
        delegated_task: "",
      };
    case "SubagentStop":
      return {
        hook_point: "PostSubAgentResult",
        ...base,
        sub_agent_id: str(input.agent_id) || `${str(input.session_id)}:sub-agent`,
        result: str(input.last_assistant_message),
      };
    case "Stop":
      return {
        hook_point: "PreOutputDeliver",
        ...base,
        ...turn,
        output_text: str(input.last_assistant_message),
      };
    default:
      return { hook_point: unknownHookPoint("Codex", name), ...base };
  }
}

const compacted = (base: Record<string, unknown>, turn: Record<string, unknown>) => ({
  hook_point: "PostCompact",
  ...base,
  ...turn,
  original_value: "",
  modified_value: "",
  was_modified: true,
  modifier_chain: [],
});

/** A call made inside a sub-agent carries its provenance. */
function subagent(input: HostInput): Record<string, unknown> {
  return str(input.agent_id) ? { is_sub_agent: true, parent_session_id: input.session_id } : {};
}

const blocked = (v: Verdict): HostAnswer => ({ exitCode: 2, stderr: `${reason(v)}\n` });

function preToolUse(v: Verdict): HostAnswer {
  if (v.decision !== "allow") {
    const deny = {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason(v),
    };
    return { ...blocked(v), stdout: json({ hookSpecificOutput: deny }) };
  }
  const updated = v.directives?.updated_input;
  if (updated === undefined) return { exitCode: 0 };
  return {
    exitCode: 0,
    stdout: json({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: updated },
    }),
  };
}

/** Codex's answer to a verdict, by the Codex event it answers. */
export function renderCodex(event: string, v: Verdict): HostAnswer {
  if (!isCodexEvent(event)) return blocked(v);
  switch (event) {
    case "PreToolUse":
      return preToolUse(v);
    case "PermissionRequest":
      if (v.decision !== "deny") return { exitCode: 0 };
      return {
        exitCode: 0,
        stdout: json({
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: { behavior: "deny", message: reason(v) },
          },
        }),
      };
    case "PostToolUse":
      if (v.decision !== "allow")
        return { exitCode: 0, stdout: json({ decision: "block", reason: reason(v) }) };
      if (v.directives?.replacement_text === undefined) return { exitCode: 0 };
      return contextAnswer("PostToolUse", CREDENTIAL_NOTICE);
    case "UserPromptSubmit":
      return v.decision === "allow"
        ? { exitCode: 0 }
        : { exitCode: 0, stdout: json({ decision: "block", reason: reason(v) }) };
    case "SessionStart":
      return sessionStartAnswer(v, { exitCode: 0 });
    case "PreCompact":
      return v.decision === "deny" || isFailure(v) ? blocked(v) : { exitCode: 0 };
    default:
      // Stop, SubagentStart/Stop, PostCompact: nothing to block; findings are shown.
      return findingsAnswer(v, { exitCode: 0 });
  }
}

export const codexAdapter: HostAdapter = {
  hostId: CODEX_HOST_ID,
  eventName: hookEventName,
  workspaceOf: cwdOf,
  translate: translateCodex,
  render: renderCodex,
};
