// A sub-agent as an AARTS host sees it (§8.5): PreSubAgentSpawn on the parent's host
// before the child run exists (a refusal means no child), the child loop on a child host
// that enforces the engine's `permitted_tools` locally (the parent's scope stays the
// ceiling), then PostSubAgentResult on the parent before the child's answer is handed back
// (withheld on deny, masked on `replacement_text`). The child's tool calls still each need
// the Gate's ticket: a run the runtime started for it (e.g. a delegated run) goes in `options`.
import type { HookHost } from "../hooks/index.js";
import { runLoop } from "./driver.js";
import type { TicketLike } from "./ports.js";
import type { LoopOptions, LoopResult } from "./types.js";

export interface SubAgentSpec {
  subAgentId: string;
  task: string;
  type?: string;
  /** Canonical tool names (§7) the sub-agent asks for. */
  requestedTools?: readonly string[];
}

export type SubAgentRun =
  | {
      ok: true;
      result: LoopResult /** The answer the parent may use (masked, or null when withheld). */;
      delivered: string | null;
    }
  | { ok: false; reasons: string[] };

export async function runSubAgent<T extends TicketLike>(
  parent: HookHost,
  spec: SubAgentSpec,
  options: Omit<LoopOptions<T>, "hooks" | "task">,
): Promise<SubAgentRun> {
  const spawn = await parent.spawnSubAgent({
    sub_agent_id: spec.subAgentId,
    delegated_task: spec.task,
    ...(spec.type !== undefined ? { sub_agent_type: spec.type } : {}),
    ...(spec.requestedTools !== undefined ? { requested_tools: [...spec.requestedTools] } : {}),
  });
  if (!spawn.ok) return { ok: false, reasons: spawn.outcome.proceed ? [] : spawn.outcome.reasons };
  const result = await runLoop<T>({ ...options, task: spec.task, hooks: spawn.host } as LoopOptions<T>);
  const o = await parent.subAgentResult({
    sub_agent_id: spec.subAgentId,
    result: result.finalText ?? "",
    tool_calls_made: [{ count: result.toolCalls }],
    verdicts_issued: (result.hooks?.blocked ?? []).map((b) => ({ hook_point: b.hookPoint })),
  });
  if (!o.proceed) return { ok: true, result, delivered: null };
  return { ok: true, result, delivered: o.directives.replacement_text ?? result.finalText };
}
