// The shape of a parsed tool contract: ToolClad `*.clad.toml` sections as strict zod
// schemas. Unknown keys are errors (a typo must never silently drop a constraint), and
// defaults are applied here so that two manifests that mean the same contract produce
// the same canonical bytes when signed.
import { z } from "zod";
import { RiskTierSchema, ToolCategorySchema } from "../contracts/index.js";

/** The built-in argument types; custom `[types.X]` are based on one of these. */
export const BUILTIN_TYPES = [
  "string",
  "integer",
  "number",
  "port",
  "boolean",
  "enum",
  "scope_target",
  "url",
  "path",
  "ip_address",
  "cidr",
  "duration",
  "regex_match",
  "credential_file",
  "json",
] as const;
export type BuiltinType = (typeof BUILTIN_TYPES)[number];

export function isBuiltinType(name: string): name is BuiltinType {
  return (BUILTIN_TYPES as readonly string[]).includes(name);
}

/** Tool names follow the MCP tool-name rules. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Argument and custom-type names: a leading underscore is reserved for executor variables. */
export const ARG_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Names usable in `[command.defaults]` and conditional names (may start with `_`). */
export const VAR_NAME_PATTERN = /^_?[A-Za-z][A-Za-z0-9_]{0,63}$/;
const HEADER_NAME_PATTERN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;

const ArgName = z.string().regex(ARG_NAME_PATTERN, "argument names match ^[A-Za-z][A-Za-z0-9_]{0,63}$");
const VarName = z.string().regex(VAR_NAME_PATTERN, "variable names match ^_?[A-Za-z][A-Za-z0-9_]{0,63}$");
const Text = (max: number) => z.string().min(1).max(max);
const Scalar = z.union([z.string().max(4096), z.number(), z.boolean()]);

export const DEFAULT_MAX_LENGTH = 4096;
export const DEFAULT_OUTPUT_MAX_BYTES = 1024 * 1024;

/** Constraints shared by `[args.X]` and `[types.X]`. */
const constraintShape = {
  description: Text(4096).optional(),
  allowed: z.array(z.string().min(1).max(256)).min(1).max(1024).optional(),
  pattern: z.string().min(1).max(1024).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  clamp: z.boolean().optional(),
  schemes: z
    .array(z.string().regex(/^[a-z][a-z0-9+.-]*$/))
    .min(1)
    .optional(),
  max_length: z.number().int().min(1).max(1_048_576).optional(),
};

export const ArgSpecSchema = z.strictObject({
  position: z.number().int().min(1).max(1024).optional(),
  required: z.boolean().default(false),
  type: z.string().min(1).max(64),
  default: Scalar.optional(),
  scope_check: z.boolean().default(false),
  /**
   * Lets a `string` / `regex_match` value start with '-' (or a dash look-alike). Off by
   * default: such a value would be read as an option by the program it reaches. Optional
   * without a default so that existing contracts keep their canonical (signed) bytes.
   */
  allow_leading_dash: z.boolean().optional(),
  /** ToolClad's explicit opt-in; Warden applies injection checks to every string type anyway. */
  sanitize: z.array(z.literal("injection")).optional(),
  /** The JSON Schema a `json` argument is validated against (only for `json`, only under [mcp]). */
  schema: z.record(z.string(), z.unknown()).optional(),
  ...constraintShape,
});
export type ArgSpec = z.infer<typeof ArgSpecSchema>;

export const CustomTypeSchema = z.strictObject({
  base: z.enum(BUILTIN_TYPES),
  ...constraintShape,
});
export type CustomType = z.infer<typeof CustomTypeSchema>;

const ConditionalSchema = z.strictObject({
  when: Text(1024),
  template: Text(4096).optional(),
  exec: z.array(z.string().max(4096)).min(1).max(256).optional(),
});

export const CommandSchema = z.strictObject({
  /** argv array, one element per argument: the preferred form. */
  exec: z.array(z.string().max(4096)).min(1).max(1024).optional(),
  /** A command line, tokenised once at load time (quotes group, no shell). */
  template: Text(16384).optional(),
  defaults: z.record(VarName, Scalar).optional(),
  mappings: z
    .record(
      ArgName,
      z.record(z.string().min(1).max(256), z.union([z.string().max(4096), z.array(z.string().max(4096))])),
    )
    .optional(),
  conditionals: z.record(VarName, ConditionalSchema).optional(),
});
export type CommandSpec = z.infer<typeof CommandSchema>;

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export const HttpSchema = z.strictObject({
  method: z.enum(HTTP_METHODS),
  url: Text(8192),
  headers: z.record(z.string().regex(HEADER_NAME_PATTERN), z.string().max(8192)).optional(),
  body_template: Text(65536).optional(),
  success_status: z.array(z.number().int().min(100).max(599)).min(1).default([200]),
  error_status: z.array(z.number().int().min(100).max(599)).optional(),
});
export type HttpSpec = z.infer<typeof HttpSchema>;

