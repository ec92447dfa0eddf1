// The GitHub Copilot adapter — Copilot CLI and the Copilot coding (cloud) agent, which read
// the same `.github/hooks/*.json` (https://docs.github.com/en/copilot/reference/hooks-reference).
// Copilot's native payload is camelCase and carries no event name (`warden hooks copilot
// --event preToolUse`, as the install writes it); a hook configured with a PascalCase event
// gets the VS Code-compatible snake_case payload with `hook_event_name` and Claude Code tool
// names — both are read. Mapping:
//   preToolUse          → PreToolUse  deny: permissionDecision "deny" (exit 0: older Copilot
//                                     skips a non-zero exit); ask: "ask" (the cloud agent
//                                     treats it as deny); a contained shell call: "allow" +
//                                     modifiedArgs, except in the cloud agent, whose lighter
//                                     runtime may drop modifiedArgs: deny; allow: no output
//   postToolUse         → PostToolUse deny or a masked credential: modifiedResult (the text
//                                     the model sees instead)
//   postToolUseFailure  → PostToolUse (the error text) deny: additionalContext
//   userPromptSubmitted → PreUserInput (journaled; Copilot drops a command hook's answer)
//   sessionStart → SessionStart (additionalContext); sessionEnd → SessionEnd;
//   agentStop → PreOutputDeliver; subagentStart → PreSubAgentSpawn;
//   subagentStop → PostSubAgentResult (deny: modifiedResponse withholds it); preCompact → PreCompact
// Input naming no known event exits 2 (a preToolUse command hook that exits non-zero denies).
import {
  type HostAdapter,
  type HostAnswer,
  type HostInput,
  jsonLine as json,
  obj,
  verdictReason as reason,
  str,
  unknownHookPoint,
} from "./host-adapter-common.js";
import {
  argsObject,
  compactEvent,
  cwdOf,
  memberOf,
  patchFields,
  promptEvent,
  sessionOf,
  type ToolFields,
  type ToolNameMap,
  toolFields,
} from "./host-tools.js";
import type { Verdict } from "./schema-base.js";

export const COPILOT_HOST_ID = "copilot";

export const COPILOT_EVENTS = [
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "userPromptSubmitted",
  "sessionStart",
  "sessionEnd",
  "agentStop",
  "subagentStart",
  "subagentStop",
  "preCompact",
] as const;
export type CopilotEvent = (typeof COPILOT_EVENTS)[number];

/** The VS Code-compatible (PascalCase) event names → Copilot's own. */
const PASCAL: Readonly<Record<string, CopilotEvent>> = {
  PreToolUse: "preToolUse",
  PostToolUse: "postToolUse",
  PostToolUseFailure: "postToolUseFailure",
  UserPromptSubmit: "userPromptSubmitted",
  SessionStart: "sessionStart",
  SessionEnd: "sessionEnd",
  Stop: "agentStop",
  SubagentStop: "subagentStop",
  PreCompact: "preCompact",
};

/** Copilot's runtime tool names (the reference's "Tool names for hook matching") → the taxonomy. */
export const COPILOT_TOOLS: ToolNameMap = {
  bash: { canonical: "shell", claude: "Bash" },
  powershell: { canonical: "shell", claude: "Bash" },
  view: { canonical: "file_read", claude: "Read" },
  create: { canonical: "file_write", claude: "Write" },
  edit: { canonical: "file_edit", claude: "Edit" },
  grep: { canonical: "file_read", claude: "Grep" },
  rg: { canonical: "file_read", claude: "Grep" },
  glob: { canonical: "file_read", claude: "Glob" },
  web_fetch: { canonical: "web_request", claude: "WebFetch" },
  web_search: { canonical: "web_request", claude: "WebSearch" },
  task: { canonical: "delegate", claude: "Task" },
  ask_user: { canonical: "other", claude: "AskUserQuestion" },
  update_todo: { canonical: "other", claude: "TodoWrite" },
};

export const isCopilotEvent = memberOf(COPILOT_EVENTS);

/** The Copilot event an input answers: the configured one, else the payload's own name. */
export function copilotEventName(input: unknown, configured?: string): string {
  if (configured !== undefined) return PASCAL[configured] ?? configured;
  const named = str(obj(input).hook_event_name, "unknown");
  return PASCAL[named] ?? named;
}

/** One field in either payload format (camelCase first, then snake_case). */
const field = (input: HostInput, camel: string, snake: string): unknown => input[camel] ?? input[snake];

/** A Copilot tool call in the taxonomy; str_replace_editor by its sub-command, patches by file. */
export function copilotTool(input: HostInput): ToolFields {
  const name = str(field(input, "toolName", "tool_name"));
  const args = argsObject(field(input, "toolArgs", "tool_input"));
  if (name === "apply_patch") {
    const patch = str(args.input) || str(args.patch) || str(args.command);
    return patchFields(patch, str(input.cwd) || undefined, name);
  }
  if (name === "str_replace_editor") {
    const sub = str(args.command);
    const canonical = sub === "view" ? "file_read" : sub === "create" ? "file_write" : "file_edit";
    return { tool_name: canonical, tool_name_native: name, tool_input: args, artifacts: [] };
  }
  return toolFields(name, args, COPILOT_TOOLS);
}

