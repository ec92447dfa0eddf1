// The Gemini CLI adapter: Gemini CLI's hook input (one JSON object on stdin: session_id,
// transcript_path, cwd, hook_event_name, timestamp and the event's fields; documented at
// https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md) → an AARTS
// event, and the verdict → Gemini CLI's documented answer. Mapping:
//   BeforeTool   → PreToolUse        deny and ask (no documented ask): {"decision":"deny",
//                                    "reason"} and exit 2 with the reason on stderr; a
//                                    contained shell call: hookSpecificOutput.tool_input;
//                                    allow: {} (no decision: Gemini's confirmations stay)
//   AfterTool    → PostToolUse       deny: {"decision":"deny","reason"} (the reason replaces
//                                    the result the model sees); a masked credential: the
//                                    masked text as that reason
//   BeforeAgent  → PreUserInput      deny/ask: {"decision":"deny","reason"} (prompt discarded)
//   AfterAgent   → PreOutputDeliver  findings as systemMessage (never a retry)
//   SessionStart → SessionStart      inject_context as hookSpecificOutput.additionalContext
//   SessionEnd   → SessionEnd; PreCompress → PreCompact (advisory: findings as systemMessage)
// Gemini CLI treats exit 1, a timeout and unparsable stdout as "allow with a warning" (fail
// open); exit 2 and any other non-zero code block. Input that is not a Gemini event exits 2.
import {
  type HostAdapter,
  type HostAnswer,
  type HostInput,
  isObject,
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
  firstUrl,
  hookEventName,
  mcpPart,
  memberOf,
  promptEvent,
  resultText,
  type ToolFields,
  type ToolNameMap,
  toolFields,
} from "./host-tools.js";
import type { Verdict } from "./schema-base.js";

export const GEMINI_HOST_ID = "gemini";

export const GEMINI_EVENTS = [
  "BeforeTool",
  "AfterTool",
  "BeforeAgent",
  "AfterAgent",
  "SessionStart",
  "SessionEnd",
  "PreCompress",
] as const;
export type GeminiEvent = (typeof GEMINI_EVENTS)[number];

/** Gemini CLI's built-in tool names (packages/core tool definitions) → the taxonomy. */
export const GEMINI_TOOLS: ToolNameMap = {
  run_shell_command: { canonical: "shell", claude: "Bash" },
  read_file: { canonical: "file_read", claude: "Read" },
  read_many_files: { canonical: "file_read", claude: "Glob" },
  list_directory: { canonical: "file_read", claude: "LS" },
  glob: { canonical: "file_read", claude: "Glob" },
  grep_search: { canonical: "file_read", claude: "Grep" },
  search_file_content: { canonical: "file_read", claude: "Grep" },
  write_file: { canonical: "file_write", claude: "Write" },
  replace: { canonical: "file_edit", claude: "Edit" },
  web_fetch: { canonical: "web_request", claude: "WebFetch" },
  google_web_search: { canonical: "web_request", claude: "WebSearch" },
  write_todos: { canonical: "other", claude: "TodoWrite" },
  ask_user: { canonical: "other", claude: "AskUserQuestion" },
  activate_skill: { canonical: "other", claude: "Skill" },
  enter_plan_mode: { canonical: "other", claude: "EnterPlanMode" },
  exit_plan_mode: { canonical: "other", claude: "ExitPlanMode" },
  list_mcp_resources: { canonical: "other", claude: "ListMcpResourcesTool" },
  read_mcp_resource: { canonical: "other", claude: "ReadMcpResourceTool" },
  invoke_agent: { canonical: "delegate", claude: "Task" },
  codebase_investigator: { canonical: "delegate", claude: "Task" },
  cli_help: { canonical: "delegate", claude: "Task" },
};

export const isGeminiEvent = memberOf(GEMINI_EVENTS);

/** An MCP call (`mcp_<server>_<tool>`, with mcp_context naming the server) as `mcp__s__t`. */
function mcpTool(name: string, args: HostInput, ctx: HostInput): ToolFields {
  const server = str(ctx.server_name) || name.slice(4).split("_")[0] || "unknown";
  const tool = str(ctx.tool_name) || name.slice(4 + server.length + 1);
  const where = { server_url: str(ctx.url), server_command: str(ctx.command) };
  return {
    tool_name: "mcp_call",
    tool_name_native: `mcp__${mcpPart(server)}__${mcpPart(tool)}`,
    tool_input: { ...args, ...where },
    artifacts: [],
  };
}

