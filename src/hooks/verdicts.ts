// Verdict construction and merging (§6.5, §6.6): several signals on one event merge with
// the strictest decision winning, deny > ask > allow; reasons, artifacts and directives of
// the winning signals are kept.
import type { GateOutcome } from "../gate/index.js";
import type { Directives, HookDecision, Verdict } from "./schema-base.js";

const RANK: Readonly<Record<HookDecision, number>> = { allow: 0, ask: 1, deny: 2 };
const SEVERITY: Readonly<Record<Verdict["severity"], number>> = { info: 0, warning: 1, critical: 2 };

export function allow(category: string, source: string, reason?: string): Verdict {
  return { decision: "allow", category, severity: "info", source, ...(reason ? { reasons: [reason] } : {}) };
}

export interface Signal {
  decision: HookDecision;
  category: string;
  severity?: Verdict["severity"];
  source: string;
  rule?: string;
  reason: string;
  artifacts?: string[];
  confidence?: number;
}

export function fromSignal(s: Signal): Verdict {
  return {
    decision: s.decision,
    category: s.category,
    severity: s.severity ?? (s.decision === "deny" ? "critical" : s.decision === "ask" ? "warning" : "info"),
    source: s.source,
    ...(s.confidence !== undefined ? { confidence: s.confidence } : {}),
    ...(s.rule !== undefined ? { matched_rule_id: s.rule } : {}),
    reasons: [s.reason],
    ...(s.artifacts && s.artifacts.length > 0 ? { artifacts: s.artifacts } : {}),
    ...(s.decision === "ask" ? { suggested_resolutions: ["allow_always", "deny_always"] } : {}),
  };
}

/** deny > ask > allow; on a tie the first keeps its category; reasons of the winners are joined. */
export function merge(base: Verdict, ...more: Verdict[]): Verdict {
  let out = base;
  for (const v of more) {
    if (RANK[v.decision] > RANK[out.decision]) out = { ...v, reasons: [...(v.reasons ?? [])] };
    else if (RANK[v.decision] === RANK[out.decision]) {
      // Same decision: the more severe signal names the verdict; every non-trivial reason is kept.
      const head = SEVERITY[v.severity] > SEVERITY[out.severity] ? v : out;
      const reasons = [
        ...(out.reasons ?? []),
        ...(v.severity !== "info" || v.decision !== "allow" ? (v.reasons ?? []) : []),
      ];
      out = { ...head, reasons };
    }
  }
  const directives = [base, ...more].reduce<Directives | undefined>(
    (d, v) => (v.directives ? { ...(d ?? {}), ...v.directives } : d),
    undefined,
  );
  return directives && out.decision !== "deny" ? { ...out, directives } : out;
}

const CATEGORY_OF_CLASS: Readonly<Record<string, string>> = {
  shell: "tool_execution",
  http: "network_egress",
  mcp: "tool_execution",
  file: "tool_execution",
  database: "tool_execution",
  delegate: "privilege_escalation",
};

/** The Gate's five decisions onto AARTS's three: step_up/defer need a human (ask); modify too, a host cannot apply it. */
export function fromGate(o: GateOutcome, toolClass: string, artifacts: string[]): Verdict {
  const decision: HookDecision = o.decision === "allow" ? "allow" : o.decision === "deny" ? "deny" : "ask";
  const first = o.matchedRules.find((r) => r.decision === o.policyDecision) ?? o.matchedRules[0];
  const rule = first?.id;
  const shown = o.reasonCodes.filter((c) => c !== first?.reason);
  const codes = shown.length > 0 ? ` (${shown.join(", ")})` : "";
  const reason = `${first?.reason ?? `${o.decision} by policy`}${decision === "allow" ? "" : codes}`;
  return fromSignal({
    decision,
    category: CATEGORY_OF_CLASS[toolClass] ?? "tool_execution",
    source: "policy",
    reason,
    artifacts,
    ...(rule !== undefined ? { rule } : {}),
  });
}