export const McpSchema = z.strictObject({
  server: Text(256),
  tool: Text(256),
  field_map: z.record(ArgName, Text(256)).optional(),
});
export type McpSpec = z.infer<typeof McpSchema>;

export const OUTPUT_FORMATS = ["text", "json", "jsonl", "csv", "xml"] as const;
export const OUTPUT_PARSERS = [
  "builtin:text",
  "builtin:json",
  "builtin:jsonl",
  "builtin:csv",
  "builtin:xml",
] as const;

/** A JSON Schema object; checked for compilability by the output validator at load time. */
const JsonSchemaObject = z.record(z.string(), z.json());

export const OutputSchema = z.strictObject({
  format: z.enum(OUTPUT_FORMATS).default("text"),
  parser: z.enum(OUTPUT_PARSERS).optional(),
  envelope: z.boolean().default(true),
  max_bytes: z
    .number()
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .default(DEFAULT_OUTPUT_MAX_BYTES),
  schema: JsonSchemaObject,
});
export type OutputSpec = z.infer<typeof OutputSchema>;

/** Deployment scope declared by the contract itself; a deployment may narrow it further. */
export const ScopeSchema = z.strictObject({
  allowed_cidrs: z.array(z.string().max(64)).max(4096).default([]),
  allowed_hosts: z.array(z.string().max(256)).max(4096).default([]),
  denied_cidrs: z.array(z.string().max(64)).max(4096).default([]),
  denied_hosts: z.array(z.string().max(256)).max(4096).default([]),
});
export type ScopeSpec = z.infer<typeof ScopeSchema>;

export const ToolSectionSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, "tool names match ^[A-Za-z0-9_-]{1,64}$"),
  version: Text(64),
  binary: Text(256).optional(),
  description: Text(4096),
  /** Only one-shot tools are executable; session and browser modes are refused at load. */
  mode: z.literal("oneshot").default("oneshot"),
  timeout_seconds: z.number().int().min(1).max(86_400).default(60),
  risk_tier: RiskTierSchema.default("low"),
  human_approval: z.boolean().default(false),
  /** Which backend runs the tool; when present it must name the section that exists. */
  dispatch: z.enum(["exec", "http", "mcp"]).optional(),
  /** DARE tool category. */
  category: ToolCategorySchema.optional(),
  cedar: z.strictObject({ resource: Text(256), action: Text(256) }).optional(),
  evidence: z
    .strictObject({
      output_dir: Text(1024).optional(),
      capture: z.boolean().default(true),
      hash: z.literal("sha256").default("sha256"),
    })
    .optional(),
});

/**
 * A secret the executor obtains just in time (OATS E8), per call, from a provider: `env`
 * (the variable named by `ref`), `file` (the file at `ref`), or a provider the deployment
 * registers under its own name (a vault). Secrets not declared here resolve from
 * `WARDEN_SECRET_<NAME>` as before.
 */
export const JitSecretSchema = z.strictObject({
  jit: z.literal(true),
  provider: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, "provider names match ^[a-z][a-z0-9-]{0,31}$"),
  ref: Text(1024),
});
export type JitSecretSpec = z.infer<typeof JitSecretSchema>;

/**
 * APAE claims of the tool's actions (docs/trust.md, Provenance): attached to the ECT the
 * runtime emits for each call. Required at the Regulated profile (provenance claims).
 */
export const ApaeToolSchema = z.strictObject({
  data_source: Text(1024),
  data_classification: Text(128),
  retention_days: z.number().int().min(0).max(36_500),
  transformations: z.array(Text(128)).max(64).default([]),
  /** The argument whose value is the action's target (`apae.target`, behaviour specs' forbidden_targets). */
  target_arg: ArgName.optional(),
  /** The tool is a checkpoint: its ECTs are `atd:checkpoint` (require_checkpoint_before). */
  checkpoint: z.boolean().default(false),
});
export type ApaeToolSpec = z.infer<typeof ApaeToolSchema>;

export const ToolContractSchema = z.strictObject({
  tool: ToolSectionSchema,
  args: z.record(ArgName, ArgSpecSchema).default({}),
  command: CommandSchema.optional(),
  http: HttpSchema.optional(),
  mcp: McpSchema.optional(),
  output: OutputSchema,
  types: z.record(ArgName, CustomTypeSchema).optional(),
  scope: ScopeSchema.optional(),
  /** Secrets (referenced as `{_secret:name}` in templates) obtained per call from a provider. */
  secrets: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/), JitSecretSchema).optional(),
  /** APAE provenance claims and checkpoint marking of the tool's ECTs. */
  apae: ApaeToolSchema.optional(),
});

/** A parsed, schema-valid tool contract: plain JSON data, the object that gets signed. */
export type ToolContract = z.infer<typeof ToolContractSchema>;
/** What a manifest may omit (defaults not yet applied). */
export type ToolContractInput = z.input<typeof ToolContractSchema>;

/** The `[types]`-only project file (`toolclad.toml`). */
export const ProjectTypesSchema = z.strictObject({ types: z.record(ArgName, CustomTypeSchema).default({}) });
