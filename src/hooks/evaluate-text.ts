// The prompt, output and memory hooks: credential and injection findings on the text
// (detect.ts), never the text itself, decide; the session accumulates what it saw.
//   credential in what goes to the model or out of the machine → deny (data_exfiltration)
//   credential in what the user is shown (PreOutputDeliver, PostLLMResponse) → allow with
//     `replacement_text`, the text masked
//   injection phrasing in assembled or retrieved context → ask; in memory being written,
//     retrieved memory or the result of a sub-agent not known to have read only trusted
//     content → deny and the session is poisoned
//   injection phrasing in the user's own input → allow with a warning
import { MAX_SCAN_CHARS } from "../context/index.js";
import { HookError } from "../contracts/index.js";
import { faultOf } from "../gate/index.js";
import { count, type EvalContext, noteDenial } from "./context.js";
import { scanText, type TextFindings, textOf } from "./detect.js";
import { addTaint } from "./evaluate-tool.js";
import { recordFlowOutput } from "./flow-control.js";
import type { Verdict } from "./schema-base.js";
import type { HookEventOf } from "./schema-points.js";
import { subAgentSource, trustOf } from "./taint-trust.js";
import { requestFields } from "./user-request.js";
import { allow, fromGate, fromSignal, merge } from "./verdicts.js";

type OnInjection = "allow" | "ask" | "deny";
type OnCredential = "deny" | "mask";

interface TextRule {
  hook: string;
  field: string;
  onInjection: OnInjection;
  onCredential: OnCredential;
}

function credentialVerdict(r: TextRule, f: TextFindings): Verdict {
  const kinds = f.credentials.join(", ");
  const artifacts = f.credentials.map((k) => `[REDACTED:${k}]`);
  if (r.onCredential === "mask") {
    return {
      ...fromSignal({
        decision: "allow",
        category: "data_exfiltration",
        severity: "warning",
        source: "pattern_match",
        rule: `aarts-credential-in-${r.field}`,
        reason: `${r.field} carries a credential (${kinds}); deliver the masked text`,
        artifacts,
      }),
      directives: { replacement_text: f.masked },
    };
  }
  return fromSignal({
    decision: "deny",
    category: "data_exfiltration",
    source: "pattern_match",
    rule: `aarts-credential-in-${r.field}`,
    reason: `${r.field} carries a credential (${kinds}); it would leave the machine`,
    artifacts,
  });
}

/** Judges one text by the rule of its hook; records denials and counts in the session. */
export function judgeText(ctx: EvalContext, r: TextRule, text: string): Verdict {
  const f = scanText(text);
  count(ctx.session, r.hook);
  const signals: Verdict[] = [];
  if (f.credentials.length > 0) signals.push(credentialVerdict(r, f));
  if (f.injections.length > 0) {
    if (r.onInjection === "deny") ctx.session.poisoned.push(`prompt injection in ${r.hook}`);
    signals.push(
      fromSignal({
        decision: r.onInjection,
        category: "prompt_injection",
        severity: r.onInjection === "allow" ? "warning" : undefined,
        source: "pattern_match",
        rule: f.injections[0] as string,
        reason: `${r.field} carries prompt-injection phrasing (${f.injections.join(", ")})`,
      } as Parameters<typeof fromSignal>[0]),
    );
  }
  const v = merge(allow("prompt_injection", "pattern_match"), ...signals);
  if (v.decision === "deny") noteDenial(ctx, r.hook, r.field, v.reasons?.[0] ?? "denied");
  return v;
}

export function preUserInput(ctx: EvalContext, e: HookEventOf<"PreUserInput">): Verdict {
  return judgeText(
    ctx,
    { hook: e.hook_point, field: "raw_input", onInjection: "allow", onCredential: "deny" },
    e.raw_input,
  );
}

export function postInputProcessing(ctx: EvalContext, e: HookEventOf<"PostInputProcessing">): Verdict {
  const rule: TextRule = {
    hook: e.hook_point,
    field: "modified_value",
    onInjection: "ask",
    onCredential: "deny",
  };
  const modified = judgeText(ctx, rule, textOf(e.modified_value));
  if (!e.was_modified || modified.decision === "allow") return modified;
  // Phrasing the user typed is the user's; only what a processor added is suspect.
  const original = scanText(textOf(e.original_value));
  const added = scanText(textOf(e.modified_value));
  const introduced =
    added.injections.some((i) => !original.injections.includes(i)) ||
    added.credentials.some((c) => !original.credentials.includes(c));
  return introduced
    ? modified
    : allow("prompt_injection", "pattern_match", "nothing new was introduced by processing");
}

export function preLLMRequest(ctx: EvalContext, e: HookEventOf<"PreLLMRequest">): Verdict {
  const text = [textOf(e.full_prompt), e.system_prompt ?? "", textOf(e.context_injections ?? [])].join("\n");
  return judgeText(
    ctx,
    { hook: e.hook_point, field: "full_prompt", onInjection: "ask", onCredential: "deny" },
    text,
  );
}

