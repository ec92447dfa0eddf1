// What an evaluator sees: the composed runtime, the host's principal, the engine's state
// and the event's session within it. Sessions are created on first sight (a host may not
// fire SessionStart, or this process may be a new one for an old session) — unless the
// poisoned sessions alone fill the state's bound: a new session is then refused
// (ERR_HOOK_STATE_FULL) rather than one of them forgotten (state.ts).
import { HookError, sha256Hex } from "../contracts/index.js";
import type { Runtime } from "../runtime/index.js";
import type { CodingProfile, CodingProfileConfig } from "./coding-profile.js";
import type { SourceTrust } from "./source-trust.js";
import { type EngineState, isProtected, pruneSessions, type SessionState, STATE_LIMITS } from "./state.js";

export interface EvalContext {
  runtime: Runtime;
  principalId: string;
  /** The engine's bound principal, whose runs the runtime starts (EngineConfig.principal). */
  boundPrincipal?: boolean;
  state: EngineState;
  session: SessionState;
  sessionId: string;
  workspace: string | undefined;
  now: string;
  /** Plugin, skill and MCP-server trust (source-trust.ts). */
  sourceTrust: SourceTrust;
  /** Warden's own state directories (the hooks dir): never readable or writable by file tools. */
  stateDirs?: readonly string[];
  /** The operator's profile additions (EngineConfig.profile), for the file and shell checks. */
  profileConfig?: Partial<CodingProfileConfig>;
  /** The key of the engine's ask records (ask-record.ts); absent: no ask can be resolved. */
  askKey?: () => Buffer;
  /** The coding profile (egress allowlist, protected paths); default: coding-profile.ts's defaults. */
  profile?: CodingProfile;
}

/** The Gate run of a host session: a fixed-length id, so any session id the host uses fits. */
export function runIdOf(hostId: string, sessionId: string): string {
  return `aarts:${hostId}:${sha256Hex(`${hostId}\u0000${sessionId}`).slice(7, 39)}`;
}

function refuseWhenFull(state: EngineState): void {
  const held = Object.values(state.sessions).filter(isProtected).length;
  if (held < STATE_LIMITS.MAX_SESSIONS) return;
  throw new HookError(
    "ERR_HOOK_STATE_FULL",
    `${held} poisoned sessions fill the hook state (bound ${STATE_LIMITS.MAX_SESSIONS}); a new session is refused rather than one of them forgotten — review with \`warden hooks status\`, clear with \`warden hooks clear --session ID\``,
  );
}

export function sessionOf(state: EngineState, hostId: string, sessionId: string, now: string): SessionState {
  const existing = state.sessions[sessionId];
  if (existing) {
    existing.lastSeenAt = now;
    return existing;
  }
  refuseWhenFull(state);
  pruneSessions(state.sessions, STATE_LIMITS.MAX_SESSIONS - 1);
  const created: SessionState = {
    runId: runIdOf(hostId, sessionId),
    startedAt: now,
    lastSeenAt: now,
    ended: false,
    epoch: 0,
    taint: [],
    poisoned: [],
    denials: [],
    counts: {},
  };
  state.sessions[sessionId] = created;
  return created;
}

/** Marks the session poisoned (a bounded reason, each once). */
export function poison(session: SessionState, reason: string): void {
  const r = reason.slice(0, 256);
  if (!session.poisoned.includes(r)) session.poisoned.push(r);
  if (session.poisoned.length > STATE_LIMITS.MAX_TAINT) session.poisoned.splice(0, 1);
}

export function count(session: SessionState, key: string): void {
  session.counts[key] = (session.counts[key] ?? 0) + 1;
}

export function noteDenial(
  ctx: EvalContext,
  hook: string,
  what: string,
  reason: string,
  tool?: string,
): void {
  const d = ctx.session.denials;
  d.push({
    at: ctx.now,
    hook,
    what: what.slice(0, 512),
    reason: reason.slice(0, 512),
    ...(tool ? { tool } : {}),
  });
  if (d.length > 32) d.splice(0, d.length - 32);
}