/** A Gemini tool call in the taxonomy, with the path and URL fields the policy reads. */
export function geminiTool(input: HostInput): ToolFields {
  const name = str(input.tool_name);
  const args = obj(input.tool_input);
  if (isObject(input.mcp_context) || /^mcp_[^_]/.test(name))
    return mcpTool(name, args, obj(input.mcp_context));
  const fields = toolFields(name, args, GEMINI_TOOLS);
  const extra: HostInput = {};
  const dir = str(args.dir_path);
  if (dir && args.path === undefined) extra.path = dir;
  if (name === "web_fetch" && args.url === undefined) extra.url = firstUrl(str(args.prompt));
  if (name === "read_many_files" && Array.isArray(args.include))
    extra.pattern = args.include.map(String).join(" ");
  return { ...fields, tool_input: { ...args, ...extra } };
}

/** The AARTS event for one Gemini CLI hook input. */
export function translateGemini(input: HostInput, now: string): Record<string, unknown> {
  const name = str(input.hook_event_name);
  const base = { session_id: input.session_id, timestamp: now, host_id: GEMINI_HOST_ID, aarts_version: "1" };
  const turn = { turn_id: `gemini:${str(input.timestamp) || "turn"}`.slice(0, 256) };
  switch (name) {
    case "BeforeTool":
      return { hook_point: "PreToolUse", ...base, ...turn, ...geminiTool(input) };
    case "AfterTool": {
      const response = obj(input.tool_response);
      const text = resultText(response.llmContent ?? response.error ?? input.tool_response);
      return { hook_point: "PostToolUse", ...base, ...turn, ...geminiTool(input), tool_result: text };
    }
    case "BeforeAgent":
      return promptEvent(base, turn, input.prompt);
    case "AfterAgent":
      return { hook_point: "PreOutputDeliver", ...base, ...turn, output_text: str(input.prompt_response) };
    case "SessionStart":
      return {
        hook_point: "SessionStart",
        ...base,
        environment: { cwd: str(input.cwd), source: str(input.source) },
      };
    case "SessionEnd":
      return { hook_point: "SessionEnd", ...base, summary: { reason: str(input.reason) } };
    case "PreCompress":
      return compactEvent(base, turn, str(input.transcript_path), input.trigger);
    default:
      return { hook_point: unknownHookPoint("Gemini", name), ...base };
  }
}

/** A block Gemini CLI honours both ways: the JSON decision and exit 2 with the reason. */
const deny = (v: Verdict, text = reason(v)): HostAnswer => ({
  exitCode: 2,
  stdout: json({ decision: "deny", reason: text }),
  stderr: `${text}\n`,
});

function beforeTool(v: Verdict): HostAnswer {
  if (v.decision !== "allow") return deny(v);
  const updated = v.directives?.updated_input;
  // No decision when allowed: Gemini CLI's own confirmations stay in force.
  if (updated === undefined) return { exitCode: 0, stdout: json({}) };
  return {
    exitCode: 0,
    stdout: json({
      hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: updated },
    }),
  };
}

/** Gemini CLI's answer to a verdict, by the Gemini event it answers. */
export function renderGemini(event: string, v: Verdict): HostAnswer {
  if (!isGeminiEvent(event)) return { exitCode: 2, stderr: `${reason(v)}\n` };
  switch (event) {
    case "BeforeTool":
      return beforeTool(v);
    case "AfterTool": {
      if (v.decision !== "allow")
        return { exitCode: 0, stdout: json({ decision: "deny", reason: reason(v) }) };
      const masked = v.directives?.replacement_text;
      if (masked === undefined) return { exitCode: 0, stdout: json({}) };
      return { exitCode: 0, stdout: json({ decision: "deny", reason: masked }) };
    }
    case "BeforeAgent":
      return v.decision === "allow" ? { exitCode: 0, stdout: json({}) } : deny(v);
    case "SessionStart":
      return sessionStartAnswer(v, { exitCode: 0, stdout: json({}) });
    default:
      // AfterAgent, SessionEnd, PreCompress: advisory; findings are shown, never a retry.
      return findingsAnswer(v, { exitCode: 0, stdout: json({}) });
  }
}

export const geminiAdapter: HostAdapter = {
  hostId: GEMINI_HOST_ID,
  workspaceEnv: "GEMINI_PROJECT_DIR",
  eventName: hookEventName,
  workspaceOf: cwdOf,
  translate: translateGemini,
  render: renderGemini,
};
