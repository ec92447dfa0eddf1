// AARTS data model, part 1 (AARTS 0.1 §4.2, §6): the version check, the
// event envelope, the standard extensions, the artifact and the verdict. These zod schemas
// are the single source: the types come from them and `npm run schemas` exports them as
// JSON Schema under schemas/aarts/. Objects are open (`looseObject`): a host may add
// fields the spec does not name, and an engine ignores what it does not know.
import { z } from "zod";

/** Caps that keep one event bounded before any evaluation. */
export const HOOK_LIMITS = {
  id: 256,
  text: 1_000_000,
  list: 1024,
} as const;

const Id = z.string().min(1).max(HOOK_LIMITS.id);
const Text = z.string().max(HOOK_LIMITS.text);
const List = <T extends z.ZodType>(t: T) => z.array(t).max(HOOK_LIMITS.list);

/** The AARTS major version this engine implements. */
export const AARTS_VERSION = "1";

export const VersionCheckRequestSchema = z.looseObject({
  aarts_version: z.string().min(1).max(32),
});
export type VersionCheckRequest = z.infer<typeof VersionCheckRequestSchema>;

export const VersionCheckResponseSchema = z.strictObject({
  compatible: z.boolean(),
  engine_id: Id,
  engine_version: z.string().max(64).optional(),
});
export type VersionCheckResponse = z.infer<typeof VersionCheckResponseSchema>;

/** §6.1 host_id: self-assigned lowercase kebab-case. */
export const HOST_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** §6.1 base fields every event carries. */
export const EnvelopeShape = {
  session_id: Id,
  timestamp: z.iso.datetime({ offset: true }),
  host_id: z.string().max(64).regex(HOST_ID_PATTERN),
  host_version: z.string().max(64).optional(),
  aarts_version: z.string().min(1).max(32),
  locale: z.string().max(35).optional(),
};

/** §6.2.1 */
export const TurnShape = { turn_id: Id };

/** §6.4 artifact types. */
export const ARTIFACT_TYPES = [
  "url",
  "command",
  "file_path",
  "content",
  "package",
  "prompt_fragment",
  "credential",
  "network_address",
] as const;

export const ArtifactSchema = z.looseObject({
  type: z.enum(ARTIFACT_TYPES),
  value: Text,
  context: z.string().max(256).optional(),
  source_field: z.string().max(256).optional(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;

/** §7 canonical tool names. */
export const CANONICAL_TOOLS = [
  "shell",
  "file_write",
  "file_edit",
  "file_read",
  "file_delete",
  "web_request",
  "mcp_call",
  "code_exec",
  "package_install",
  "browser",
  "database",
  "delegate",
  "other",
] as const;
export type CanonicalTool = (typeof CANONICAL_TOOLS)[number];

/** §6.2.2; tool_name_native is required when tool_name is "other". */
export const ToolShape = {
  tool_name: z.enum(CANONICAL_TOOLS),
  tool_name_native: z.string().min(1).max(256).optional(),
  tool_input: z.record(z.string(), z.json()),
  artifacts: List(ArtifactSchema),
};

/** §6.2.3 */
export const TRUST_SOURCES = ["managed", "project", "user", "marketplace"] as const;
export const TrustSourceShape = {
  source: z.enum(TRUST_SOURCES),
  source_id: z.string().max(4096).optional(),
};

/** §6.2.4 */
export const ModifierEntrySchema = z.looseObject({
  modifier_id: Id,
  config_source: z.enum(["managed", "project", "user", "plugin"]),
  modified: z.boolean(),
});
const StringOrObject = z.union([Text, z.record(z.string(), z.json())]);
export const ModificationShape = {
  original_value: StringOrObject,
  modified_value: StringOrObject,
  was_modified: z.boolean(),
  modifier_chain: List(ModifierEntrySchema),
};

/** §6.2.5 (all SHOULD). */
export const ProvenanceShape = {
  source_prompt_modified: z.boolean().optional(),
  active_skill: z.string().max(4096).optional(),
  is_sub_agent: z.boolean().optional(),
  parent_session_id: Id.optional(),
  input_modifier_chain: List(ModifierEntrySchema).optional(),
};

export const DECISIONS = ["allow", "deny", "ask"] as const;
export type HookDecision = (typeof DECISIONS)[number];
export const SEVERITIES = ["info", "warning", "critical"] as const;
export const RESOLUTIONS = [
  "approved",
  "denied",
  "allow_always",
  "allow_similar",
  "deny_always",
  "deny_similar",
] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const InjectContextSchema = z.strictObject({
  position: z.enum(["prepend", "append", "system"]),
  content: Text,
});

/** §6.5 directives this engine emits; others a host may see from other engines pass through. */
export const DirectivesSchema = z.looseObject({
  inject_context: InjectContextSchema.optional(),
  permitted_tools: z.array(z.enum(CANONICAL_TOOLS)).max(CANONICAL_TOOLS.length).optional(),
  strip_hooks: z.boolean().optional(),
  /** PreOutputDeliver / PostToolUse: the text with secrets masked, for the host to use instead. */
  replacement_text: Text.optional(),
  /**
   * PreToolUse: the tool input the host runs instead of the agent's (Warden's containment: a
   * shell command wrapped in the coding-agent sandbox). Rendered where the host can rewrite a
   * call (Claude Code `updatedInput`); a host that cannot is answered `ask` instead.
   */
  updated_input: z.record(z.string(), z.unknown()).optional(),
});
export type Directives = z.infer<typeof DirectivesSchema>;

/** §6.5 */
export const VerdictSchema = z.looseObject({
  decision: z.enum(DECISIONS),
  category: z.string().min(1).max(64),
  severity: z.enum(SEVERITIES),
  confidence: z.number().min(0).max(1).optional(),
  source: z.string().min(1).max(64),
  artifacts: z.array(Text).max(HOOK_LIMITS.list).optional(),
  matched_rule_id: z.string().max(256).optional(),
  reasons: z.array(z.string().max(4096)).max(64).optional(),
  directives: DirectivesSchema.optional(),
  suggested_resolutions: z.array(z.enum(RESOLUTIONS)).max(RESOLUTIONS.length).optional(),
  /**
   * On an ask: the id of the engine's record of it. A PostAskResolution that would be
   * remembered names it (in `original_verdict`); docs/hooks-files.md "Approvals".
   */
  ask_id: z.string().max(128).optional(),
});
export type Verdict = z.infer<typeof VerdictSchema>;
