// The MCP gateway's core, independent of any transport: it composes the runtime (one
// composition root: policy, journal, Gate, the MCP executor over the declared upstreams),
// keeps the catalog of what it serves, and opens a governed session per client. Every
// tools/call, resources/read and prompts/get becomes a Gate request in the session's run
// (principal from the session's credential), journaled before anything reaches an
// upstream, executed only with the Gate's ticket, and its result recorded (taint `mcp`
// with the upstream as origin) before the client sees it.
import { existsSync } from "node:fs";
import { type AgentIdentityFacts, McpGatewayError } from "../contracts/index.js";
import { type KeyPair, keyTypeOf, loadPrivateKeyFile } from "../crypto/index.js";
import type { McpExecutor } from "../executors/index.js";
import type { ContractLookup } from "../gate/index.js";
import { composeRuntime, type Runtime, type RuntimeConfig } from "../runtime/index.js";
import type { CompiledTool, ToolClassification } from "../tools/index.js";
import {
  discoverPrompts,
  discoverTools,
  GATEWAY_ACTIONS,
  type LocalEntry,
  type PromptEntry,
  type Refusal,
  resourceContract,
  type ToolEntry,
} from "./catalog.js";
import type { LoadedGatewayConfig } from "./config.js";
import type { LocalToolProvider } from "./providers.js";
import { GatewaySession } from "./session.js";
import { runtimeMcpConfig } from "./upstreams.js";
import { canEverAllow } from "./visibility.js";

export interface GatewayOptions {
  /**
   * Tools served beside the upstream ones (providers.ts); a function is called once with
   * the composed runtime (a provider that governs through it, e.g. the memory firewall).
   */
  providers?: readonly LocalToolProvider[] | ((runtime: Runtime) => readonly LocalToolProvider[]);
  clock?: () => number;
}

function loadKey(path: string): KeyPair {
  if (!existsSync(path))
    throw new McpGatewayError(
      "ERR_MCP_CONFIG_INVALID",
      `journal key ${path} does not exist (warden keys generate)`,
    );
  const pair = loadPrivateKeyFile(path);
  if (keyTypeOf(pair.privateKey) !== "ed25519")
    throw new McpGatewayError("ERR_MCP_CONFIG_INVALID", `journal key ${path} is not an Ed25519 key`);
  return pair;
}

export function gatewayRuntimeConfig(
  loaded: LoadedGatewayConfig,
  signer: KeyPair,
  hooks: { lookup: ContractLookup; classify: (tool: CompiledTool) => ToolClassification },
): RuntimeConfig {
  const c = loaded.config;
  const g = loaded.gate;
  return {
    policy: c.policies,
    ...(c.shadow !== undefined
      ? {
          shadow: {
            policy: c.shadow.policies,
            ...(c.shadow.maxQueue !== undefined ? { maxQueue: c.shadow.maxQueue } : {}),
          },
        }
      : {}),
    journal: { path: c.journal.path, signer },
    gate: {
      principals: g.principals,
      ...(g.context !== undefined ? { context: g.context } : {}),
      tenantId: g.config.tenant,
      environment: g.config.environment,
      requireContract: true,
      runs: "runtime",
      approvals: g.config.approvals,
      outputScreening: g.config.outputScreening,
      contractLookup: () => hooks.lookup,
      classify: hooks.classify,
    },
    executors: {
      mcp: runtimeMcpConfig(
        c.upstreams,
        { ...c.limits, pins: c.pins, onFlagged: c.flagged === "policy" ? "pin" : "refuse" },
        "upstreams",
      ),
    },
    ...(c.identity !== undefined ? { identity: { agentpin: c.identity.agentpin } } : {}),
  };
}

export class Gateway {
  readonly loaded: LoadedGatewayConfig;
  readonly runtime: Runtime;
  readonly executor: McpExecutor;
  readonly #providers: readonly LocalToolProvider[];
  readonly #contracts: Map<string, CompiledTool>;
  readonly #classes: WeakMap<CompiledTool, ToolClassification>;
  #tools = new Map<string, ToolEntry>();
  #locals = new Map<string, LocalEntry>();
  #prompts = new Map<string, PromptEntry>();
  #refused: Refusal[] = [];
  #refreshing: Promise<void> | undefined;

  private constructor(
    loaded: LoadedGatewayConfig,
    runtime: Runtime,
    parts: {
      providers: readonly LocalToolProvider[];
      contracts: Map<string, CompiledTool>;
      classes: WeakMap<CompiledTool, ToolClassification>;
    },
  ) {
    this.loaded = loaded;
    this.runtime = runtime;
    const ex = runtime.executors.mcp;
    if (ex === undefined) throw new Error("the runtime has no MCP executor");
    this.executor = ex;
    this.#providers = parts.providers;
    this.#contracts = parts.contracts;
    this.#classes = parts.classes;
  }

  /** Composes the runtime and discovers the upstream tools (pinning them on first sight). */
  static async open(loaded: LoadedGatewayConfig, options: GatewayOptions = {}): Promise<Gateway> {
    const contracts = new Map<string, CompiledTool>();
    const classes = new WeakMap<CompiledTool, ToolClassification>();
    const classify = (tool: CompiledTool): ToolClassification => classes.get(tool) ?? GATEWAY_ACTIONS.call;
    const runtime = await composeRuntime(
      gatewayRuntimeConfig(loaded, loadKey(loaded.config.journal.key), { lookup: contracts, classify }),
      options.clock !== undefined ? { clock: options.clock } : {},
    );
    let gw: Gateway;
    let providers: readonly LocalToolProvider[] = [];
    try {
      const p = options.providers ?? [];
      providers = typeof p === "function" ? p(runtime) : p;
      gw = new Gateway(loaded, runtime, { providers, contracts, classes });
      gw.#installFixed();
      await gw.refresh();
    } catch (err) {
      for (const p of providers) await p.close?.();
      await runtime.close();
      throw err;
    }
    return gw;
  }

