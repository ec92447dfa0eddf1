// The AARTS security engine: `createEngine(config)` composes a runtime through the one
// composition root (or takes one), and `engine.handle(event)` answers every event with a
// verdict — never a throw. Order of one event: handshake check → parse → evaluation under
// the blocking mode's timeout → the failure policy on any fault → the verdict journaled
// (durable) with the event's hash → state saved → answer.
import { existsSync, mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HookError, sha256Hex, sha256Of, WardenError } from "../contracts/index.js";
import { generateKeyPair, type KeyPair } from "../crypto/index.js";
import { defaultEventTypes } from "../journal/index.js";
import { composeRuntime, type Runtime } from "../runtime/index.js";
import { PinStore } from "../tools/index.js";
import type { CodingProfileConfig } from "./coding-profile.js";
import { type ContainmentConfig, containVerdict, sessionKeyOf } from "./contain.js";
import { gateFor, openGate } from "./contain-gate.js";
import { drainEgress } from "./contain-journal.js";
import { dispatch } from "./dispatch.js";
import {
  HOOK_EGRESS_EVENT,
  HOOK_HANDSHAKE_EVENT,
  HOOK_VERDICT_EVENT,
  registerHookEventTypes,
} from "./events.js";
import { type FailurePolicy, failureVerdict, withTimeout } from "./failure.js";
import {
  AARTS_VERSION,
  type Verdict,
  VersionCheckRequestSchema,
  type VersionCheckResponse,
} from "./schema-base.js";
import { parseHookEvent } from "./schema-parse.js";
import { HOOK_TABLE, type HookEvent, type HookPoint, SESSION_LEVEL_HOOKS } from "./schema-points.js";
import { askKeyFor } from "./secret-file.js";
import { SourceTrust, type SourceTrustConfig } from "./source-trust.js";
import { type EngineState, emptyState, loadState, saveState } from "./state.js";

export const ENGINE_ID = "warden";
export const ENGINE_VERSION = "0.1.0";

export interface EngineConfig {
  /** Policy files; default: the host-tools preset (policies/host-tools.yaml). */
  policy?: readonly string[];
  /** A shadow bundle judged beside `policy`, deciding nothing (docs/policy.md#shadow-policies). */
  shadowPolicy?: readonly string[];
  /** The journal; default an in-memory one with a fresh key. */
  journal?: { path: string; signer?: KeyPair };
  /** A runtime composed elsewhere (the sidecar); the engine then neither builds nor closes one. */
  runtime?: Runtime;
  /** A JSON state file shared by invocations (hosts that start a process per hook). */
  statePath?: string;
  /**
   * An in-memory state the caller owns and persists (the hook daemon: one state shared by
   * its engines, saved by the daemon); used instead of loading `statePath`.
   */
  state?: EngineState;
  /**
   * Warden's hooks state directory when `state` is given instead of `statePath` (the hook
   * daemon): never readable by the file tools, and where the ask key lives.
   */
  stateDir?: string;
  /** The workspace root: file writes outside it are refused by the preset. */
  workspace?: string;
  failure?: FailurePolicy;
  /** §9.1 timeouts: tool hooks 5 s, session-level hooks 10 s by default. */
  timeouts?: { toolMs?: number; sessionMs?: number };
  /** Recorded in the handshake entry ("in-process", "stdio", "http"). */
  transport?: string;
  /**
   * The authenticated principal every event acts as (the HTTP transport). Its Gate runs are
   * started by the runtime (`runs: "runtime"`), never named by the engine. Default: the
   * host's own principal `host:<host_id>` and engine-named runs.
   */
  principal?: string;
  clock?: () => number;
  /** Source trust for plugins, skills and MCP servers (docs/hooks.md "Source trust"). */
  sourceTrust?: SourceTrustConfig;
  /**
   * The pin store of source keys and contents (trust on first use): a file path, or a store
   * shared by several engines (the sidecar's); default in memory. Refused when `runtime` is
   * distributed (its `hookSourcePins`: the pins every replica shares are used instead).
   */
  sourcePins?: string | PinStore;
  /** The coding-agent profile's operator additions (docs/hooks-containment.md). */
  profile?: Partial<CodingProfileConfig>;
  /**
   * Shell calls the policy allows run contained (the directive `updated_input`). Where
   * containment is unavailable: `auto` (default) asks, `required` denies. There is no "off".
   */
  containment?: "auto" | "required";
  /** Warden's hooks state directory (egress journals; invisible in the sandbox); default: beside statePath. */
  hooksDir?: string;
  /** bwrap binary for containment (default /usr/bin/bwrap or /bin/bwrap). */
  bwrap?: string;
}

