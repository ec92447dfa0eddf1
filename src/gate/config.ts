// The Gate's operator configuration (YAML or JSON): who the principals are, with their
// roles and capabilities, and how the session context behaves. Principals come from
// here and only here; a request names a principal but cannot describe one.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type ContextConfig, ContextConfigSchema } from "../context/index.js";
import { GateError, isPlainObject } from "../contracts/index.js";
import type { PrincipalConfig } from "./options.js";
import { SCREENING_MODES } from "./screening.js";

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/);

const CapabilitySchema = z.strictObject({
  toolClass: Id,
  actions: z.array(Id).optional(),
  constraints: z
    .strictObject({
      allowedPaths: z.array(z.string().min(1).max(1024)).optional(),
      allowedHosts: z.array(z.string().min(1).max(255)).optional(),
      allowedCommands: z.array(z.string().min(1).max(255)).optional(),
      allowedDatabases: z.array(z.string().min(1).max(255)).optional(),
      maxCallsPerMinute: z.number().int().positive().optional(),
    })
    .optional(),
});

const PrincipalSchema = z.strictObject({
  id: Id,
  roles: z.array(Id).default([]),
  capabilities: z.array(CapabilitySchema).optional(),
  maxCallsPerMinute: z.number().int().positive().optional(),
});

export const GateConfigSchema = z.strictObject({
  tenant: z.string().min(1).max(128).default("default"),
  environment: z.enum(["dev", "test", "prod"]).default("prod"),
  principals: z.array(PrincipalSchema).default([]),
  requireContract: z.boolean().default(false),
  /** Who names runs (GateOptions.runs): "caller" (legacy) or "runtime". */
  runs: z.enum(["caller", "runtime"]).optional(),
  context: ContextConfigSchema.optional(),
  approvals: z
    .strictObject({
      maxDeferred: z.number().int().min(1).max(10_000).default(16),
      /** Deferred calls one principal may have held at once (default: a quarter of maxDeferred). */
      maxDeferredPerPrincipal: z.number().int().min(1).max(10_000).optional(),
      /** Step-up requests pending at once (InProcessApprovals maxPending, default 64). */
      maxPending: z.number().int().min(1).max(100_000).optional(),
      /** Step-up requests one principal may have pending at once (default a quarter of maxPending). */
      maxPendingPerPrincipal: z.number().int().min(1).max(100_000).optional(),
    })
    .default({ maxDeferred: 16 }),
  /**
   * Screening of every reported result for instructions addressed to the agent
   * (docs/gate.md#output-screening): off | flag (default) | quarantine.
   */
  outputScreening: z
    .strictObject({
      instructions: z.enum(SCREENING_MODES).default("flag"),
      maxChars: z.number().int().min(1024).max(16_000_000).optional(),
    })
    .default({ instructions: "flag" }),
});
export type GateConfig = z.infer<typeof GateConfigSchema>;

export interface LoadedGateConfig {
  config: GateConfig;
  principals: Record<string, PrincipalConfig>;
  context: ContextConfig | undefined;
}

const MAX_CONFIG_BYTES = 1024 * 1024;

/** Parses a gate configuration object; throws ERR_GATE_CONFIG_INVALID naming the path at fault. */
export function parseGateConfig(input: unknown): LoadedGateConfig {
  const res = GateConfigSchema.safeParse(input ?? {});
  if (!res.success) {
    const issue = res.error.issues[0];
    throw new GateError(
      "ERR_GATE_CONFIG_INVALID",
      `gate config invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const principals: Record<string, PrincipalConfig> = Object.create(null);
  for (const p of res.data.principals) {
    if (principals[p.id])
      throw new GateError("ERR_GATE_CONFIG_INVALID", `principal ${p.id} is declared twice`);
    const pc: PrincipalConfig = { id: p.id, roles: p.roles };
    if (p.capabilities) pc.capabilities = p.capabilities as NonNullable<PrincipalConfig["capabilities"]>;
    if (p.maxCallsPerMinute !== undefined) pc.maxCallsPerMinute = p.maxCallsPerMinute;
    principals[p.id] = pc;
  }
  return { config: res.data, principals, context: res.data.context };
}

export function loadGateConfig(path: string): LoadedGateConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new GateError(
      "ERR_GATE_CONFIG_INVALID",
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code}`,
    );
  }
  if (text.length > MAX_CONFIG_BYTES)
    throw new GateError("ERR_GATE_CONFIG_INVALID", `${path} is larger than 1 MiB`);
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: 100, uniqueKeys: true, customTags: [] });
  } catch (err) {
    throw new GateError("ERR_GATE_CONFIG_INVALID", `${path}: ${(err as Error).message.split("\n")[0]}`);
  }
  return parseGateConfig(data);
}

/**
 * A gate configuration input with `requireContract: true` unless it states the member
 * itself. The sidecar and the CLI require a tool contract by default (a call without one
 * is denied `contract_required`); `requireContract: false` is the documented opt-out.
 * Anything that is not an object is returned as it is, for the schema to refuse.
 */
export function requireContractByDefault(gate: unknown): unknown {
  if (gate === undefined) return { requireContract: true };
  if (!isPlainObject(gate) || Object.hasOwn(gate, "requireContract")) return gate;
  return { ...gate, requireContract: true };
}

/**
 * A deployment configuration (sidecar, MCP gateway) whose `gate:` section requires
 * contracts by default: the schema first (its first issue named by path), then the gate
 * section. `invalid` turns a message into the caller's coded error.
 */
export function parseWithGateSection<T extends { gate: unknown }>(
  schema: z.ZodType<T>,
  input: unknown,
  what: string,
  invalid: (message: string) => Error,
): { config: T; gate: LoadedGateConfig } {
  const res = schema.safeParse(
    isPlainObject(input) ? { ...input, gate: requireContractByDefault(input.gate) } : input,
  );
  if (!res.success) {
    const issue = res.error.issues[0];
    throw invalid(
      `${what} config invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  try {
    return { config: res.data, gate: parseGateConfig(res.data.gate) };
  } catch (err) {
    throw invalid(`gate: ${(err as Error).message}`);
  }
}
