// One event to its evaluator. The session (and its run) is found or created first; every
// evaluator is pure over (context, event) apart from the Gate's journal writes.

import type { Runtime } from "../runtime/index.js";
import { issueAsk } from "./ask-record.js";
import type { CodingProfileConfig } from "./coding-profile.js";
import { type EvalContext, runIdOf, sessionOf } from "./context.js";
import {
  compaction,
  postAskResolution,
  preSubAgentSpawn,
  preToolInputModification,
  sessionEnd,
  sessionStart,
} from "./evaluate-session.js";
import { preMCPConnect, prePluginLoad, preSkillLoad } from "./evaluate-source.js";
import {
  postInputProcessing,
  postLLMResponse,
  postSubAgentResult,
  preLLMRequest,
  preMemoryRead,
  preMemoryWrite,
  preOutputDeliver,
  preUserInput,
} from "./evaluate-text.js";
import { postToolUse, preToolUse } from "./evaluate-tool.js";
import type { Verdict } from "./schema-base.js";
import type { HookEvent } from "./schema-points.js";
import type { SourceTrust } from "./source-trust.js";
import type { EngineState } from "./state.js";
import { recordUserRequest } from "./user-request.js";

export interface DispatchInput {
  runtime: Runtime;
  state: EngineState;
  workspace: string | undefined;
  now: string;
  /** A bound principal whose runs the runtime starts (EngineConfig.principal). */
  principal?: string | undefined;
  sourceTrust: SourceTrust;
  /** Warden's own state directories (file tools may neither read nor write them). */
  stateDirs?: readonly string[];
  profileConfig?: Partial<CodingProfileConfig>;
  /** The ask records' MAC key (ask-record.ts). */
  askKey?: () => Buffer;
}

/** The principal a host acts as: one per host id (the host authenticated by running us). */
export function hostPrincipal(hostId: string): string {
  return `host:${hostId}`;
}

/**
 * The principal one host session acts as: `host:<host_id>:<32 hex>` (the hash of the host and
 * session id, as its run id). The Gate's quarantine (a denial threshold, a behavioural rule)
 * is the principal's: scoped to the session the host named, it follows that session across
 * runs, resumes and processes — the agent cannot start a session of its host — and never
 * locks every other session of the host out. `warden hooks clear` lifts it.
 */
export function sessionPrincipal(hostId: string, sessionId: string): string {
  return `${hostPrincipal(hostId)}:${runIdOf(hostId, sessionId).slice(`aarts:${hostId}:`.length)}`;
}

function workspaceOf(d: DispatchInput, e: HookEvent): string | undefined {
  if (d.workspace !== undefined) return d.workspace;
  if (e.hook_point !== "SessionStart") return undefined;
  const env = e.environment ?? {};
  const cwd = env.working_directory ?? env.cwd;
  return typeof cwd === "string" ? cwd : undefined;
}

async function evaluate(ctx: EvalContext, e: HookEvent): Promise<Verdict> {
  switch (e.hook_point) {
    case "SessionStart":
      return sessionStart(ctx, e);
    case "SessionEnd":
      return sessionEnd(ctx);
    case "PrePluginLoad":
      return prePluginLoad(ctx, e);
    case "PreSkillLoad":
      return preSkillLoad(ctx, e);
    case "PreMCPConnect":
      return preMCPConnect(ctx, e);
    case "PreUserInput":
      return preUserInput(ctx, e);
    case "PostInputProcessing":
      return postInputProcessing(ctx, e);
    case "PreLLMRequest":
      return preLLMRequest(ctx, e);
    case "PostLLMResponse":
      return postLLMResponse(ctx, e);
    case "PreToolUse":
      return preToolUse(ctx, e);
    case "PostToolUse":
      return postToolUse(ctx, e);
    case "PreToolInputModification":
      return preToolInputModification(ctx, e);
    case "PreSubAgentSpawn":
      return preSubAgentSpawn(ctx, e);
    case "PostSubAgentResult":
      return postSubAgentResult(ctx, e);
    case "PreOutputDeliver":
      return preOutputDeliver(ctx, e);
    case "PreMemoryWrite":
      return preMemoryWrite(ctx, e);
    case "PreMemoryRead":
      return preMemoryRead(ctx, e);
    case "PreCompact":
    case "PostCompact":
      return compaction(ctx, e);
    case "PostAskResolution":
      return postAskResolution(ctx, e);
  }
}

export async function dispatch(d: DispatchInput, e: HookEvent): Promise<{ verdict: Verdict; runId: string }> {
  const fresh = d.state.sessions[e.session_id] === undefined;
  const session = sessionOf(d.state, e.host_id, e.session_id, d.now);
  const principalId = d.principal ?? sessionPrincipal(e.host_id, e.session_id);
  // The session principal's persisted quarantine is in force before its first call in this
  // process (a hook process per event, a restarted daemon): a read never lifts one.
  if (d.principal === undefined) await d.runtime.sessions.principals.load(principalId);
  const resumed = session.ended && e.hook_point !== "SessionEnd";
  if (resumed) {
    // A host session resumed after its end: a fresh Gate run (an ended run cannot reopen);
    // taint, poisoned results and denials carry over — protective state is never reset.
    session.runId = runIdOf(e.host_id, `${e.session_id}#${session.startedAt}#${d.now}`);
    session.ended = false;
  }
  // A bound principal's runs come from the runtime (an engine-named run id would be refused).
  if (d.principal !== undefined && (fresh || resumed)) {
    session.runId = (await d.runtime.startRun(principalId)).runId;
  }
  const ctx: EvalContext = {
    runtime: d.runtime,
    principalId,
    ...(d.principal !== undefined ? { boundPrincipal: true } : {}),
    state: d.state,
    session,
    sessionId: e.session_id,
    workspace: workspaceOf(d, e) ?? session.workspace,
    now: d.now,
    sourceTrust: d.sourceTrust,
    ...(d.stateDirs ? { stateDirs: d.stateDirs } : {}),
    ...(d.profileConfig ? { profileConfig: d.profileConfig } : {}),
    ...(d.askKey ? { askKey: d.askKey } : {}),
  };
  if (e.hook_point === "SessionStart" && ctx.workspace !== undefined) session.workspace = ctx.workspace;
  const verdict = await evaluate(ctx, e);
  // The host's user-prompt event, once allowed, is the trusted origin of the next run.
  if (e.hook_point === "PreUserInput" && verdict.decision === "allow")
    await recordUserRequest(ctx, e.host_id, e.raw_input, d.principal !== undefined);
  // Every ask is recorded with an id: only a recorded ask can become a remembered resolution.
  return { verdict: issueAsk(ctx, e.hook_point, verdict), runId: session.runId };
}