export interface Engine {
  readonly engineId: string;
  readonly runtime: Runtime;
  /**
   * §4.2; until a compatible check, every event is refused (ERR_HOOK_HANDSHAKE_REQUIRED).
   * `selfCheck`: the engine's own process checks its own constant version (a one-shot
   * host hook): a compatible result is not journaled, it would say nothing an entry of
   * every event does not (an incompatible one is).
   */
  versionCheck(request: unknown, options?: { selfCheck?: boolean }): Promise<VersionCheckResponse>;
  handle(event: unknown): Promise<Verdict>;
  close(): Promise<void>;
}

/** Versions this engine speaks: the major "1" and the draft "0.x" hosts put in envelopes. */
export function supportsVersion(v: string): boolean {
  return /^(1(\.\d+){0,2}|0\.\d+(\.\d+)?)$/.test(v);
}

/** The host-tools preset shipped with the package. */
export function hostToolsPolicyPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, "policies", "host-tools.yaml");
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  throw new HookError("ERR_HOOK_CONFIG_INVALID", "policies/host-tools.yaml not found beside the package");
}

async function runtimeFor(config: EngineConfig): Promise<Runtime> {
  if (config.runtime) return config.runtime;
  const signer = config.journal?.signer ?? generateKeyPair("ed25519");
  return composeRuntime(
    {
      policy: config.policy ?? [hostToolsPolicyPath()],
      ...(config.shadowPolicy !== undefined ? { shadow: { policy: config.shadowPolicy } } : {}),
      journal: { path: config.journal?.path ?? ":memory:", signer },
      // One process per host event on one journal: the bundle is journaled when it changed;
      // the shell and file facts at false/"" are left out of decision entries (docs/hooks.md#journal).
      gate: {
        principals: (id) => ({ id, roles: [] }),
        runs: "caller",
        bundleJournal: "change",
        journalDefaults: "omitted",
      },
    },
    config.clock ? { clock: config.clock } : {},
  );
}

function eventHash(raw: unknown): string {
  try {
    return sha256Of(raw);
  } catch {
    return sha256Hex(String(raw));
  }
}

/** The body of a `warden.hooks.verdict` entry. */
export function verdictBody(raw: unknown, point: string, v: Verdict, failure: Record<string, string> | null) {
  const e = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const str = (k: string) => (typeof e[k] === "string" ? (e[k] as string).slice(0, 256) : null);
  return {
    hook_point: point.slice(0, 256),
    session_id: str("session_id"),
    host_id: str("host_id"),
    event_hash: eventHash(raw),
    decision: v.decision,
    category: v.category,
    severity: v.severity,
    source: v.source,
    matched_rule_id: v.matched_rule_id ?? null,
    reasons: (v.reasons ?? []).slice(0, 64),
    artifacts: (v.artifacts ?? []).slice(0, 64),
    directives: Object.keys(v.directives ?? {}).slice(0, 16),
    failure,
  };
}

class HooksEngine implements Engine {
  readonly engineId = ENGINE_ID;
  #compatible = false;
  readonly #failures = { open: 0 };
  readonly #stateDirs: string[];
  readonly #askKey: () => Buffer;

