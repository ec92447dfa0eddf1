// What an evaluator sees: the composed runtime, the host's principal, the engine's state
// and the event's session within it. Sessions are created on first sight (a host may not
// fire SessionStart, or this process may be a new one for an old session).
import { sha256Hex } from "../contracts/index.js";
import type { Runtime } from "../runtime/index.js";
import type { SourceTrust } from "./source-trust.js";
import type { EngineState, SessionState } from "./state.js";

export interface EvalContext {
  runtime: Runtime;
  principalId: string;
  state: EngineState;
  session: SessionState;
  sessionId: string;
  workspace: string | undefined;
  now: string;
  /** Plugin, skill and MCP-server trust (source-trust.ts). */
  sourceTrust: SourceTrust;
  /** Warden's own state directories (the hooks dir): never readable or writable by file tools. */
  stateDirs?: readonly string[];
  /** The key of the engine's ask records (ask-record.ts); absent: no ask can be resolved. */
  askKey?: () => Buffer;
}

/** The Gate run of a host session: a fixed-length id, so any session id the host uses fits. */
export function runIdOf(hostId: string, sessionId: string): string {
  return `aarts:${hostId}:${sha256Hex(`${hostId}\u0000${sessionId}`).slice(7, 39)}`;
}

export function sessionOf(state: EngineState, hostId: string, sessionId: string, now: string): SessionState {
  const existing = state.sessions[sessionId];
  if (existing) return existing;
  const created: SessionState = {
    runId: runIdOf(hostId, sessionId),
    startedAt: now,
    ended: false,
    taint: [],
    poisoned: [],
    denials: [],
    counts: {},
  };
  state.sessions[sessionId] = created;
  return created;
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
