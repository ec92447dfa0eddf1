// AARTS data model, part 2 (AARTS 0.1 §6.3, §8): the 20 hook points, each
// the envelope + its extensions + its hook-specific fields, and the table of blocking
// modes and conformance levels. `HookEventSchema` is the union over `hook_point`.
import { z } from "zod";
import {
  EnvelopeShape,
  HOOK_LIMITS,
  ModificationShape,
  ProvenanceShape,
  RESOLUTIONS,
  ToolShape,
  TrustSourceShape,
  TurnShape,
  VerdictSchema,
} from "./schema-base.js";

const Id = z.string().min(1).max(HOOK_LIMITS.id);
const Text = z.string().max(HOOK_LIMITS.text);
const Json = z.json();
const Obj = z.record(z.string(), z.json());
const StringOrObject = z.union([Text, Obj]);
const StringOrArray = z.union([Text, z.array(Json).max(HOOK_LIMITS.list)]);
const Arr = z.array(Json).max(HOOK_LIMITS.list);
const Strings = z.array(z.string().max(4096)).max(HOOK_LIMITS.list);

const point = <N extends string, S extends z.ZodRawShape>(name: N, shape: S) =>
  z.looseObject({ hook_point: z.literal(name), ...EnvelopeShape, ...shape });

export const HOOK_EVENT_SCHEMAS = {
  SessionStart: point("SessionStart", {
    plugins: Arr.optional(),
    configuration_sources: Arr.optional(),
    environment: Obj.optional(),
  }),
  SessionEnd: point("SessionEnd", { summary: Obj.optional() }),
  PrePluginLoad: point("PrePluginLoad", {
    ...TrustSourceShape,
    plugin_id: Id,
    file_paths: Strings,
    file_hashes: Strings.optional(),
    declared_hooks: Arr,
    declared_permissions: Arr.optional(),
  }),
  PreSkillLoad: point("PreSkillLoad", {
    ...TrustSourceShape,
    file_path: z.string().min(1).max(4096),
    file_hash: z.string().max(128).optional(),
    frontmatter: Obj,
    declared_hooks: Arr,
    body_content: Text.optional(),
    load_context: z.enum(["main_session", "sub_agent", "skill_invocation"]),
  }),
  PreMCPConnect: point("PreMCPConnect", {
    ...TrustSourceShape,
    server_id: Id,
    transport: z.enum(["stdio", "sse", "streamable_http"]),
    server_uri: z.string().max(4096).optional(),
    server_command: z.string().max(65_536).optional(),
    declared_tools: Arr.optional(),
    declared_resources: Arr.optional(),
  }),
  PreUserInput: point("PreUserInput", {
    ...TurnShape,
    raw_input: Text,
    input_source: z.enum(["keyboard", "file", "api", "automated"]).optional(),
    attached_files: Arr.optional(),
  }),
  PostInputProcessing: point("PostInputProcessing", { ...TurnShape, ...ModificationShape }),
  PreLLMRequest: point("PreLLMRequest", {
    ...TurnShape,
    full_prompt: StringOrArray,
    system_prompt: Text.optional(),
    custom_instructions: Arr.optional(),
    context_injections: Arr.optional(),
    user_input: Text.optional(),
    model_id: z.string().max(256).optional(),
    token_count: z.number().nonnegative().optional(),
  }),
  PostLLMResponse: point("PostLLMResponse", {
    ...TurnShape,
    response_text: Text,
    planned_actions: Arr.optional(),
    stop_reason: z.string().max(64).optional(),
  }),
  PreToolUse: point("PreToolUse", { ...TurnShape, ...ToolShape, ...ProvenanceShape }),
  PostToolUse: point("PostToolUse", {
    ...TurnShape,
    ...ToolShape,
    // A string, an object, or an MCP tool's array of content blocks (tool-result.ts reads them).
    tool_result: z.union([Text, Obj, Arr]),
    exit_code: z.number().optional(),
    execution_duration_ms: z.number().nonnegative().optional(),
    side_effects: Arr.optional(),
  }),
  PreToolInputModification: point("PreToolInputModification", {
    ...TrustSourceShape,
    ...ModificationShape,
    tool_name: z.string().min(1).max(256),
  }),
  PreSubAgentSpawn: point("PreSubAgentSpawn", {
    sub_agent_id: Id,
    sub_agent_type: z.string().max(64).optional(),
    delegated_task: Text,
    skill_files: Strings.optional(),
    declared_hooks: Arr.optional(),
    requested_tools: Strings.optional(),
    parent_permissions: Obj.optional(),
  }),
  PostSubAgentResult: point("PostSubAgentResult", {
    sub_agent_id: Id,
    result: StringOrObject,
    tool_calls_made: Arr.optional(),
    verdicts_issued: Arr.optional(),
  }),
  PreOutputDeliver: point("PreOutputDeliver", {
    ...TurnShape,
    output_text: Text,
    actions_taken: Arr.optional(),
  }),
  PreMemoryWrite: point("PreMemoryWrite", {
    memory_store: Id,
    content: StringOrObject,
    memory_type: z.enum(["fact", "instruction", "preference", "conversation", "code_snippet"]).optional(),
    write_source: z.enum(["agent_decision", "user_request", "automatic"]).optional(),
  }),
  PreMemoryRead: point("PreMemoryRead", {
    memory_store: Id,
    query: Text.optional(),
    retrieved_content: StringOrObject,
  }),
  PreCompact: point("PreCompact", {
    ...TurnShape,
    context_before: StringOrArray,
    token_count_before: z.number().nonnegative().optional(),
    compaction_reason: z.enum(["token_limit", "user_triggered", "automatic", "policy"]).optional(),
    compaction_strategy: z.enum(["summarization", "truncation", "selective", "hybrid"]).optional(),
  }),
  PostCompact: point("PostCompact", {
    ...TurnShape,
    ...ModificationShape,
    token_count_after: z.number().nonnegative().optional(),
    compaction_strategy_used: z.string().max(64).optional(),
  }),
  PostAskResolution: point("PostAskResolution", {
    ...TurnShape,
    original_hook_point: z.string().min(1).max(64),
    original_verdict: VerdictSchema,
    resolution: z.enum(RESOLUTIONS),
  }),
} as const;