  constructor(
    readonly runtime: Runtime,
    private readonly config: EngineConfig,
    private readonly state: EngineState,
    private readonly sourceTrust: SourceTrust,
    private readonly containment: ContainmentConfig,
  ) {
    const dir = config.statePath ? dirname(resolve(config.statePath)) : config.stateDir;
    this.#stateDirs = dir === undefined ? [] : [resolve(dir)];
    this.#askKey = askKeyFor(dir, config.workspace);
  }

  async #journal(type: string, body: Record<string, unknown>, runId?: string): Promise<void> {
    await this.runtime.journal.append({ type, body, ...(runId ? { run_id: runId } : {}) });
  }

  async versionCheck(request: unknown, options?: { selfCheck?: boolean }): Promise<VersionCheckResponse> {
    const r = VersionCheckRequestSchema.safeParse(request);
    const version = r.success ? r.data.aarts_version : "";
    this.#compatible = r.success && supportsVersion(version);
    if (options?.selfCheck === true && this.#compatible) {
      return { compatible: true, engine_id: ENGINE_ID, engine_version: ENGINE_VERSION };
    }
    await this.#journal(HOOK_HANDSHAKE_EVENT, {
      aarts_version: version.slice(0, 256) || "(missing)",
      compatible: this.#compatible,
      engine_id: ENGINE_ID,
      transport: this.config.transport ?? "in-process",
    });
    return { compatible: this.#compatible, engine_id: ENGINE_ID, engine_version: ENGINE_VERSION };
  }

  #evaluate(event: HookEvent): Promise<{ verdict: Verdict; runId: string }> {
    const t = this.config.timeouts;
    const ms = SESSION_LEVEL_HOOKS.has(event.hook_point) ? (t?.sessionMs ?? 10_000) : (t?.toolMs ?? 5_000);
    const now = new Date((this.config.clock ?? Date.now)()).toISOString();
    const p = this.config.principal;
    const input = {
      runtime: this.runtime,
      state: this.state,
      workspace: this.config.workspace,
      now,
      principal: p,
      sourceTrust: this.sourceTrust,
      stateDirs: this.#stateDirs,
      askKey: this.#askKey,
      ...(this.config.profile !== undefined ? { profileConfig: this.config.profile } : {}),
    };
    return withTimeout(dispatch(input, event), ms);
  }

  /** The failure policy's verdict, journaled; if even the journal fails, a plain deny. */
  async #fail(raw: unknown, hook: string, code: string, message: string): Promise<Verdict> {
    const point = hook in HOOK_TABLE ? (hook as HookPoint) : undefined;
    const v = failureVerdict(this.config.failure, point, this.#failures, code, message);
    try {
      const mode = v.decision === "deny" ? "fail-closed" : "fail-open";
      await this.#journal(HOOK_VERDICT_EVENT, verdictBody(raw, hook, v, { code, mode }));
    } catch {
      // A fail-open verdict that cannot be recorded cannot be vouched for.
      const why = "the journal could not record the verdict";
      return failureVerdict(undefined, undefined, this.#failures, "ERR_HOOK_ENGINE_FAULT", why);
    }
    return v;
  }

  async handle(raw: unknown): Promise<Verdict> {
    const point =
      typeof raw === "object" && raw !== null ? (raw as { hook_point?: unknown }).hook_point : undefined;
    const hook = typeof point === "string" ? point : "unknown";
    if (!this.#compatible) {
      return this.#fail(
        raw,
        hook,
        "ERR_HOOK_HANDSHAKE_REQUIRED",
        "no compatible version check before this event",
      );
    }
    const parsed = parseHookEvent(raw);
    if (!parsed.ok) return this.#fail(raw, hook, parsed.code, parsed.message);
    const version = parsed.event.aarts_version;
    if (!supportsVersion(version)) {
      const why = `aarts_version ${version.slice(0, 32)} is not supported`;
      return this.#fail(raw, hook, "ERR_HOOK_HANDSHAKE_REQUIRED", why);
    }
    const gate = gateFor(parsed.event);
    try {
      await this.#journalEgress(parsed.event);
      const evaluated = await this.#evaluate(parsed.event);
      const { runId } = evaluated;
      const verdict = this.#contain(parsed.event, evaluated.verdict);
      if (gate !== undefined && verdict.decision !== "allow") openGate(...gate);
      await this.#journal(HOOK_VERDICT_EVENT, verdictBody(raw, hook, verdict, null), runId);
      if (this.config.statePath) saveState(this.config.statePath, this.state);
      return verdict;
    } catch (err) {
      if (gate !== undefined) openGate(...gate);
      const code =
        err instanceof WardenError && err.code.startsWith("ERR_HOOK_") ? err.code : "ERR_HOOK_ENGINE_FAULT";
      return this.#fail(raw, hook, code, err instanceof Error ? err.message : "fault");
    }
  }

  /** The destinations the session's contained calls tried, journaled before the event. */
  async #journalEgress(e: HookEvent): Promise<void> {
    const dir = join(this.containment.hooksDir, "egress");
    for (const body of drainEgress(dir, sessionKeyOf(e.host_id, e.session_id), e.session_id)) {
      await this.#journal(HOOK_EGRESS_EVENT, { ...body });
    }
  }

  /** An allowed shell call runs contained (contain.ts). */
  #contain(e: HookEvent, v: Verdict): Verdict {
    if (e.hook_point !== "PreToolUse") return v;
    const workspace = this.config.workspace ?? this.state.sessions[e.session_id]?.workspace;
    const names = { sessionKey: sessionKeyOf(e.host_id, e.session_id), callId: e.turn_id };
    const call = { tool: e.tool_name, input: e.tool_input, workspace, names, hostId: e.host_id };
    return containVerdict(this.containment, call, v);
  }

  async close(): Promise<void> {
    if (!this.config.runtime) await this.runtime.close();
  }
}

