// PreToolUse and PostToolUse onto the governed path. PreToolUse: the canonical tool is
// shaped into a structured Gate request (taxonomy.ts) and decided by the Gate — contracts,
// policy, the taint of direct egress (poisoned.ts gateTaint) — and merged with the engine's
// own signals (what a poisoned session may still do: poisoned.ts; remembered resolutions).
// PostToolUse: the result's source and its trust level (taint-trust.ts) decide its taint,
// and whether a finding in it poisons the session.
import { HookError, type TaintLabel } from "../contracts/index.js";
import { faultOf } from "../gate/index.js";
import { artifactValues, toolArtifacts } from "./artifacts.js";
import { count, type EvalContext, noteDenial, poison } from "./context.js";
import { scanText } from "./detect.js";
import { credentialInWrite } from "./file-secrets.js";
import { feedFlow, flowJudged, flowScope, flowValues, recordFlowOutput } from "./flow-control.js";
import { recalled } from "./memory.js";
import { gateTaint, poisonedSignal } from "./poisoned.js";
import type { Artifact, CanonicalTool, Verdict } from "./schema-base.js";
import type { HookEventOf } from "./schema-points.js";
import { type ResultSource, resultSource, trustOf } from "./taint-trust.js";
import { EGRESS_TOOLS, gateShape, refineShell } from "./taxonomy.js";
import { resultText } from "./tool-result.js";
import { requestFields } from "./user-request.js";
import { fromGate, fromSignal, merge } from "./verdicts.js";

type ToolEvent = { tool_name: CanonicalTool; tool_input: Record<string, unknown> };

function canonical(e: ToolEvent): CanonicalTool {
  const cmd = e.tool_input.command;
  return e.tool_name === "shell" && typeof cmd === "string" ? refineShell(cmd) : e.tool_name;
}

function engineSignals(
  ctx: EvalContext,
  e: ToolEvent,
  tool: CanonicalTool,
  artifacts: Artifact[],
): Verdict[] {
  const out: Verdict[] = [];
  // What a poisoned session may still do: poisoned.ts (contained shell yes, direct egress no).
  const poisoned = poisonedSignal(ctx, tool, e.tool_input, artifactValues(artifacts));
  if (poisoned) out.push(poisoned);
  const secrets = artifacts.filter((a) => a.type === "credential");
  if (secrets.length > 0 && EGRESS_TOOLS.has(tool)) {
    out.push(
      fromSignal({
        decision: "deny",
        category: "data_exfiltration",
        source: "pattern_match",
        rule: "aarts-credential-in-egress",
        reason: `the ${tool} call carries a credential (${secrets.map((s) => s.context).join(", ")})`,
        artifacts: secrets.map((s) => s.value),
      }),
    );
  }
  return out;
}

export async function preToolUse(ctx: EvalContext, e: HookEventOf<"PreToolUse">): Promise<Verdict> {
  const tool = canonical(e);
  const shape = await gateShape(
    tool,
    e.tool_name_native,
    e.tool_input,
    ctx.workspace,
    ctx.stateDirs ?? [],
    ctx.profileConfig,
  );
  const written = (shape.writes ?? []).map(
    (value): Artifact => ({
      type: "file_path",
      value,
      context: "shell_write",
      source_field: "tool_input.command",
    }),
  );
  // The command's own artifacts first (a denial names the first), then the files it writes.
  const artifacts = [...toolArtifacts(tool, e.tool_input, e.artifacts), ...written].slice(0, 64);
  // A sink call is judged with the outputs it can have copied from (flow-control.ts).
  if (flowJudged(shape)) feedFlow(ctx, e.host_id, flowValues(shape));
  const outcome = await ctx.runtime.gate.evaluate(
    {
      principalId: ctx.principalId,
      runId: ctx.session.runId,
      toolClass: shape.toolClass,
      action: shape.action,
      parameters: shape.parameters,
      taintLabels: gateTaint(ctx.session.taint, shape),
      ...requestFields(ctx),
    },
    flowScope(shape),
  );
  const fault = faultOf(outcome);
  if (fault) throw new HookError("ERR_HOOK_ENGINE_FAULT", `the Gate failed closed (${fault})`);
  if (outcome.decision === "allow" || outcome.decision === "modify")
    ctx.runtime.gate.release(outcome.decisionId);
  count(ctx.session, "tool_calls");
  const values = artifactValues(artifacts);
  let verdict = merge(
    fromGate(outcome, shape.toolClass, values),
    ...engineSignals(ctx, e, tool, artifacts),
    ...credentialInWrite(tool, e.tool_input),
  );
  verdict = recalled(ctx.state.memory, tool, artifacts, verdict);
  if (verdict.decision === "deny") {
    const what = values[0] ?? e.tool_name_native ?? tool;
    noteDenial(ctx, "PreToolUse", what, verdict.reasons?.[0] ?? "denied", tool);
  }
  return { ...verdict, artifacts: values };
}

