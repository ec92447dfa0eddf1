// Which tools a principal may even see: `tools/list` shows only what its policy can ever
// allow. The YAML rules are walked in their evaluation order with a probe — the principal
// (id, roles), the tool as the Gate would present it, an empty session — and each rule is
// judged by the first condition it fails: a condition on who or what (tool class, action,
// tool, principal, roles, risk tier, category, human approval) can never hold for this
// pair, anything else (parameters, taint, counters, trust, identity…) might hold some day.
// So a non-deny rule that fails only on such a dynamic condition, or that matches, makes
// the tool visible; a deny that matches the probe (before any allow) hides it. Cedar has
// no trace to walk: with Cedar sources the probe's combined decision must not be deny.
// Hiding is a convenience and a least-privilege view; every call is still decided by the Gate.

import type { GatePolicy } from "../gate/index.js";
import { COUNTER_NAMES, type PolicyBundle, type PolicyInput } from "../policy/index.js";
import type { CompiledTool, ToolClassification } from "../tools/index.js";

const STATIC_CONDITIONS: ReadonlySet<string> = new Set([
  "toolClass",
  "action",
  "tool",
  "principalId",
  "roles",
  "riskTier",
  "category",
  "humanApproval",
]);

function isStatic(condition: string | undefined): boolean {
  if (condition === undefined) return false;
  return STATIC_CONDITIONS.has(condition) || condition.startsWith("message");
}

export interface VisibilityProbe {
  principalId: string;
  roles: readonly string[];
  tool: CompiledTool;
  classification: ToolClassification;
}

function probeInput(p: VisibilityProbe): PolicyInput {
  const t = p.tool.contract.tool;
  return {
    request: {
      principalId: p.principalId,
      runId: "visibility-probe",
      toolClass: p.classification.toolClass,
      action: p.classification.action,
      tool: p.tool.name,
      parameters: {},
      taintLabels: [],
    },
    principal: { id: p.principalId, roles: [...p.roles] },
    tool: {
      name: p.tool.name,
      version: t.version,
      riskTier: t.risk_tier,
      humanApproval: t.human_approval,
      ...(t.category !== undefined ? { category: t.category } : {}),
    },
    taint: [],
    session: {
      runId: "visibility-probe",
      counters: Object.fromEntries(
        COUNTER_NAMES.map((c) => [c, 0]),
      ) as unknown as PolicyInput["session"]["counters"],
      perToolCalls: {},
      dataClassificationsSeen: [],
      quarantined: false,
    },
  };
}

function hasExplain(p: GatePolicy): p is GatePolicy & Pick<PolicyBundle, "explain" | "yaml" | "cedar"> {
  return typeof (p as { explain?: unknown }).explain === "function";
}

/** Whether some context exists in which the policy would not deny this principal this tool. */
export function canEverAllow(policy: GatePolicy, probe: VisibilityProbe): boolean {
  const input = probeInput(probe);
  if (!hasExplain(policy)) return policy.evaluate(input).decision !== "deny";
  const e = policy.explain(input);
  if (e.capability?.denied === true) return false;
  if (policy.cedar !== undefined && e.outcome.decision === "deny" && policy.yaml === undefined) return false;
  if (policy.yaml === undefined) return e.outcome.decision !== "deny";
  for (const rule of e.yaml) {
    if (rule.matched) return rule.decision !== "deny" && rule.notEvaluable === undefined;
    if (rule.decision !== "deny" && !isStatic(rule.failed)) return true;
  }
  return false;
}
