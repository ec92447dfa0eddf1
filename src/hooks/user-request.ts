// The user's request as the trusted origin of a host session's Gate run (flow control,
// docs/threat-model.md#flow-control). Only the host's user-prompt event sets it — Claude
// Code and Codex `UserPromptSubmit`, Gemini CLI `BeforeAgent`, Cursor `beforeSubmitPrompt`,
// Copilot `userPromptSubmitted`, all translated to the AARTS `PreUserInput` point — and only
// when the engine allowed the prompt (a blocked prompt never reaches the model). The model's
// own text (PreLLMRequest, PostLLMResponse, PreOutputDeliver), tool results and sub-agent
// answers never do. Each accepted prompt starts a new Gate run whose `originalRequest` is
// that prompt: a run is pinned to the request it was opened with (src/context/store.ts), and
// a new user turn is a new task. Protective state carries over: the session's taint is sent
// with every call, quarantine and denials live with the session principal. The prompt is
// kept in the hooks' session state file (0600, Warden's own state directory, which no file
// tool may read or write), bounded to MAX_USER_REQUEST characters.
import { type EvalContext, runIdOf } from "./context.js";

/** At most this much of a prompt is kept (a longer one is cut: less counts as the user's). */
export const MAX_USER_REQUEST = 32_768;

/**
 * Records an accepted prompt as the session's request and moves the session to a new run
 * opened with it. `bound`: the engine's bound principal, whose runs the runtime starts.
 */
export async function recordUserRequest(
  ctx: EvalContext,
  hostId: string,
  prompt: string,
  bound: boolean,
): Promise<void> {
  const s = ctx.session;
  const request = prompt.slice(0, MAX_USER_REQUEST);
  const turn = (s.turn ?? 0) + 1;
  // The previous turn's run is over (a long-lived daemon would otherwise hold one open run
  // per prompt against the principal's open-run bound); its protective state stays with
  // the session and the principal.
  if (ctx.runtime.sessions.get(s.runId) !== undefined) ctx.runtime.sessions.end(s.runId);
  s.runId = bound
    ? (await ctx.runtime.startRun(ctx.principalId, { originalRequest: request })).runId
    : runIdOf(hostId, `${ctx.sessionId}#${s.startedAt}#turn${turn}`);
  s.turn = turn;
  s.request = request;
}

/** The fields a Gate request of this session carries for the user's request (none before the first prompt). */
export function requestFields(ctx: EvalContext): { originalRequest?: string } {
  return ctx.session.request !== undefined ? { originalRequest: ctx.session.request } : {};
}
