// Warden's own ORGA loop as an AARTS host (AARTS 0.1 §5, §8): the lifecycle moments at
// which the loop fires its HookHost, and how it applies what the host enforced. Hooks can
// only make a run stricter: a tool call still needs the Gate's ticket (the typestate is
// unchanged), and the PreToolUse hook can only veto what the Gate allowed.
//   start            SessionStart → PrePluginLoad / PreSkillLoad / PreMCPConnect for each
//                    declared component → PreUserInput (the task) → PostInputProcessing
//   each model call  [PreCompact → compaction → PostCompact] → PreLLMRequest → the model →
//                    PostLLMResponse
//   each ticketed    [PreToolInputModification when the Gate rewrote the parameters] →
//   proposal         PreToolUse
//   each execution   PostToolUse (before the output becomes an observation)
//   end              PreOutputDeliver (the final answer) → SessionEnd
// Sub-agents (PreSubAgentSpawn, PostSubAgentResult) are sub-agent.ts; PostAskResolution is
// fired by the host itself after an ask is answered. The loop has no memory store, so
// PreMemoryRead/PreMemoryWrite are not fired by it (a caller with one fires them on the host).
import type { HookPoint, HostOutcome } from "../hooks/index.js";
import type { ChatMessage, ModelResponse } from "./model.js";
import type { ResolvedCall, TicketLike } from "./ports.js";
import { type RunState, record } from "./run-state.js";

type Run = RunState<TicketLike>;

const turnId = (run: Run) => `turn-${Math.max(1, run.iterations)}`;

/** Fires one hook; failures are journaled (§9.1: every engine failure is logged), blocks kept. */
export async function fireHook(
  run: Run,
  point: HookPoint,
  fields: Record<string, unknown>,
): Promise<HostOutcome | undefined> {
  const host = run.o.hooks;
  if (host === undefined) return undefined;
  const o = await host.fire(point, fields);
  run.hookLog.fired += 1;
  if (o.failure) {
    await record(run, "RecoveryTriggered", {
      strategy: o.failure.mode === "fail-open" ? "fail_open" : "fail_closed",
      phase: "hook",
      hook_point: point,
      error: { code: o.failure.code, message: (o.verdict.reasons ?? []).join("; ").slice(0, 1024) },
    });
  }
  if (!o.proceed) run.hookLog.blocked.push({ hookPoint: point, reasons: o.reasons.slice(0, 8) });
  return o;
}

function stop(run: Run, point: HookPoint): void {
  run.terminating ??= "hook_denied";
  run.hookStop ??= point;
}

async function loadComponents(run: Run): Promise<void> {
  const c = run.o.components ?? {};
  const kinds = [
    ["PrePluginLoad", "plugin", c.plugins ?? [], "plugin_id"],
    ["PreSkillLoad", "skill", c.skills ?? [], "file_path"],
    ["PreMCPConnect", "mcp_server", c.mcpServers ?? [], "server_id"],
  ] as const;
  for (const [point, kind, list, idField] of kinds) {
    for (const fields of list) {
      const id = String((fields as Record<string, unknown>)[idField] ?? "?").slice(0, 256);
      const o = await fireHook(run, point, { ...fields });
      if (o === undefined || !o.proceed) {
        run.hookLog.refused.push({ kind, id });
        continue;
      }
      const stripped = point === "PreSkillLoad" && o.directives.strip_hooks === true;
      run.hookLog.loaded.push({ kind, id, hooksStripped: stripped });
      // A skill's instructions join the system prompt; its hooks are never run by the loop,
      // and with strip_hooks they are dropped from what the caller is told was loaded.
      const body = point === "PreSkillLoad" ? (fields as { body_content?: unknown }).body_content : undefined;
      if (typeof body === "string" && body !== "") {
        insertSystem(run.messages, `[skill ${id}]\n${body}`);
      }
    }
  }
}

/** Fires the start hooks; a block stops the run before the model is called. */
export async function hooksAtStart(run: Run): Promise<void> {
  if (run.o.hooks === undefined) return;
  const start = await fireHook(run, "SessionStart", {
    environment: { agent_id: run.o.principalId, model: run.o.model.id, run_id: run.runId },
  });
  if (start && !start.proceed) return stop(run, "SessionStart");
  await loadComponents(run);
  const input = await fireHook(run, "PreUserInput", {
    turn_id: "turn-1",
    raw_input: run.o.task,
    input_source: "api",
  });
  if (input && !input.proceed) return stop(run, "PreUserInput");
  // The loop does not transform the task: the processed input is the raw input.
  const processed = await fireHook(run, "PostInputProcessing", {
    turn_id: "turn-1",
    original_value: run.o.task,
    modified_value: run.o.task,
    was_modified: false,
    modifier_chain: [],
  });
  if (processed && !processed.proceed) stop(run, "PostInputProcessing");
}

