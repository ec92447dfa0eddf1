// The host side of AARTS (§4, §6.6, §8.0, §9.1): a HookHost fires hook events at an
// engine over any transport (host-transport.ts) and enforces what comes back as a
// conformant host must, whatever the engine is:
//   - the version handshake first; after `compatible: false` (or no answer) no event is
//     sent at all, every hook gets the failure policy (ERR_HOOK_HANDSHAKE_REQUIRED);
//   - per-hook timeouts (5 s tool hooks, 10 s session-level hooks) and the host's failure
//     policy: fail-closed by default (a security runtime denies by default, a deliberate
//     choice over §9.1's fail-open default), fail-open only for listed hooks and at most
//     `max` times — every failure recorded;
//   - deny blocks; ask goes to the ask port (the runtime's approval queue) and the answer
//     is fired as PostAskResolution; with no ask port ask is deny (§6.6); notification hooks
//     never block;
//   - `permitted_tools` from PreSubAgentSpawn is enforced locally: a sub-agent's tool
//     outside the list is denied without consulting the engine (§8.5.1);
//   - the other directives (`inject_context`, `strip_hooks`, `replacement_text`) are
//     handed to the caller with the outcome, to apply where it owns the data (the loop).
import { uuidv7 } from "../contracts/index.js";
import { type FailurePolicy, failureVerdict, withTimeout } from "./failure.js";
import { codeOf, type EngineTransport } from "./host-transport.js";
import {
  AARTS_VERSION,
  type CanonicalTool,
  type Directives,
  type Resolution,
  type Verdict,
  VerdictSchema,
  VersionCheckResponseSchema,
} from "./schema-base.js";
import { HOOK_TABLE, type HookPoint, SESSION_LEVEL_HOOKS } from "./schema-points.js";

export type DecidedBy = "engine" | "failure_policy" | "user" | "host";

export interface HostFailure {
  code: string;
  mode: "fail-open" | "fail-closed";
}

export type HostOutcome =
  | {
      proceed: true;
      verdict: Verdict;
      decidedBy: DecidedBy;
      /** Directives of an allow (or of an ask the user approved), for the caller to apply. */
      directives: Directives;
      resolution?: Resolution;
      failure?: HostFailure;
    }
  | {
      proceed: false;
      verdict: Verdict;
      decidedBy: DecidedBy;
      reasons: string[];
      resolution?: Resolution;
      failure?: HostFailure;
    };

export interface AskRequest {
  hookPoint: HookPoint;
  sessionId: string;
  verdict: Verdict;
  event: Readonly<Record<string, unknown>>;
}

/** Where an ask verdict is put to a human; answers one of approved/denied/suggested. */
export interface AskPort {
  ask(request: AskRequest): Promise<Resolution>;
}

/** One fired hook as the host saw it (the host's log, §9.1 / §9.3). */
export interface HostRecord {
  hookPoint: HookPoint;
  sessionId: string;
  decision: Verdict["decision"];
  proceed: boolean;
  decidedBy: DecidedBy;
  failure?: HostFailure;
}

export interface HookHostConfig {
  transport: EngineTransport;
  /** §6.1 lowercase kebab-case host id. */
  hostId: string;
  hostVersion?: string;
  /** The AARTS session id (default `warden-<uuidv7>`). */
  sessionId?: string;
  failure?: FailurePolicy;
  timeouts?: { toolMs?: number; sessionMs?: number };
  ask?: AskPort;
  onRecord?: (record: HostRecord) => void;
  clock?: () => number;
}

export interface Handshake {
  compatible: boolean;
  engineId?: string;
  engineVersion?: string;
  /** Why not compatible: the engine said so, or the check failed (coded). */
  code?: string;
  message?: string;
}

/** What a host and its sub-agent hosts share: one engine connection, one failure budget. */
interface Link {
  config: HookHostConfig;
  handshake: Handshake;
  failures: { open: number };
}

const ALLOWING: ReadonlySet<Resolution> = new Set(["approved", "allow_always", "allow_similar"]);

function reasonsOf(v: Verdict): string[] {
  return v.reasons && v.reasons.length > 0 ? [...v.reasons] : [`${v.decision} (${v.category})`];
}

export class HookHost {
  readonly sessionId: string;
  /** Canonical tools this (sub-agent) session may use; undefined = the parent's full scope. */
  readonly permittedTools: readonly CanonicalTool[] | undefined;
  readonly parentSessionId: string | undefined;
  readonly #link: Link;
  readonly #fired = new Map<HookPoint, number>();

  private constructor(
    link: Link,
    session: { id: string; parent?: string; permitted?: readonly CanonicalTool[] | undefined },
  ) {
    this.#link = link;
    this.sessionId = session.id;
    this.parentSessionId = session.parent;
    this.permittedTools = session.permitted ? Object.freeze([...session.permitted]) : undefined;
  }