export function addTaint(ctx: EvalContext, label: TaintLabel): void {
  const t = ctx.session.taint;
  if (!t.some((x) => x.source === label.source && x.origin === label.origin)) t.push(label);
  if (t.length > 64) t.splice(0, t.length - 64);
}

export function postToolUse(ctx: EvalContext, e: HookEventOf<"PostToolUse">): Verdict {
  const tool = canonical(e);
  const native = (e.tool_name_native ?? tool).slice(0, 256);
  const source = resultSource(tool, native, e.tool_input, ctx.workspace, ctx.session, e.tool_result);
  const trust = trustOf(source);
  const label = trust.taint
    ? { source: trust.taint, origin: `${native}:${source}`, addedAt: ctx.now }
    : undefined;
  if (label) addTaint(ctx, label);
  const read = resultText(e.tool_result);
  const f = scanText(read.text);
  // An untrusted result is kept for flow control; one that carried instructions is labelled so.
  const flagged =
    f.injections.length > 0 ? [{ source: "instructions" as const, origin: `${native}#injection` }] : [];
  if (label) recordFlowOutput(ctx, e.host_id, read.text, read.truncated, [label, ...flagged]);
  count(ctx.session, "tool_results");
  const signals: Verdict[] = [];
  if (f.injections.length > 0) signals.push(injectionSignal(ctx, tool, native, source, f.injections));
  else if (read.truncated && trust.trust === "untrusted") {
    // Text beyond the scan budget was not read: an untrusted result is taken as poisoned.
    poison(ctx.session, `an unscanned remainder of a ${native} result (${source})`);
  }
  if (f.credentials.length > 0) {
    // A secret in the context is at risk whatever its source: the session is poisoned.
    poison(ctx.session, `a credential from ${native}`);
    const v = fromSignal({
      decision: "allow",
      category: "data_exfiltration",
      severity: "warning",
      source: "pattern_match",
      rule: "aarts-credential-in-result",
      reason: `the ${native} result carries a credential (${f.credentials.join(", ")}); it is masked`,
    });
    signals.push({ ...v, directives: { replacement_text: f.masked } });
  }
  const base = fromSignal({
    decision: "allow",
    category: "tool_execution",
    source: "policy",
    reason: `result recorded (${source}, ${trust.trust})`,
  });
  // The first finding names the verdict (a trusted source's finding is journaled by it).
  const [head, ...rest] = signals;
  return head ? merge(head, ...rest) : base;
}

/**
 * Instruction phrasing in a result. From an untrusted source it poisons the session and the
 * result is blocked; from a trusted one (the workspace) it is journaled at severity info.
 */
function injectionSignal(
  ctx: EvalContext,
  tool: CanonicalTool,
  native: string,
  source: ResultSource,
  rules: string[],
): Verdict {
  const rule = rules[0] as string;
  if (trustOf(source).trust === "trusted") {
    count(ctx.session, "trusted_findings");
    return fromSignal({
      decision: "allow",
      category: "prompt_injection",
      severity: "info",
      source: "pattern_match",
      rule,
      reason: `the ${native} result quotes prompt-injection phrasing (${rules.join(", ")}) from a trusted source (${source}); journaled, the session is not poisoned`,
    });
  }
  poison(ctx.session, `prompt injection from ${native} (${source})`);
  addTaint(ctx, { source: trustOf(source).taint ?? "tool-output", origin: `${native}#injection` });
  noteDenial(ctx, "PostToolUse", native, "the result carried prompt-injection phrasing", tool);
  return fromSignal({
    decision: "deny",
    category: "prompt_injection",
    source: "pattern_match",
    rule,
    reason: `the ${native} result (${source}) carries prompt-injection phrasing; the session is poisoned: direct egress tools are denied, contained shell commands still run`,
  });
}
