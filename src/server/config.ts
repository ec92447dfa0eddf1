// The sidecar's operator configuration (YAML or JSON, strict): where it listens, which
// policies, contracts, journal and keys it uses, who may call it, and its limits.
// Credentials are stored only as SHA-256 hashes of the bearer tokens; a token hash that
// appears twice (in particular as both an agent and an approver credential) is refused,
// so no credential can ever be both the party asking and the party approving.

import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { ConsoleConfigSchema } from "../console/index.js";
import { HookError, ServerError, SHA256_HASH_PATTERN } from "../contracts/index.js";
import { GateConfigSchema, type LoadedGateConfig, parseWithGateSection } from "../gate/index.js";
import { SourceTrustConfigSchema } from "../hooks/index.js";
import {
  McpLimitsSchema,
  McpUpstreamName,
  McpUpstreamSchema,
  SecretText,
  upstreamPaths,
} from "../mcp-gateway/index.js";
import { MemoryConfigSchema } from "../memory/index.js";
import {
  ApaeSectionSchema,
  parseApaeSection,
  type RuntimeApaeConfig,
  readConfigFile,
} from "../runtime/index.js";
import { TrustConfigSchema } from "../tools/index.js";
import { NotificationsConfigSchema } from "./notifications-config.js";
import { SandboxSection } from "./sandbox-config.js";
import { DriftSectionSchema, TelemetrySectionSchema } from "./telemetry-config.js";

const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/);
const PathText = z.string().min(1).max(4096);
const TokenHash = z.string().regex(SHA256_HASH_PATTERN, "a sha256:<64 lowercase hex> hash of the token");
const HostPattern = z.string().min(1).max(255);

const MAX_BYTES = 64 * 1024 * 1024;

const DatabaseConnection = z.discriminatedUnion("engine", [
  z.strictObject({ engine: z.literal("sqlite"), path: PathText }),
  z.strictObject({
    engine: z.literal("postgres"),
    url: SecretText,
    poolMax: z.number().int().min(1).max(100).default(4),
  }),
]);

/** One SQL statement a contract may run: the text is the operator's, the values are bound. */
const DatabaseStatement = z.strictObject({
  connection: Id,
  sql: z.string().min(1).max(65_536),
  /** Contract argument names bound in order to the placeholders (`?` / `$1`, `$2`, …). */
  params: z
    .array(z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/))
    .max(100)
    .default([]),
  /** The Gate action the call is classified as; the executor checks the statement class against it. */
  action: z.enum(["query", "mutate", "ddl"]).default("query"),
});

export const DatabaseSection = z.strictObject({
  connections: z.record(Id, DatabaseConnection),
  statements: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,127}$/), DatabaseStatement),
  maxRows: z.number().int().min(1).max(1_000_000).optional(),
  maxBytes: z.number().int().min(1).max(MAX_BYTES).optional(),
  maxTimeoutMs: z.number().int().min(1).max(600_000).optional(),
});

export const McpSection = z.strictObject({
  upstreams: z.record(McpUpstreamName, McpUpstreamSchema),
  /** Tool pin file (JSON, 0600); relative to this file. Absent: pins live in memory. */
  pins: PathText.optional(),
  ...McpLimitsSchema.shape,
  onFlagged: z.enum(["refuse", "pin"]).optional(),
});
export type McpSectionConfig = z.infer<typeof McpSection>;

/** How the sidecar's journal signs entries (src/journal OpenJournalOptions.signatureMode). */
export const JOURNAL_SIGNATURE_MODES = ["batch", "entry"] as const;
export type JournalSignatureMode = (typeof JOURNAL_SIGNATURE_MODES)[number];