function render(messages: readonly ChatMessage[]): string {
  const text = messages
    .map(
      (m) =>
        `${m.role}: ${m.content ?? ""}${"toolCalls" in m && m.toolCalls ? ` [calls ${m.toolCalls.map((t) => t.name).join(", ")}]` : ""}`,
    )
    .join("\n");
  return text.length > 900_000 ? `${text.slice(0, 900_000)}…` : text;
}

const contextChars = (messages: readonly ChatMessage[]) =>
  messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);

/** System text goes after the leading system messages (before the conversation). */
function insertSystem(messages: ChatMessage[], content: string): void {
  let i = 0;
  while (messages[i]?.role === "system") i++;
  messages.splice(i, 0, { role: "system", content });
}

/** Truncation: the head (system prompt and task) and the last messages, cut at an assistant turn. */
function truncated(messages: readonly ChatMessage[], keep: number): ChatMessage[] | undefined {
  let head = 0;
  while (messages[head]?.role === "system") head++;
  head += 1; // the task
  let from = Math.max(head, messages.length - keep);
  while (from > head && messages[from]?.role === "tool") from--;
  if (from <= head) return undefined;
  const note = { role: "system" as const, content: `[${from - head} earlier messages were compacted away]` };
  return [...messages.slice(0, head), note, ...messages.slice(from)];
}

async function compact(run: Run): Promise<void> {
  const c = run.o.compaction;
  if (c === undefined || contextChars(run.messages) <= c.atChars) return;
  const next = truncated(run.messages, c.keepMessages);
  if (next === undefined) return;
  const turn = turnId(run);
  const pre = await fireHook(run, "PreCompact", {
    turn_id: turn,
    context_before: render(run.messages),
    compaction_reason: "token_limit",
    compaction_strategy: "truncation",
  });
  if (pre && !pre.proceed) return; // §8.3.5: the host does not compact
  const post = await fireHook(run, "PostCompact", {
    turn_id: turn,
    original_value: render(run.messages),
    modified_value: render(next),
    was_modified: true,
    modifier_chain: [{ modifier_id: "warden-loop-compaction", config_source: "managed", modified: true }],
    compaction_strategy_used: "truncation",
  });
  if (post && !post.proceed) return; // §8.3.6: revert to the original context
  const inject = post?.proceed ? post.directives.inject_context : undefined;
  if (inject !== undefined) {
    const msg = { role: "system" as const, content: inject.content };
    if (inject.position === "append") next.push(msg);
    else insertSystem(next, inject.content);
  }
  run.messages.splice(0, run.messages.length, ...next);
  run.compactions += 1;
}

/** Before a model call: compaction when due, then PreLLMRequest. False: do not call the model. */
export async function beforeModelCall(run: Run): Promise<boolean> {
  if (run.o.hooks === undefined) return true;
  await compact(run);
  const prompt = run.messages.length <= 1000 ? run.messages.map((m) => ({ ...m })) : render(run.messages);
  const o = await fireHook(run, "PreLLMRequest", {
    turn_id: turnId(run),
    full_prompt: JSON.parse(JSON.stringify(prompt)),
    ...(run.o.systemPrompt ? { system_prompt: run.o.systemPrompt } : {}),
    user_input: run.o.task,
    model_id: run.o.model.id.slice(0, 256),
  });
  if (o && !o.proceed) {
    stop(run, "PreLLMRequest");
    return false;
  }
  return true;
}

/** PostLLMResponse: a block discards the turn; a masked text replaces the model's. */
export async function screenResponse(run: Run, response: ModelResponse): Promise<ModelResponse | null> {
  if (run.o.hooks === undefined) return response;
  const calls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
  const o = await fireHook(run, "PostLLMResponse", {
    turn_id: turnId(run),
    response_text: typeof response.text === "string" ? response.text : "",
    planned_actions: jsonSafe(
      calls.map((c) => ({
        name: String(c.name),
        arguments: c.arguments?.ok ? c.arguments.value : c.arguments?.raw,
      })),
    ),
    ...(response.finishReason ? { stop_reason: response.finishReason.slice(0, 64) } : {}),
  });
  if (o && !o.proceed) {
    stop(run, "PostLLMResponse");
    return null;
  }
  const masked = o?.proceed ? o.directives.replacement_text : undefined;
  return masked !== undefined && typeof response.text === "string" ? { ...response, text: masked } : response;
}