export type HookPoint = keyof typeof HOOK_EVENT_SCHEMAS;
export const HOOK_POINTS = Object.keys(HOOK_EVENT_SCHEMAS) as HookPoint[];
export type HookEventOf<P extends HookPoint> = z.infer<(typeof HOOK_EVENT_SCHEMAS)[P]>;

export const HookEventSchema = z.discriminatedUnion(
  "hook_point",
  Object.values(HOOK_EVENT_SCHEMAS) as unknown as [
    (typeof HOOK_EVENT_SCHEMAS)[HookPoint],
    ...(typeof HOOK_EVENT_SCHEMAS)[HookPoint][],
  ],
);
export type HookEvent = { [P in HookPoint]: HookEventOf<P> }[HookPoint];

export type BlockingMode = "required" | "recommended" | "notification";
export type ConformanceLevel = 1 | 2 | 3;

/** §6.3: blocking mode and the conformance level that first requires the hook. */
export const HOOK_TABLE: Readonly<Record<HookPoint, { blocking: BlockingMode; level: ConformanceLevel }>> = {
  SessionStart: { blocking: "recommended", level: 1 },
  SessionEnd: { blocking: "notification", level: 3 },
  PrePluginLoad: { blocking: "required", level: 2 },
  PreSkillLoad: { blocking: "required", level: 2 },
  PreMCPConnect: { blocking: "required", level: 3 },
  PreUserInput: { blocking: "required", level: 3 },
  PostInputProcessing: { blocking: "required", level: 2 },
  PreLLMRequest: { blocking: "required", level: 2 },
  PostLLMResponse: { blocking: "required", level: 3 },
  PreToolUse: { blocking: "required", level: 1 },
  PostToolUse: { blocking: "recommended", level: 2 },
  PreToolInputModification: { blocking: "required", level: 3 },
  PreSubAgentSpawn: { blocking: "required", level: 3 },
  PostSubAgentResult: { blocking: "recommended", level: 3 },
  PreOutputDeliver: { blocking: "recommended", level: 3 },
  PreMemoryWrite: { blocking: "required", level: 3 },
  PreMemoryRead: { blocking: "recommended", level: 3 },
  PreCompact: { blocking: "required", level: 3 },
  PostCompact: { blocking: "required", level: 3 },
  PostAskResolution: { blocking: "notification", level: 2 },
};

/** Hooks about the session as a whole get the longer timeout (§9.1: 10 s vs 5 s). */
export const SESSION_LEVEL_HOOKS: ReadonlySet<HookPoint> = new Set<HookPoint>([
  "SessionStart",
  "SessionEnd",
  "PrePluginLoad",
  "PreSkillLoad",
  "PreMCPConnect",
  "PreCompact",
  "PostCompact",
]);