export const SidecarConfigSchema = z.strictObject({
  host: z.string().min(1).max(255).default("127.0.0.1"),
  port: z.number().int().min(0).max(65_535).default(8787),
  tls: z.strictObject({ cert: PathText, key: PathText }).optional(),
  /** Policy files (.yaml/.yml/.json → YAML rules, .cedar → Cedar). */
  policies: z.array(PathText).min(1),
  /**
   * A shadow bundle (docs/policy.md#shadow-policies): evaluated beside `policies` on every
   * decision, deciding nothing; each disagreement is journaled as `warden.policy.shadow_diff`.
   */
  shadow: z
    .strictObject({
      policies: z.array(PathText).min(1),
      /** Decisions kept waiting for the shadow evaluation; beyond it they are dropped and journaled. */
      maxQueue: z.number().int().min(1).max(1_000_000).optional(),
    })
    .optional(),
  /** Notifiers told of step-ups and `notify` obligations; one-time approval links (docs/console.md#approvals-anywhere). */
  notifications: NotificationsConfigSchema.optional(),
  /** Directory of `*.clad.toml` tool contracts; only contract-named calls can be executed. */
  contracts: PathText.optional(),
  /**
   * The contract trust store (docs/contracts.md): with `mode: enforce` every contract
   * must carry a signature by one of `keys`; relative paths are relative to this file.
   */
  trust: TrustConfigSchema.optional(),
  journal: z.strictObject({
    path: PathText,
    /** Ed25519 private key file (mode 0600) that signs entries, heads and HITL records. */
    key: PathText,
    /** How long a write waits for another writer's lock before failing closed. */
    busyTimeoutMs: z.number().int().min(0).max(60_000).default(2000),
    /**
     * "batch" (default): one Ed25519 signature per committed group-commit batch over the
     * Merkle root of its entries; each entry carries the signature and its inclusion proof,
     * so it stays verifiable on its own with the public key alone. "entry": one signature
     * per entry. A sidecar's appends come from concurrent requests and are committed in
     * batches anyway, so batch signing removes most of the per-decision signing cost
     * (docs/http-api.md, Journal signatures). The verifier accepts both, also mixed.
     */
    signatures: z.enum(JOURNAL_SIGNATURE_MODES).default("batch"),
    /** Entry signatures only: worker threads that sign while the main thread serves (0 = inline). */
    signingWorkers: z.number().int().min(0).max(16).default(1),
  }),
  /**
   * Distributed mode (docs/distributed.md): the journal (one global chain), principal state
   * and capability use counts in a shared PostgreSQL database migrated by `warden db migrate`.
   * `url` may be `env:NAME` so the password stays out of this file. Absent: SQLite files.
   */
  store: z
    .strictObject({
      kind: z.literal("postgres"),
      url: z.string().min(1).max(4096),
      /** This replica's name in the journal (default host:pid). */
      node: Id.optional(),
      pool: z
        .strictObject({
          max: z.number().int().min(1).max(256).optional(),
          idleTimeoutMs: z.number().int().min(0).max(3_600_000).optional(),
          connectTimeoutMs: z.number().int().min(1).max(600_000).optional(),
          statementTimeoutMs: z.number().int().min(1).max(600_000).optional(),
          /** A statement waiting this long for a row lock fails (503) instead of stalling (default 5000). */
          lockTimeoutMs: z.number().int().min(1).max(600_000).optional(),
          /** A session idle inside a transaction this long (a paused replica) is ended by the server (default 5000). */
          idleInTransactionTimeoutMs: z.number().int().min(1).max(600_000).optional(),
        })
        .optional(),
      tls: z
        .strictObject({ mode: z.enum(["disable", "require", "verify-full"]), caFile: PathText.optional() })
        .optional(),
      /** Run leases (docs/distributed.md, runs across replicas): a run's owner renews; others adopt once expired. */
      runs: z
        .strictObject({
          leaseMs: z.number().int().min(200).max(600_000).optional(),
          marginMs: z.number().int().min(0).max(300_000).optional(),
        })
        .refine((r) => (r.marginMs ?? 5000) * 2 < (r.leaseMs ?? 20_000), {
          message: "marginMs (default 5000) must be less than half of leaseMs (default 20000)",
        })
        .optional(),
      /** How often a replica polls the shared approval queue when notifications are lost (ms). */
      approvalPollMs: z.number().int().min(50).max(60_000).optional(),
      /** The journal's chains (docs/distributed.md, "The journal"): one per replica (default) or one global. */
      journal: z
        .strictObject({
          chains: z.enum(["per-node", "global"]).optional(),
          /** Cross-chain checkpoint period (ms), per-node chains only. */
          checkpointMs: z.number().int().min(100).max(600_000).optional(),
        })
        .optional(),
    })
    .optional(),
  gate: GateConfigSchema.default(GateConfigSchema.parse({})),
  auth: z.strictObject({
    /** Agent credentials: the principal comes from the credential, never from a request body. */
    principals: z.array(z.strictObject({ id: Id, tokenSha256: TokenHash })).min(1),
    /** Operator credentials: decide approvals, read the journal and metrics. Never agents. */
    approvers: z
      .array(
        z.strictObject({
          id: Id,
          roles: z.array(Id).min(1).max(32),
          tokenSha256: TokenHash,
          /**
           * The approver's Ed25519 public keys (PEM). When any approver has keys, every
           * step-up verdict must be signed by its approver (docs/identity.md#signed-approvals).
           */
          publicKeys: z.array(z.string().min(1).max(4096)).min(1).max(8).optional(),
        }),
      )
      .default([]),
  }),
  /** Governed inter-agent messages (docs/identity.md#inter-agent-messages). */
  messaging: z
    .strictObject({
      /** Each agent principal's public signing (Ed25519) and agreement (X25519) keys, PEM. */
      identities: z.record(
        Id,
        z.strictObject({ signing: z.string().max(4096), agreement: z.string().max(4096) }),
      ),
      maxDepth: z.number().int().min(1).max(16).optional(),
      inbox: z
        .strictObject({
          maxPerRecipient: z.number().int().min(1).max(100_000).optional(),
          maxTotal: z.number().int().min(1).max(1_000_000).optional(),
          /** One sender's waiting messages in all inboxes (default: an eighth of maxTotal). */
          maxPerSender: z.number().int().min(1).max(1_000_000).optional(),
          /** One sender's waiting messages for one recipient (default: a quarter of maxPerRecipient). */
          maxPerSenderPerRecipient: z.number().int().min(1).max(100_000).optional(),
        })
        .optional(),
    })
    .optional(),
  /** The AARTS engines of the HTTP transport (docs/hooks.md "Remote"). */
  hooks: z
    .strictObject({
      /** Most host principals with an engine at once; a new one beyond it is refused (503). */
      maxEngines: z.number().int().min(1).max(100_000).default(64),
      /** Plugin, skill and MCP-server trust (docs/hooks.md "Source trust"). */
      sourceTrust: SourceTrustConfigSchema.optional(),
      /** The pin store of source keys and contents, shared by the engines (default: memory). */
      sourcePins: PathText.optional(),
    })
    .default({ maxEngines: 64 }),
  limits: z
    .strictObject({
      bodyBytes: z
        .number()
        .int()
        .min(256)
        .max(16 * 1024 * 1024)
        .default(1024 * 1024),
      jsonDepth: z.number().int().min(2).max(256).default(32),
      /** Requests per minute per credential (HTTP layer; the Gate's own per-principal limits still apply). */
      rateLimitPerMinute: z.number().int().min(1).max(1_000_000).default(600),
      /**
       * A request over the rate whose turn comes within this many ms is held until then
       * instead of refused (ERR_SERVER_RATE_LIMITED past it); 0 refuses at once.
       */
      rateLimitDelayMs: z.number().int().min(0).max(10_000).default(1000),
      /** Longest a blocked call (step-up, defer) may hold its request open. */
      requestTimeoutMs: z.number().int().min(1000).max(3_600_000).default(330_000),
      /**
       * Decisions (/v1/decide, POST /v1/runs) served at once, all principals together; the rest
       * wait in per-principal queues served round-robin, each active principal holding at most
       * an equal share of these slots (src/runtime fair-queue.ts).
       */
      maxConcurrent: z.number().int().min(1).max(10_000).default(64),
      /** One principal's decisions admitted at once, served or waiting (ERR_SERVER_BUSY, 429, beyond it). */
      maxInFlightPerPrincipal: z.number().int().min(1).max(100_000).default(128),
      /** Decisions waiting their turn, all principals together (the memory bound; the longest queue sheds). */
      maxQueued: z.number().int().min(1).max(1_000_000).default(1024),
    })
    .default({
      bodyBytes: 1024 * 1024,
      jsonDepth: 32,
      rateLimitPerMinute: 600,
      rateLimitDelayMs: 1000,
      requestTimeoutMs: 330_000,
      maxConcurrent: 64,
      maxInFlightPerPrincipal: 128,
      maxQueued: 1024,
    }),
  executors: z
    .strictObject({
      http: z
        .strictObject({
          /** Explicit opt-in for loopback tools (local services); private ranges stay blocked. */
          allowLoopback: z.boolean().default(false),
          allowedHosts: z.array(HostPattern).max(1024).default([]),
          deniedHosts: z.array(HostPattern).max(1024).default([]),
          maxTimeoutMs: z.number().int().min(1).max(600_000).default(30_000),
          maxResponseBytes: z
            .number()
            .int()
            .min(1)
            .max(64 * 1024 * 1024)
            .default(1024 * 1024),
        })
        .optional(),
      process: z
        .strictObject({
          workDir: PathText,
          trustedPrefixes: z.array(PathText).max(64).optional(),
          /** Environment variable names a process contract may receive. */
          env: z
            .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/))
            .max(256)
            .optional(),
          maxTimeoutMs: z.number().int().min(1).max(3_600_000).default(60_000),
          /** Sandbox tiers (per risk tier, per tool), limits, bwrap, container (docs/sandbox.md). */
          sandbox: SandboxSection.optional(),
        })
        .optional(),
      /** Contracts with `[mcp] server = "warden.file"` (tool read|list|write|delete) run here. */
      file: z
        .strictObject({
          root: PathText,
          maxReadBytes: z.number().int().min(1).max(MAX_BYTES).optional(),
          maxWriteBytes: z.number().int().min(1).max(MAX_BYTES).optional(),
          maxTimeoutMs: z.number().int().min(1).max(600_000).optional(),
        })
        .optional(),
      /** Contracts with `[mcp] server = "warden.database"` run the statement their `tool` names. */
      database: DatabaseSection.optional(),
      /** Contracts with `[mcp] server = "<upstream>"` call that declared upstream's tool. */
      mcp: McpSection.optional(),
      breaker: z
        .strictObject({
          failureThreshold: z.number().int().min(1).max(1000).default(5),
          coolDownMs: z.number().int().min(0).max(3_600_000).default(30_000),
        })
        .optional(),
    })
    .default({}),
  shutdown: z
    .strictObject({
      /** In-flight calls get this long to finish; blocked approvals are then cancelled (deny). */
      graceMs: z.number().int().min(0).max(600_000).default(10_000),
    })
    .default({ graceMs: 10_000 }),
  /**
   * Agent identity (docs/identity.md): `Authorization: AgentPin <jwt>` accepted as an agent
   * credential beside the bearer tokens; `principals` binds a verified agent id to the
   * principal it acts as (which must be one of auth.principals).
   */
  identity: z
    .strictObject({
      agentpin: z.strictObject({
        audience: z.string().min(1).max(253),
        trustBundle: PathText.optional(),
        online: z.boolean().default(false),
        pins: PathText.optional(),
        skewSeconds: z.number().int().min(0).max(300).default(60),
        maxTtlSeconds: z.number().int().min(1).max(86_400).default(86_400),
        principals: z.record(z.string().min(1).max(512), Id),
      }),
    })
    .optional(),
  /** APAE trust (docs/trust.md, In the sidecar); absent means off. */
  apae: ApaeSectionSchema.optional(),
  /** Semantic drift scoring (docs/policy.md#semantic-drift); absent means not scored. */
  drift: DriftSectionSchema.optional(),
  /** OTLP trace export and the OCSF/CEF streaming sink (docs/telemetry.md); absent means neither. */
  telemetry: TelemetrySectionSchema.optional(),
  /** The memory firewall (docs/memory.md); absent means off. `path` defaults to `<journal>.memory.db`. */
  memory: MemoryConfigSchema.extend({ path: PathText.optional() }).optional(),
  metrics: z
    .strictObject({
      /** Serve /metrics without an operator credential (default false). */
      public: z.boolean().default(false),
    })
    .default({ public: false }),
  /** The approval console under /console (docs/console.md); off unless `enabled: true`. */
  console: ConsoleConfigSchema.default(ConsoleConfigSchema.parse({})),
});
export type SidecarConfig = z.infer<typeof SidecarConfigSchema>;
export type SidecarConfigInput = z.input<typeof SidecarConfigSchema>;

