// The gateway's operator configuration (YAML or JSON, strict): the upstream MCP servers
// it fronts, the policies, journal and principals it governs them with, where tool pins
// live, what happens to a tool whose definition carries hidden instructions, the limits,
// and who may connect: one configured principal over stdio, bearer tokens (stored as
// SHA-256 hashes) or AgentPin credentials over Streamable HTTP.
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { McpGatewayError, SHA256_HASH_PATTERN } from "../contracts/index.js";
import { GateConfigSchema, type LoadedGateConfig, parseWithGateSection } from "../gate/index.js";
import { readConfigFile } from "../runtime/index.js";
import { McpLimitsSchema, McpUpstreamName, McpUpstreamSchema, upstreamPaths } from "./upstreams.js";

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/);
const PathText = z.string().min(1).max(4096);

export const GatewayConfigSchema = z.strictObject({
  /** Policy files (.yaml/.yml/.json → YAML rules, .cedar → Cedar). */
  policies: z.array(PathText).min(1),
  /** A shadow bundle judged beside `policies`, deciding nothing (docs/policy.md#shadow-policies). */
  shadow: z
    .strictObject({
      policies: z.array(PathText).min(1),
      maxQueue: z.number().int().min(1).max(1_000_000).optional(),
    })
    .optional(),
  journal: z.strictObject({
    path: PathText,
    /** Ed25519 private key file (mode 0600); `warden keys generate` writes one. */
    key: PathText,
  }),
  gate: GateConfigSchema.default(GateConfigSchema.parse({})),
  upstreams: z
    .record(McpUpstreamName, McpUpstreamSchema)
    .refine((u) => Object.keys(u).length > 0, "at least one upstream"),
  /** Tool pin file (JSON, 0600): definitions approved so far. `warden mcp approve` updates it. */
  pins: PathText,
  /**
   * A tool whose definition carries hidden instructions: `refuse` (default) hides and
   * refuses it until `warden mcp approve`; `policy` serves it with risk tier `critical`
   * so policy rules decide (`match: { riskTier: critical }`).
   */
  flagged: z.enum(["refuse", "policy"]).default("refuse"),
  limits: McpLimitsSchema.default({}),
  /** The principal of the one stdio session (`warden mcp serve --stdio`). */
  stdio: z.strictObject({ principal: Id }).optional(),
  http: z
    .strictObject({
      host: z.string().min(1).max(255).default("127.0.0.1"),
      port: z.number().int().min(0).max(65_535).default(8788),
      path: z
        .string()
        .regex(/^\/[A-Za-z0-9/_-]{0,127}$/)
        .default("/mcp"),
      /** Agent credentials: the principal comes from the credential, never from a message. */
      principals: z
        .array(z.strictObject({ id: Id, tokenSha256: z.string().regex(SHA256_HASH_PATTERN) }))
        .default([]),
      /** Most concurrent sessions; a new one beyond it is refused. */
      maxSessions: z.number().int().min(1).max(100_000).default(256),
      /**
       * Most concurrent sessions of one principal (ERR_MCP_SESSION_LIMIT, 429, beyond it), so one
       * credential never takes the shared pool. Default: a quarter of maxSessions (at least 1).
       */
      maxSessionsPerPrincipal: z.number().int().min(1).max(100_000).optional(),
      /**
       * Requests (POST) of one principal admitted at once — being served or waiting their turn
       * in its fair queue — all its sessions together (ERR_MCP_BUSY, 429, beyond it).
       */
      maxInFlightPerPrincipal: z.number().int().min(1).max(10_000).default(16),
      /**
       * Requests served at once, all principals together (Gate, journal, upstream call); the
       * rest wait in per-principal queues served round-robin, each active principal holding
       * at most an equal share of these slots.
       */
      maxConcurrent: z.number().int().min(1).max(10_000).default(2),
      /** Requests waiting their turn, all principals together (the memory bound; the longest queue sheds). */
      maxQueued: z.number().int().min(1).max(100_000).default(256),
      /** A session idle this long is closed (its run ended) when room is needed for a new one. */
      sessionIdleMs: z.number().int().min(1000).max(86_400_000).default(1_800_000),
      /** Largest request body (bytes). */
      maxBodyBytes: z
        .number()
        .int()
        .min(1024)
        .max(16 * 1024 * 1024)
        .default(1024 * 1024),
    })
    .optional(),
  /**
   * The memory firewall's tools (memory_write/read/search/delete) served beside the
   * upstream ones (docs/mcp-gateway.md); absent means off. Its keys are the memory
   * configuration (docs/memory.md), validated strictly when the gateway opens; `path`
   * defaults to `<journal>.memory.db`.
   */
  memory: z.record(z.string(), z.unknown()).optional(),
  /** AgentPin credentials accepted over HTTP (the sidecar's `identity.agentpin`). */
  identity: z
    .strictObject({
      agentpin: z.strictObject({
        audience: z.string().min(1).max(253),
        trustBundle: PathText.optional(),
        pins: PathText.optional(),
        skewSeconds: z.number().int().min(0).max(300).default(60),
        maxTtlSeconds: z.number().int().min(1).max(86_400).default(86_400),
        principals: z.record(z.string().min(1).max(512), Id),
      }),
    })
    .optional(),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof GatewayConfigSchema>;

export interface LoadedGatewayConfig {
  config: GatewayConfig;
  gate: LoadedGateConfig;
  baseDir: string;
}

function invalid(message: string): McpGatewayError {
  return new McpGatewayError("ERR_MCP_CONFIG_INVALID", message);
}

function checkPrincipals(c: GatewayConfig, gate: LoadedGateConfig): void {
  const known = (id: string, where: string) => {
    if (!Object.hasOwn(gate.principals, id))
      throw invalid(`${where}: ${id} is not a principal in gate.principals`);
  };
  if (c.stdio) known(c.stdio.principal, "stdio.principal");
  const seen = new Set<string>();
  for (const p of c.http?.principals ?? []) {
    known(p.id, "http.principals");
    if (seen.has(p.tokenSha256))
      throw invalid(`http.principals: ${p.id} reuses another credential's token hash`);
    seen.add(p.tokenSha256);
  }
  for (const [agent, id] of Object.entries(c.identity?.agentpin.principals ?? {}))
    known(id, `identity.agentpin.principals.${agent}`);
  if (c.identity?.agentpin && c.identity.agentpin.trustBundle === undefined)
    throw invalid("identity.agentpin needs a trustBundle");
}

/** Validates a configuration; relative paths are resolved against `baseDir`. */
export function parseGatewayConfig(input: unknown, baseDir: string = process.cwd()): LoadedGatewayConfig {
  const { config: c, gate } = parseWithGateSection(GatewayConfigSchema, input, "gateway", invalid);
  if (!gate.config.requireContract)
    throw invalid("gate.requireContract must stay true: every upstream tool is a contract");
  checkPrincipals(c, gate);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  const a = c.identity?.agentpin;
  const journalPath = abs(c.journal.path);
  const memPath = c.memory?.path ?? `${journalPath}.memory.db`;
  const config: GatewayConfig = {
    ...c,
    policies: c.policies.map(abs),
    ...(c.shadow !== undefined ? { shadow: { ...c.shadow, policies: c.shadow.policies.map(abs) } } : {}),
    journal: { path: journalPath, key: abs(c.journal.key) },
    ...(c.memory !== undefined
      ? {
          memory: {
            ...c.memory,
            path: typeof memPath === "string" && memPath !== ":memory:" ? abs(memPath) : memPath,
          },
        }
      : {}),
    pins: abs(c.pins),
    upstreams: upstreamPaths(c.upstreams, abs),
    ...(a !== undefined
      ? {
          identity: {
            agentpin: {
              ...a,
              ...(a.trustBundle !== undefined ? { trustBundle: abs(a.trustBundle) } : {}),
              ...(a.pins !== undefined ? { pins: abs(a.pins) } : {}),
            },
          },
        }
      : {}),
  };
  return { config, gate, baseDir };
}

export function loadGatewayConfig(path: string): LoadedGatewayConfig {
  const data = readConfigFile(path, invalid);
  return parseGatewayConfig(data, dirname(resolve(path)));
}