function toolResult(input: HostInput): string {
  const r = obj(field(input, "toolResult", "tool_result"));
  return str(r.textResultForLlm) || str(r.text_result_for_llm);
}

/** The AARTS event for one Copilot hook input, the event given by the configuration. */
export function translateCopilotEvent(event: string, input: HostInput, now: string): Record<string, unknown> {
  const id = sessionOf(COPILOT_HOST_ID, field(input, "sessionId", "session_id"), input.cwd);
  const base = { session_id: id, timestamp: now, host_id: COPILOT_HOST_ID, aarts_version: "1" };
  const turn = { turn_id: `copilot:${String(input.timestamp ?? "turn")}`.slice(0, 256) };
  const agent = str(field(input, "agentName", "agent_name"));
  switch (event) {
    case "preToolUse":
      return { hook_point: "PreToolUse", ...base, ...turn, ...copilotTool(input) };
    case "postToolUse":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...copilotTool(input),
        tool_result: toolResult(input),
      };
    case "postToolUseFailure":
      return {
        hook_point: "PostToolUse",
        ...base,
        ...turn,
        ...copilotTool(input),
        tool_result: str(input.error),
      };
    case "userPromptSubmitted":
      return promptEvent(base, turn, input.prompt);
    case "sessionStart":
      return {
        hook_point: "SessionStart",
        ...base,
        environment: { cwd: str(input.cwd), source: str(input.source) },
      };
    case "sessionEnd":
      return { hook_point: "SessionEnd", ...base, summary: { reason: str(input.reason) } };
    case "agentStop":
      return { hook_point: "PreOutputDeliver", ...base, ...turn, output_text: "" };
    case "subagentStart":
      return {
        hook_point: "PreSubAgentSpawn",
        ...base,
        sub_agent_id: agent || `${id}:sub-agent`,
        sub_agent_type: agent.slice(0, 64),
        delegated_task: str(input.agentDescription),
      };
    case "subagentStop":
      return {
        hook_point: "PostSubAgentResult",
        ...base,
        sub_agent_id: str(field(input, "agentId", "agent_id")) || agent || `${id}:sub-agent`,
        result: str(input.response) || str(input.last_assistant_message),
      };
    case "preCompact":
      return compactEvent(base, turn, str(field(input, "transcriptPath", "transcript_path")), input.trigger);
    default:
      return { hook_point: unknownHookPoint("Copilot", event), ...base };
  }
}

const out = (o: unknown): HostAnswer => ({ exitCode: 0, stdout: json(o) });

function preToolUse(v: Verdict, cloudAgent: boolean): HostAnswer {
  const updated = v.directives?.updated_input;
  if (v.decision === "allow" && updated === undefined) return { exitCode: 0 };
  if (v.decision === "allow" && !cloudAgent)
    return out({ permissionDecision: "allow", modifiedArgs: updated });
  const why =
    v.decision === "allow"
      ? "Warden: this call runs only contained, and the Copilot cloud agent may not apply the contained form"
      : reason(v);
  return out({ permissionDecision: v.decision === "ask" ? "ask" : "deny", permissionDecisionReason: why });
}

/** Copilot's answer to a verdict, by the Copilot event it answers. */
export function renderCopilot(event: string, v: Verdict, cloudAgent = false): HostAnswer {
  if (!isCopilotEvent(event)) return { exitCode: 2, stderr: `${reason(v)}\n` };
  const masked = v.directives?.replacement_text;
  switch (event) {
    case "preToolUse":
      return preToolUse(v, cloudAgent);
    case "postToolUse":
      if (v.decision === "allow" && masked === undefined) return out({});
      return out({
        modifiedResult: {
          resultType: "success",
          textResultForLlm: v.decision === "allow" ? masked : reason(v),
        },
      });
    case "postToolUseFailure":
      return v.decision === "allow" ? out({}) : out({ additionalContext: reason(v) });
    case "sessionStart": {
      const inject = v.directives?.inject_context?.content;
      return inject === undefined ? out({}) : out({ additionalContext: inject });
    }
    case "subagentStop":
      if (v.decision === "allow" && masked === undefined) return out({});
      return out({ modifiedResponse: v.decision === "allow" ? masked : reason(v) });
    default:
      // userPromptSubmitted, sessionEnd, agentStop, subagentStart, preCompact: Copilot reads
      // no decision here; the verdict is journaled and kept in the session state.
      return out({});
  }
}

export interface CopilotOptions {
  /** The event the hook entry is configured for (camelCase payloads do not name it). */
  event?: string;
  /** The Copilot coding (cloud) agent: a contained rewrite is answered deny. */
  cloudAgent?: boolean;
}

/** The Copilot adapter for one configured event (or payloads that name theirs). */
export function copilotAdapterFor(o: CopilotOptions = {}): HostAdapter {
  const eventName = (input: unknown) => copilotEventName(input, o.event);
  return {
    hostId: COPILOT_HOST_ID,
    eventName,
    workspaceOf: cwdOf,
    translate: (input, now) => translateCopilotEvent(eventName(input), input, now),
    render: (event, v) => renderCopilot(event, v, o.cloudAgent === true),
  };
}

export const copilotAdapter: HostAdapter = copilotAdapterFor();