  /** Resource-read and prompt-get contracts per upstream, and the local providers' tools. */
  #installFixed(): void {
    for (const server of Object.keys(this.loaded.config.upstreams)) {
      const read = resourceContract(server);
      this.#contracts.set(read.name, read);
      this.#classes.set(read, GATEWAY_ACTIONS.read);
    }
    for (const provider of this.#providers) {
      for (const t of provider.tools()) {
        const name = t.tool.name;
        if (name.includes("__") || this.#contracts.has(name) || this.#locals.has(name))
          throw new McpGatewayError(
            "ERR_MCP_CONFIG_INVALID",
            `local tool ${name} (${provider.name}) collides or contains "__"`,
          );
        this.#contracts.set(name, t.tool);
        this.#classes.set(t.tool, t.classification);
        this.#locals.set(name, {
          kind: "local",
          exposed: name,
          provider,
          tool: t.tool,
          classification: t.classification,
          description: t.tool.contract.tool.description,
          schema: t.inputSchema ?? argsSchema(t.tool),
        });
      }
    }
  }

  /** Re-lists every upstream: new tools are pinned, changed or flagged ones leave the catalog. */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const servers = Object.keys(this.loaded.config.upstreams);
        const { tools, refused } = await discoverTools(this.executor, servers, this.loaded.config.flagged);
        const next = new Map<string, ToolEntry>();
        for (const t of tools) {
          const clash =
            next.has(t.exposed) ||
            this.#locals.has(t.exposed) ||
            (this.#contracts.has(t.exposed) && !this.#tools.has(t.exposed));
          if (clash)
            refused.push({
              server: t.server,
              tool: t.info.name,
              code: "ERR_EXEC_MCP_TOOL_UNKNOWN",
              message: `name ${t.exposed} is already taken`,
            });
          else next.set(t.exposed, t);
        }
        for (const name of this.#tools.keys()) this.#contracts.delete(name);
        for (const [name, t] of next) {
          this.#contracts.set(name, t.tool);
          this.#classes.set(t.tool, GATEWAY_ACTIONS.call);
        }
        this.#tools = next;
        this.#refused = refused;
        const { prompts, refused: promptsRefused } = await discoverPrompts(this.executor, servers);
        this.#refused = [...refused, ...promptsRefused];
        for (const name of this.#prompts.keys()) this.#contracts.delete(name);
        this.#prompts = new Map();
        for (const p of prompts) {
          if (this.#contracts.has(p.exposed)) continue;
          this.#prompts.set(p.exposed, p);
          this.#contracts.set(p.exposed, p.tool);
          this.#classes.set(p.tool, GATEWAY_ACTIONS.prompt);
        }
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  get refused(): readonly Refusal[] {
    return this.#refused;
  }

  tool(name: string): ToolEntry | undefined {
    return this.#tools.get(name);
  }

  local(name: string): LocalEntry | undefined {
    return this.#locals.get(name);
  }

  /** The upstream prompts as of the last refresh. */
  async prompts(): Promise<PromptEntry[]> {
    await this.refresh();
    return [...this.#prompts.values()];
  }

  classification(tool: CompiledTool): ToolClassification {
    return this.#classes.get(tool) ?? GATEWAY_ACTIONS.call;
  }

  contract(name: string): CompiledTool | undefined {
    return this.#contracts.get(name);
  }

  /** Whether the principal's policy can ever allow this contract (visibility.ts). */
  visible(principalId: string, tool: CompiledTool): boolean {
    const p = this.loaded.gate.principals[principalId];
    if (p === undefined) return false;
    const classification = this.#classes.get(tool) ?? GATEWAY_ACTIONS.call;
    return canEverAllow(this.runtime.policy, { principalId, roles: p.roles, tool, classification });
  }

  /** Tools in the catalog the principal can see. */
  toolsFor(principalId: string): (ToolEntry | LocalEntry)[] {
    return [...this.#tools.values(), ...this.#locals.values()].filter((t) =>
      this.visible(principalId, t.tool),
    );
  }

  /** A governed session for an authenticated principal: a new run bound to it. */
  async session(principalId: string, identity?: AgentIdentityFacts): Promise<GatewaySession> {
    if (!Object.hasOwn(this.loaded.gate.principals, principalId))
      throw new McpGatewayError("ERR_MCP_AUTH", `${principalId} is not a configured principal`);
    const run = await this.runtime.startRun(principalId);
    return new GatewaySession(this, principalId, run.runId, identity);
  }

  async close(): Promise<void> {
    try {
      for (const p of this.#providers) await p.close?.();
    } finally {
      await this.runtime.close();
    }
  }
}

/** A JSON Schema for a contract's arguments (local tools without their own). */
function argsSchema(tool: CompiledTool): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, arg] of tool.args) {
    const base = arg.base;
    properties[name] = {
      type:
        base === "integer"
          ? "integer"
          : base === "number"
            ? "number"
            : base === "boolean"
              ? "boolean"
              : "string",
    };
    if (arg.required) required.push(name);
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}
