// PreToolUse and PostToolUse onto the governed path. PreToolUse: the canonical tool is
// shaped into a structured Gate request (taxonomy.ts) and decided by the Gate — contracts,
// policy, the session's taint — and merged with the engine's own signals (a poisoned
// session may not send data out; remembered resolutions). PostToolUse: the result's taint
// and findings go into the session.
import { HookError, type TaintLabel } from "../contracts/index.js";
import { faultOf } from "../gate/index.js";
import { artifactValues, toolArtifacts } from "./artifacts.js";
import { count, type EvalContext, noteDenial } from "./context.js";
import { scanText, textOf } from "./detect.js";
import { credentialInWrite } from "./file-secrets.js";
import { recalled } from "./memory.js";
import type { Artifact, CanonicalTool, Verdict } from "./schema-base.js";
import type { HookEventOf } from "./schema-points.js";
import { EGRESS_TOOLS, gateShape, refineShell } from "./taxonomy.js";
import { fromGate, fromSignal, merge } from "./verdicts.js";

function canonical(e: { tool_name: CanonicalTool; tool_input: Record<string, unknown> }): CanonicalTool {
  const cmd = e.tool_input.command;
  return e.tool_name === "shell" && typeof cmd === "string" ? refineShell(cmd) : e.tool_name;
}

function engineSignals(ctx: EvalContext, tool: CanonicalTool, artifacts: Artifact[]): Verdict[] {
  const out: Verdict[] = [];
  if (ctx.session.poisoned.length > 0 && EGRESS_TOOLS.has(tool)) {
    out.push(
      fromSignal({
        decision: "deny",
        category: "data_exfiltration",
        source: "behavioral_analysis",
        rule: "aarts-egress-after-poisoned-result",
        reason: `a tool result in this session carried ${ctx.session.poisoned.join(", ")}; ${tool} may send data out`,
        artifacts: artifactValues(artifacts),
      }),
    );
  }
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
  const shape = await gateShape(tool, e.tool_name_native, e.tool_input, ctx.workspace, ctx.stateDirs ?? []);
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
  const outcome = await ctx.runtime.gate.evaluate({
    principalId: ctx.principalId,
    runId: ctx.session.runId,
    toolClass: shape.toolClass,
    action: shape.action,
    parameters: shape.parameters,
    taintLabels: ctx.session.taint,
  });
  const fault = faultOf(outcome);
  if (fault) throw new HookError("ERR_HOOK_ENGINE_FAULT", `the Gate failed closed (${fault})`);
  if (outcome.decision === "allow" || outcome.decision === "modify")
    ctx.runtime.gate.release(outcome.decisionId);
  count(ctx.session, "tool_calls");
  const values = artifactValues(artifacts);
  let verdict = merge(
    fromGate(outcome, shape.toolClass, values),
    ...engineSignals(ctx, tool, artifacts),
    ...credentialInWrite(tool, e.tool_input),
  );
  verdict = recalled(ctx.state.memory, tool, artifacts, verdict);
  if (verdict.decision === "deny") {
    const what = values[0] ?? e.tool_name_native ?? tool;
    noteDenial(ctx, "PreToolUse", what, verdict.reasons?.[0] ?? "denied", tool);
  }
  return { ...verdict, artifacts: values };
}

function taintSource(tool: CanonicalTool): TaintLabel["source"] {
  if (tool === "web_request" || tool === "browser") return "web";
  if (tool === "mcp_call") return "mcp";
  return "tool-output";
}

export function addTaint(ctx: EvalContext, label: TaintLabel): void {
  const t = ctx.session.taint;
  if (!t.some((x) => x.source === label.source && x.origin === label.origin)) t.push(label);
  if (t.length > 64) t.splice(0, t.length - 64);
}

export function postToolUse(ctx: EvalContext, e: HookEventOf<"PostToolUse">): Verdict {
  const tool = canonical(e);
  const native = (e.tool_name_native ?? tool).slice(0, 256);
  const source = taintSource(tool);
  if (source !== "tool-output") addTaint(ctx, { source, origin: native, addedAt: ctx.now });
  const f = scanText(textOf(e.tool_result));
  count(ctx.session, "tool_results");
  const signals: Verdict[] = [];
  if (f.injections.length > 0) {
    ctx.session.poisoned.push(`prompt injection from ${native}`);
    addTaint(ctx, {
      source: source === "tool-output" ? "tool-output" : source,
      origin: `${native}#injection`,
    });
    noteDenial(ctx, "PostToolUse", native, "the result carried prompt-injection phrasing", tool);
    signals.push(
      fromSignal({
        decision: "deny",
        category: "prompt_injection",
        source: "pattern_match",
        rule: f.injections[0] as string,
        reason: `the ${native} result carries prompt-injection phrasing; the session may no longer send data out`,
      }),
    );
  }
  if (f.credentials.length > 0) {
    ctx.session.poisoned.push(`a credential from ${native}`);
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
    reason: "result recorded",
  });
  return merge(base, ...signals);
}
