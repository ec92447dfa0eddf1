// One benign, valid event per hook point (the 20 of AARTS §6.3), for the schema, engine
// and transport tests.
import type { HookPoint } from "../../src/hooks/index.js";
import { ev } from "./events.js";

const TOOL = {
  tool_name: "file_read",
  tool_name_native: "Read",
  tool_input: { file_path: "README.md" },
  artifacts: [],
};
const MOD = { original_value: "hello", modified_value: "hello", was_modified: false, modifier_chain: [] };

export const BENIGN: Readonly<Record<HookPoint, Record<string, unknown>>> = {
  SessionStart: ev("SessionStart", { environment: { os: "linux", cwd: "/work/ws" } }),
  SessionEnd: ev("SessionEnd", { summary: { tool_calls: 1 } }),
  PrePluginLoad: ev("PrePluginLoad", {
    source: "user",
    plugin_id: "formatter@1.0.0",
    file_paths: ["/home/u/.plugins/formatter/index.js"],
    declared_hooks: [],
  }),
  PreSkillLoad: ev("PreSkillLoad", {
    source: "user",
    file_path: "/home/u/.skills/review.md",
    frontmatter: { name: "review" },
    declared_hooks: [],
    body_content: "Review the diff for style problems.",
    load_context: "main_session",
  }),
  PreMCPConnect: ev("PreMCPConnect", {
    source: "user",
    server_id: "docs",
    transport: "stdio",
    server_command: "npx docs-mcp",
  }),
  PreUserInput: ev("PreUserInput", { turn_id: "t1", raw_input: "Summarise README.md please" }),
  PostInputProcessing: ev("PostInputProcessing", { turn_id: "t1", ...MOD }),
  PreLLMRequest: ev("PreLLMRequest", { turn_id: "t1", full_prompt: [{ role: "user", content: "hello" }] }),
  PostLLMResponse: ev("PostLLMResponse", { turn_id: "t1", response_text: "Here is the summary." }),
  PreToolUse: ev("PreToolUse", { turn_id: "t1", ...TOOL }),
  PostToolUse: ev("PostToolUse", { turn_id: "t1", ...TOOL, tool_result: "# Readme" }),
  PreToolInputModification: ev("PreToolInputModification", { source: "managed", tool_name: "shell", ...MOD }),
  PreSubAgentSpawn: ev("PreSubAgentSpawn", {
    sub_agent_id: "sub-1",
    delegated_task: "find the tests",
    requested_tools: ["file_read"],
    parent_permissions: { tools: ["file_read", "shell"] },
  }),
  PostSubAgentResult: ev("PostSubAgentResult", { sub_agent_id: "sub-1", result: "tests are in test/" }),
  PreOutputDeliver: ev("PreOutputDeliver", { turn_id: "t1", output_text: "Done." }),
  PreMemoryWrite: ev("PreMemoryWrite", {
    memory_store: "prefs",
    content: "user prefers tabs",
    memory_type: "preference",
  }),
  PreMemoryRead: ev("PreMemoryRead", { memory_store: "prefs", retrieved_content: "user prefers tabs" }),
  PreCompact: ev("PreCompact", { turn_id: "t1", context_before: "long conversation" }),
  PostCompact: ev("PostCompact", { turn_id: "t1", ...MOD }),
  PostAskResolution: ev("PostAskResolution", {
    turn_id: "t1",
    original_hook_point: "PreToolUse",
    original_verdict: { decision: "ask", category: "tool_execution", severity: "warning", source: "policy" },
    resolution: "approved",
  }),
};