/**
 * A malformed source-trust configuration or pin store, or a pin store beside the shared pins
 * of a distributed runtime, refuses the start (ERR_HOOK_CONFIG_INVALID).
 */
function sourceTrustFor(config: EngineConfig): SourceTrust {
  const shared = config.runtime?.hookSourcePins;
  try {
    const p = config.sourcePins;
    if (shared !== undefined && p !== undefined) {
      throw new Error(
        "sourcePins is node-local: with store.kind postgres the pins are shared in the database",
      );
    }
    const pins = p instanceof PinStore ? p : p ? PinStore.open(p) : PinStore.inMemory();
    return new SourceTrust(config.sourceTrust ?? {}, pins, shared);
  } catch (err) {
    const why = err instanceof Error ? err.message : "invalid";
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `source trust: ${why}`.slice(0, 2000));
  }
}

/** Containment settings: the hooks state directory (a private temporary one for an in-memory engine). */
function containmentFor(config: EngineConfig): ContainmentConfig {
  const journal = config.journal?.path;
  const journalDir = journal !== undefined && journal !== ":memory:" ? dirname(journal) : undefined;
  const hooksDir =
    config.hooksDir ??
    (config.statePath !== undefined ? dirname(config.statePath) : undefined) ??
    journalDir ??
    mkdtempSync(join(tmpdir(), "warden-hooks-"));
  const stateDirs = [journalDir, join(homedir(), ".warden")].filter((d): d is string => d !== undefined);
  return {
    hooksDir,
    stateDirs,
    ...(config.containment !== undefined ? { mode: config.containment } : {}),
    ...(config.profile !== undefined ? { profile: config.profile } : {}),
    ...(config.bwrap !== undefined ? { bwrap: config.bwrap } : {}),
  };
}

export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  registerHookEventTypes(defaultEventTypes);
  // State first: an unreadable state file refuses the start before anything is opened.
  const state: EngineState = config.state ?? (config.statePath ? loadState(config.statePath) : emptyState());
  const sourceTrust = sourceTrustFor(config);
  const containment = containmentFor(config);
  return new HooksEngine(await runtimeFor(config), config, state, sourceTrust, containment);
}

export { AARTS_VERSION };