  /** Runs the version handshake (§4.2) and returns the host; check `handshake.compatible`. */
  static async connect(config: HookHostConfig): Promise<HookHost> {
    const link: Link = { config, handshake: { compatible: false }, failures: { open: 0 } };
    link.handshake = await versionCheck(config);
    return new HookHost(link, { id: config.sessionId ?? `warden-${uuidv7()}` });
  }

  /** Another top-level AARTS session over the same engine connection (and failure budget). */
  withSession(sessionId: string): HookHost {
    return new HookHost(this.#link, { id: sessionId });
  }

  get handshake(): Readonly<Handshake> {
    return this.#link.handshake;
  }

  get transportKind(): string {
    return this.#link.config.transport.kind;
  }

  /** How many times each hook point was fired by this session (sent or answered locally). */
  fired(point: HookPoint): number {
    return this.#fired.get(point) ?? 0;
  }

  /** The full event: the §6.1 envelope around the hook's fields. */
  event(point: HookPoint, fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const c = this.#link.config;
    // The envelope is the host's: fields cannot rename the hook, the session or the host.
    return {
      ...fields,
      hook_point: point,
      session_id: this.sessionId,
      timestamp: new Date((c.clock ?? Date.now)()).toISOString(),
      host_id: c.hostId,
      ...(c.hostVersion !== undefined ? { host_version: c.hostVersion } : {}),
      aarts_version: AARTS_VERSION,
      ...(point === "PreToolUse" && this.parentSessionId !== undefined
        ? { is_sub_agent: true, parent_session_id: this.parentSessionId }
        : {}),
    };
  }

  /** Fires one hook and enforces the verdict. Never throws for engine faults. */
  async fire(point: HookPoint, fields: Readonly<Record<string, unknown>>): Promise<HostOutcome> {
    this.#fired.set(point, this.fired(point) + 1);
    const local = this.#localDenial(point, fields);
    if (local) return this.#record(point, local);
    const event = this.event(point, fields);
    const answer = await this.#evaluate(point, event);
    const v = answer.verdict;
    const failure = answer.failure ? { failure: answer.failure } : {};
    if (HOOK_TABLE[point]?.blocking === "notification" || v.decision === "allow") {
      const directives = v.decision === "allow" ? { ...(v.directives ?? {}) } : {};
      return this.#record(point, { proceed: true, verdict: v, decidedBy: answer.by, directives, ...failure });
    }
    if (v.decision === "deny")
      return this.#record(point, {
        proceed: false,
        verdict: v,
        decidedBy: answer.by,
        reasons: reasonsOf(v),
        ...failure,
      });
    return this.#record(point, await this.#resolveAsk(point, event, v));
  }

  /** PreSubAgentSpawn (§8.5.1): a child host restricted by `permitted_tools`, or the refusal. */
  async spawnSubAgent(
    fields: Readonly<Record<string, unknown>> & { sub_agent_id: string; delegated_task: string },
  ): Promise<{ ok: true; host: HookHost; outcome: HostOutcome } | { ok: false; outcome: HostOutcome }> {
    const parentScope = this.permittedTools
      ? { parent_permissions: { tools: [...this.permittedTools] } }
      : {};
    const outcome = await this.fire("PreSubAgentSpawn", { ...parentScope, ...fields });
    if (!outcome.proceed) return { ok: false, outcome };
    const directive = outcome.directives.permitted_tools;
    // The parent's scope stays the ceiling: a directive can only narrow it (§11 Level 3).
    const permitted =
      directive === undefined
        ? this.permittedTools
        : directive.filter((t) => this.permittedTools === undefined || this.permittedTools.includes(t));
    const host = new HookHost(this.#link, { id: fields.sub_agent_id, parent: this.sessionId, permitted });
    return { ok: true, host, outcome };
  }

  /** PostSubAgentResult (§8.5.2), fired by the parent for a child's result. */
  subAgentResult(fields: Readonly<Record<string, unknown>> & { sub_agent_id: string }): Promise<HostOutcome> {
    return this.fire("PostSubAgentResult", fields);
  }

  async close(): Promise<void> {
    if (this.parentSessionId === undefined) await this.#link.config.transport.close();
  }

  #localDenial(point: HookPoint, fields: Readonly<Record<string, unknown>>): HostOutcome | undefined {
    if (point !== "PreToolUse" || this.permittedTools === undefined) return undefined;
    const tool = fields.tool_name;
    if (typeof tool === "string" && (this.permittedTools as readonly string[]).includes(tool))
      return undefined;
    const reason = `${String(tool).slice(0, 64)} is not among this sub-agent's permitted tools (${this.permittedTools.join(", ") || "none"})`;
    const verdict: Verdict = {
      decision: "deny",
      category: "privilege_escalation",
      severity: "critical",
      source: "host_permitted_tools",
      matched_rule_id: "aarts-permitted-tools",
      reasons: [reason],
    };
    return { proceed: false, verdict, decidedBy: "host", reasons: [reason] };
  }

  async #evaluate(
    point: HookPoint,
    event: Record<string, unknown>,
  ): Promise<{ verdict: Verdict; by: DecidedBy; failure?: HostFailure }> {
    const c = this.#link.config;
    if (!this.#link.handshake.compatible) {
      return this.#fail(point, "ERR_HOOK_HANDSHAKE_REQUIRED", "no compatible engine: no event is sent");
    }
    const ms = SESSION_LEVEL_HOOKS.has(point)
      ? (c.timeouts?.sessionMs ?? 10_000)
      : (c.timeouts?.toolMs ?? 5_000);
    const ac = new AbortController();
    try {
      const raw = await withTimeout(c.transport.send(event, ac.signal), ms);
      const parsed = VerdictSchema.safeParse(raw);
      if (!parsed.success)
        return this.#fail(point, "ERR_HOOK_ENGINE_FAULT", "the engine's answer is not a verdict");
      return { verdict: parsed.data, by: "engine" };
    } catch (err) {
      return this.#fail(point, codeOf(err), err instanceof Error ? err.message : "engine fault");
    } finally {
      ac.abort();
    }
  }

  #fail(
    point: HookPoint,
    code: string,
    message: string,
  ): { verdict: Verdict; by: DecidedBy; failure: HostFailure } {
    const v = failureVerdict(this.#link.config.failure, point, this.#link.failures, code, message);
    return {
      verdict: v,
      by: "failure_policy",
      failure: { code, mode: v.decision === "allow" ? "fail-open" : "fail-closed" },
    };
  }

  /** ask → the ask port → PostAskResolution; no port (or no usable answer) is deny. */
  async #resolveAsk(point: HookPoint, event: Record<string, unknown>, v: Verdict): Promise<HostOutcome> {
    const port = this.#link.config.ask;
    if (port === undefined) {
      const reasons = [...reasonsOf(v), "no interactive approval available: ask is treated as deny (§6.6)"];
      return { proceed: false, verdict: v, decidedBy: "host", reasons };
    }
    const offered = new Set<Resolution>(["approved", "denied", ...(v.suggested_resolutions ?? [])]);
    let resolution: Resolution = "denied";
    try {
      const r = await port.ask({ hookPoint: point, sessionId: this.sessionId, verdict: v, event });
      if (offered.has(r)) resolution = r;
    } catch {
      // An approval that cannot be obtained is a denial.
    }
    const turn = typeof event.turn_id === "string" ? event.turn_id : "session";
    await this.fire("PostAskResolution", {
      turn_id: turn,
      original_hook_point: point,
      original_verdict: v,
      resolution,
    });
    if (ALLOWING.has(resolution))
      return {
        proceed: true,
        verdict: v,
        decidedBy: "user",
        directives: { ...(v.directives ?? {}) },
        resolution,
      };
    return {
      proceed: false,
      verdict: v,
      decidedBy: "user",
      reasons: [...reasonsOf(v), `the user answered ${resolution}`],
      resolution,
    };
  }

  #record(point: HookPoint, o: HostOutcome): HostOutcome {
    this.#link.config.onRecord?.({
      hookPoint: point,
      sessionId: this.sessionId,
      decision: o.verdict.decision,
      proceed: o.proceed,
      decidedBy: o.decidedBy,
      ...(o.failure ? { failure: o.failure } : {}),
    });
    return o;
  }
}

async function versionCheck(config: HookHostConfig): Promise<Handshake> {
  const ac = new AbortController();
  try {
    const raw = await withTimeout(
      config.transport.versionCheck({ aarts_version: AARTS_VERSION }, ac.signal),
      config.timeouts?.sessionMs ?? 10_000,
    );
    const r = VersionCheckResponseSchema.safeParse(raw);
    if (!r.success)
      return {
        compatible: false,
        code: "ERR_HOOK_ENGINE_FAULT",
        message: "the version check answer is malformed",
      };
    const { compatible, engine_id, engine_version } = r.data;
    return {
      compatible,
      engineId: engine_id,
      ...(engine_version !== undefined ? { engineVersion: engine_version } : {}),
      ...(compatible
        ? {}
        : {
            code: "ERR_HOOK_HANDSHAKE_REQUIRED",
            message: `the engine does not speak AARTS ${AARTS_VERSION}`,
          }),
    };
  } catch (err) {
    return { compatible: false, code: codeOf(err), message: err instanceof Error ? err.message : "fault" };
  } finally {
    ac.abort();
  }
}