export interface LoadedSidecarConfig {
  /** Parsed configuration with every path made absolute. */
  config: SidecarConfig;
  gate: LoadedGateConfig;
  /** Directory relative paths were resolved against. */
  baseDir: string;
  /** The `apae:` section as the runtime takes it (paths absolute); undefined when off. */
  apae?: RuntimeApaeConfig;
  /** The configuration file, when it was loaded from one (named in error messages). */
  source?: string;
}

/** The memory store's file: as configured, else beside the journal (memory for an in-memory journal). */
function memoryPath(c: SidecarConfig, abs: (p: string) => string): string {
  const p = c.memory?.path ?? (c.journal.path === ":memory:" ? ":memory:" : `${c.journal.path}.memory.db`);
  return p === ":memory:" ? p : abs(p);
}

function invalid(message: string): ServerError {
  return new ServerError("ERR_SERVER_CONFIG_INVALID", message);
}

type Executors = SidecarConfig["executors"];

/** Executor sections with absolute paths; a statement must name a declared connection. */
function executorPaths(e: Executors, abs: (p: string) => string): Executors {
  const out: Executors = { ...e };
  if (e.process) out.process = { ...e.process, workDir: abs(e.process.workDir) };
  if (e.file) out.file = { ...e.file, root: abs(e.file.root) };
  if (e.database) {
    const db = e.database;
    for (const [name, st] of Object.entries(db.statements)) {
      if (!Object.hasOwn(db.connections, st.connection))
        throw invalid(`executors.database.statements.${name}: connection ${st.connection} is not declared`);
    }
    const connections = Object.fromEntries(
      Object.entries(db.connections).map(([n, c]) => [
        n,
        c.engine === "sqlite" ? { ...c, path: abs(c.path) } : c,
      ]),
    );
    out.database = { ...db, connections };
  }
  if (e.mcp) {
    const upstreams = upstreamPaths(e.mcp.upstreams, abs);
    out.mcp = { ...e.mcp, upstreams, ...(e.mcp.pins !== undefined ? { pins: abs(e.mcp.pins) } : {}) };
  }
  return out;
}