/** The §7 category of one of Warden's own tools, from the Gate request it resolves to. */
export function canonicalOf(toolClass: string, action: string): string {
  if (toolClass === "shell") return "shell";
  if (toolClass === "http") return "web_request";
  if (toolClass === "mcp") return "mcp_call";
  if (toolClass === "database") return "database";
  if (toolClass === "delegate") return "delegate";
  if (toolClass === "file") {
    if (action === "write") return "file_write";
    if (action === "delete") return "file_delete";
    if (action === "edit" || action === "append") return "file_edit";
    return "file_read";
  }
  return "other";
}

export function jsonSafe(v: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(v ?? null));
  } catch {
    return "[unserialisable]";
  }
}

/**
 * A call the Gate ticketed, before it is dispatched: PreToolInputModification when the
 * Gate rewrote the parameters (a block means the call is not run: the ticket is bound to
 * the rewrite), then PreToolUse. Answers the reasons to refuse it, or undefined.
 */
export async function screenToolCall(
  run: Run,
  call: { name: string; args: Record<string, unknown>; resolved: Extract<ResolvedCall, { ok: true }> },
  modified: Readonly<Record<string, unknown>> | undefined,
): Promise<string[] | undefined> {
  if (run.o.hooks === undefined) return undefined;
  const tool = canonicalOf(call.resolved.toolClass, call.resolved.action);
  const changed =
    modified !== undefined && JSON.stringify(modified) !== JSON.stringify(call.resolved.parameters);
  if (changed) {
    const m = await fireHook(run, "PreToolInputModification", {
      source: "managed",
      source_id: "warden-gate",
      tool_name: tool,
      original_value: jsonSafe(call.args),
      modified_value: jsonSafe(modified),
      was_modified: true,
      modifier_chain: [{ modifier_id: "warden-gate-policy", config_source: "managed", modified: true }],
    });
    if (m && !m.proceed) return m.reasons;
  }
  const o = await fireHook(run, "PreToolUse", {
    turn_id: turnId(run),
    tool_name: tool,
    tool_name_native: call.name.slice(0, 256),
    tool_input: jsonSafe(changed ? modified : call.args),
    artifacts: [],
    source_prompt_modified: false,
  });
  return o && !o.proceed ? o.reasons : undefined;
}

/** PostToolUse: the output the model will see (withheld on deny, masked on replacement_text). */
export async function screenResult(
  run: Run,
  call: { name: string; tool: string; args: Record<string, unknown>; durationMs: number },
  output: unknown,
): Promise<{ output: unknown; changed: boolean }> {
  if (run.o.hooks === undefined) return { output, changed: false };
  const result =
    typeof output === "string" || (output !== null && typeof output === "object" && !Array.isArray(output))
      ? jsonSafe(output)
      : JSON.stringify(jsonSafe(output));
  const o = await fireHook(run, "PostToolUse", {
    turn_id: turnId(run),
    tool_name: call.tool,
    tool_name_native: call.name.slice(0, 256),
    tool_input: jsonSafe(call.args),
    artifacts: [],
    tool_result: result,
    execution_duration_ms: Math.max(0, Math.round(call.durationMs)),
  });
  if (o === undefined) return { output, changed: false };
  if (!o.proceed)
    return {
      output: `[withheld by the security engine: ${o.reasons.join("; ").slice(0, 500)}]`,
      changed: true,
    };
  const masked = o.directives.replacement_text;
  return masked !== undefined ? { output: masked, changed: true } : { output, changed: false };
}

/** The end: PreOutputDeliver on a final answer (withheld or masked), then SessionEnd. */
export async function hooksAtEnd(run: Run, reason: string): Promise<void> {
  if (run.o.hooks === undefined) return;
  if (reason === "final_answer" && run.lastText) {
    const o = await fireHook(run, "PreOutputDeliver", {
      turn_id: turnId(run),
      output_text: run.lastText,
      actions_taken: [],
    });
    if (o && !o.proceed) {
      run.lastText = null;
      run.hookLog.outputWithheld = true;
    } else if (o?.proceed && o.directives.replacement_text !== undefined) {
      run.lastText = o.directives.replacement_text;
    }
  }
  await fireHook(run, "SessionEnd", {
    summary: { reason, tool_calls: run.toolCalls, decisions: { ...run.counts }, iterations: run.iterations },
  });
}