export function postLLMResponse(ctx: EvalContext, e: HookEventOf<"PostLLMResponse">): Verdict {
  const rule: TextRule = {
    hook: e.hook_point,
    field: "response_text",
    onInjection: "allow",
    onCredential: "mask",
  };
  return judgeText(ctx, rule, e.response_text);
}

export function preOutputDeliver(ctx: EvalContext, e: HookEventOf<"PreOutputDeliver">): Verdict {
  return judgeText(
    ctx,
    { hook: e.hook_point, field: "output_text", onInjection: "allow", onCredential: "mask" },
    e.output_text,
  );
}

/**
 * The host's memory hooks are answered like the memory firewall's own operations: the
 * text is scanned by its detector, and the operation is a Gate decision on toolClass
 * `memory` (policy, session taint, journal), so a web-tainted session writing memory
 * meets the `host-ask-tainted-memory-write` rule of the host-tools preset.
 */
async function memoryDecision(
  ctx: EvalContext,
  action: "read" | "write",
  parameters: Record<string, string>,
): Promise<Verdict> {
  const outcome = await ctx.runtime.gate.evaluate({
    principalId: ctx.principalId,
    runId: ctx.session.runId,
    toolClass: "memory",
    action,
    parameters,
    taintLabels: ctx.session.taint,
    ...requestFields(ctx),
  });
  const fault = faultOf(outcome);
  if (fault) throw new HookError("ERR_HOOK_ENGINE_FAULT", `the Gate failed closed (${fault})`);
  if (outcome.decision === "allow" || outcome.decision === "modify")
    ctx.runtime.gate.release(outcome.decisionId);
  return fromGate(outcome, "memory", []);
}

export async function preMemoryWrite(ctx: EvalContext, e: HookEventOf<"PreMemoryWrite">): Promise<Verdict> {
  let v = judgeText(
    ctx,
    { hook: e.hook_point, field: "content", onInjection: "deny", onCredential: "deny" },
    textOf(e.content),
  );
  if (v.decision === "deny") return v;
  v = merge(
    v,
    await memoryDecision(ctx, "write", {
      store: e.memory_store,
      ...(e.memory_type !== undefined ? { memoryType: e.memory_type } : {}),
      ...(e.write_source !== undefined ? { writeSource: e.write_source } : {}),
    }),
  );
  if (v.decision !== "allow" || e.memory_type !== "instruction" || e.write_source === "user_request")
    return v;
  return merge(
    v,
    fromSignal({
      decision: "ask",
      category: "persistence",
      source: "heuristic",
      rule: "aarts-memory-instruction-write",
      reason: "the agent is storing an instruction in persistent memory that the user did not ask for",
    }),
  );
}

export async function preMemoryRead(ctx: EvalContext, e: HookEventOf<"PreMemoryRead">): Promise<Verdict> {
  addTaint(ctx, { source: "rag", origin: `memory:${e.memory_store.slice(0, 200)}`, addedAt: ctx.now });
  const rule: TextRule = {
    hook: e.hook_point,
    field: "retrieved_content",
    onInjection: "deny",
    onCredential: "deny",
  };
  const v = judgeText(ctx, rule, textOf(e.retrieved_content));
  if (v.decision === "deny") return v;
  return merge(v, await memoryDecision(ctx, "read", { store: e.memory_store }));
}

/**
 * A sub-agent's result is as trusted as what the sub-agent read (taint-trust.ts): trusted
 * only when its own tool calls came under its id and neither its session nor the parent's
 * holds untrusted content — then a finding is journaled without poisoning. Otherwise (its
 * reads unknown, or untrusted) it taints the session, and injection phrasing denies and poisons.
 */
export function postSubAgentResult(ctx: EvalContext, e: HookEventOf<"PostSubAgentResult">): Verdict {
  const source = subAgentSource(ctx.session, ctx.state.sessions[e.sub_agent_id]);
  const trusted = trustOf(source).trust === "trusted";
  if (!trusted) {
    const label = {
      source: "tool-output" as const,
      origin: `sub-agent:${e.sub_agent_id.slice(0, 200)}`,
      addedAt: ctx.now,
    };
    addTaint(ctx, label);
    // What a sub-agent whose reads are unknown answers is kept for flow control like a tool result.
    const text = textOf(e.result);
    recordFlowOutput(ctx, e.host_id, text.slice(0, MAX_SCAN_CHARS), text.length > MAX_SCAN_CHARS, [label]);
  }
  const rule: TextRule = {
    hook: e.hook_point,
    field: "result",
    onInjection: trusted ? "allow" : "deny",
    onCredential: "mask",
  };
  return judgeText(ctx, rule, textOf(e.result));
}