type AgentPinSection = NonNullable<SidecarConfig["identity"]>["agentpin"];

/** Absolute paths; every bound principal must be a configured agent principal. */
function agentPinPaths(
  a: AgentPinSection,
  abs: (p: string) => string,
  gate: LoadedGateConfig,
): AgentPinSection {
  for (const [agent, principal] of Object.entries(a.principals)) {
    if (!Object.hasOwn(gate.principals, principal)) {
      throw invalid(
        `identity.agentpin.principals: ${agent} is bound to ${principal}, which is not a principal`,
      );
    }
  }
  if (a.trustBundle === undefined && !a.online)
    throw invalid("identity.agentpin needs trustBundle or online: true");
  return {
    ...a,
    ...(a.trustBundle !== undefined ? { trustBundle: abs(a.trustBundle) } : {}),
    ...(a.pins !== undefined ? { pins: abs(a.pins) } : {}),
  };
}

/**
 * Validates a configuration object. Relative paths are resolved against `baseDir`
 * (the configuration file's directory). Throws ERR_SERVER_CONFIG_INVALID naming the field.
 */
export function parseSidecarConfig(input: unknown, baseDir: string = process.cwd()): LoadedSidecarConfig {
  const { config: c, gate } = parseWithGateSection(SidecarConfigSchema, input ?? {}, "sidecar", invalid);

  const seen = new Map<string, string>();
  const claim = (hash: string, who: string) => {
    const prior = seen.get(hash);
    if (prior !== undefined) {
      throw invalid(
        `auth: ${who} reuses the token hash of ${prior}; every credential must be distinct, and an agent credential can never approve`,
      );
    }
    seen.set(hash, who);
  };
  for (const p of c.auth.principals) {
    if (!Object.hasOwn(gate.principals, p.id)) {
      throw invalid(`auth.principals: ${p.id} is not a principal in gate.principals`);
    }
    claim(p.tokenSha256, `principal ${p.id}`);
  }
  for (const a of c.auth.approvers) {
    if (Object.hasOwn(gate.principals, a.id)) {
      throw invalid(`auth.approvers: ${a.id} is an agent principal; approvers must be separate identities`);
    }
    claim(a.tokenSha256, `approver ${a.id}`);
  }

  const abs = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
  const config: SidecarConfig = {
    ...c,
    policies: c.policies.map(abs),
    ...(c.shadow !== undefined ? { shadow: { ...c.shadow, policies: c.shadow.policies.map(abs) } } : {}),
    journal: { ...c.journal, path: abs(c.journal.path), key: abs(c.journal.key) },
    ...(c.memory !== undefined ? { memory: { ...c.memory, path: memoryPath(c, abs) } } : {}),
  };
  if (c.tls) config.tls = { cert: abs(c.tls.cert), key: abs(c.tls.key) };
  if (c.store?.tls?.caFile !== undefined)
    config.store = { ...c.store, tls: { ...c.store.tls, caFile: abs(c.store.tls.caFile) } };
  if (c.contracts !== undefined) config.contracts = abs(c.contracts);
  if (c.hooks.sourcePins !== undefined) config.hooks = { ...c.hooks, sourcePins: abs(c.hooks.sourcePins) };
  if (c.identity !== undefined) config.identity = { agentpin: agentPinPaths(c.identity.agentpin, abs, gate) };
  if (c.telemetry?.sink?.file !== undefined)
    config.telemetry = { ...c.telemetry, sink: { ...c.telemetry.sink, file: abs(c.telemetry.sink.file) } };
  if (c.drift?.embedder.kind === "onnx")
    config.drift = { ...c.drift, embedder: { kind: "onnx", modelDir: abs(c.drift.embedder.modelDir) } };
  config.executors = executorPaths(c.executors, abs);
  let apae: RuntimeApaeConfig | undefined;
  try {
    apae = c.apae === undefined ? undefined : parseApaeSection(c.apae, baseDir);
  } catch (err) {
    throw invalid(`apae: ${(err as Error).message}`);
  }
  return { config, gate, baseDir, ...(apae !== undefined ? { apae } : {}) };
}

/** Reads a YAML or JSON configuration file; relative paths inside it are relative to the file. */
export function loadSidecarConfig(path: string): LoadedSidecarConfig {
  const data = readConfigFile(path, invalid);
  return { ...parseSidecarConfig(data, dirname(resolve(path))), source: path };
}

/**
 * `hooks.sourcePins` beside the shared store (store.kind postgres): refused, since the pins are
 * the table every replica shares. Checked before anything is opened, and again by the route.
 */
export function refuseLocalSourcePins(sourcePins: string | undefined): void {
  if (sourcePins === undefined) return;
  throw new HookError(
    "ERR_HOOK_CONFIG_INVALID",
    "hooks.sourcePins is a node-local file: with store.kind postgres the pins are shared in the database",
  );
}
