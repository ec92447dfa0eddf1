// Ari Kernel's six behavioural sequence rules over a bounded window of recent events:
// direct pattern matching in code, no DSL. Each proposed call is classified into signals
// (sensitive read, egress, secret access...) from its class, action and parameters; a rule
// matches when an earlier event in the window and the proposed call form its pattern. The
// caller denies the matching call and quarantines the run.
import type { Decision, GateRequest, TaintSource } from "../contracts/index.js";
import { BEHAVIOURAL_RULE_IDS, type BehaviouralRuleId, type ContextConfig, matchesAction } from "./config.js";

export type Signal =
  | "sensitive_read"
  | "egress"
  | "any_egress"
  | "secret_access"
  | "shell_exec"
  | "shell_with_data"
  | "database_write";

/** One entry of the recent-event window: a decided call, or an observed result. */
export interface WindowEvent {
  /** Session sequence number of the event. */
  seq: number;
  kind: "call" | "result";
  toolClass: string;
  action: string;
  tool?: string;
  /** For calls: the decision (admission after a step_up/defer resolution is its own event). */
  decision?: Decision;
  taint: TaintSource[];
  signals: Signal[];
}

/** The proposed call, classified, before it has a decision or a sequence number. */
export interface Candidate {
  toolClass: string;
  action: string;
  taint: TaintSource[];
  signals: Signal[];
}

export interface RuleMatch {
  ruleId: BehaviouralRuleId;
  reason: string;
  /** Sequence numbers of the earlier window events that formed the pattern. */
  matchedEvents: number[];
}

type Rules = ContextConfig["rules"];

const MAX_STRINGS = 4096;

/** String leaves of the parameters (bounded), for substring checks. */
function strings(value: unknown, out: string[] = [], depth = 0): string[] {
  if (out.length >= MAX_STRINGS || depth > 32) return out;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out, depth + 1);
  else if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) strings(v, out, depth + 1);
  }
  return out;
}

const containsAny = (texts: readonly string[], needles: readonly string[]) => {
  for (const t of texts) {
    const s = t.toLowerCase().replaceAll("\\", "/");
    for (const n of needles) if (s.includes(n.toLowerCase())) return true;
  }
  return false;
};

/** Signals of a proposed call: what kind of behaviour it is, from class, action and parameters. */
export function classify(
  request: Pick<GateRequest, "toolClass" | "action" | "parameters">,
  rules: Rules,
): Signal[] {
  const { toolClass: c, action: a } = request;
  const texts = strings(request.parameters);
  const out: Signal[] = [];
  if (matchesAction(rules.fileReads, c, a) && containsAny(texts, rules.sensitivePaths))
    out.push("sensitive_read");
  const egress = matchesAction(rules.egress, c, a);
  if (egress) out.push("egress");
  if (egress || matchesAction(rules.anyEgress, c, a)) out.push("any_egress");
  if (matchesAction(rules.shellExec, c, a)) {
    out.push("shell_exec");
    // All string arguments count: renaming `command` to `args` must not hide the data.
    if (texts.join(" ").length > rules.shellCommandLength) out.push("shell_with_data");
  }
  if (matchesAction(rules.databaseWrites, c, a)) out.push("database_write");
  if (
    (c === "database" && containsAny(texts, rules.secretTables)) ||
    (c === "http" && containsAny(texts, rules.secretEndpoints))
  ) {
    out.push("secret_access");
  }
  return out;
}

const ADMITTED: ReadonlySet<Decision | undefined> = new Set(["allow", "modify"]);

/**
 * Evaluates the enabled rules, in Ari's order, for `candidate` after the `window` events
 * (oldest first). Returns every match; the first is the quarantine trigger.
 */
export function evaluateRules(
  window: readonly WindowEvent[],
  candidate: Candidate,
  rules: Rules,
): RuleMatch[] {
  const untrusted = new Set<TaintSource>(rules.untrustedSources);
  const has = (s: Signal) => candidate.signals.includes(s);
  const callTainted = candidate.taint.some((t) => untrusted.has(t));
  const lastWhere = (pred: (e: WindowEvent) => boolean): WindowEvent | undefined => {
    for (let i = window.length - 1; i >= 0; i--) if (pred(window[i]!)) return window[i];
    return undefined;
  };
  // The taint rules are armed by the call's own taint, or (scope "window") by any untrusted
  // label seen in the window.
  const armedBy = (): number[] | undefined => {
    if (callTainted) return [];
    if (rules.taintScope === "call") return undefined;
    const e = lastWhere((ev) => ev.taint.some((t) => untrusted.has(t)));
    return e === undefined ? undefined : [e.seq];
  };
  const out: RuleMatch[] = [];
  for (const id of rules.enabled) {
    const m = evaluateOne(id);
    if (m !== undefined) out.push(m);
  }
  // Keep Ari's order whatever order `enabled` lists them in.
  return out.sort((x, y) => ORDER.indexOf(x.ruleId) - ORDER.indexOf(y.ruleId));

  function evaluateOne(id: BehaviouralRuleId): RuleMatch | undefined {
    switch (id) {
      case "web_taint_sensitive_probe": {
        if (!(has("sensitive_read") || has("shell_exec") || has("egress"))) return undefined;
        const by = armedBy();
        return (
          by && {
            ruleId: id,
            reason: "untrusted taint followed by a sensitive read, shell or egress",
            matchedEvents: by,
          }
        );
      }
      case "denied_capability_then_escalation": {
        const risk = rules.classRisk[candidate.toolClass];
        if (risk === undefined) return undefined;
        const e = lastWhere((ev) => {
          const r = rules.classRisk[ev.toolClass];
          return ev.kind === "call" && ev.decision === "deny" && r !== undefined && r < risk;
        });
        return (
          e && {
            ruleId: id,
            reason: "a denial followed by a request for a riskier tool class",
            matchedEvents: [e.seq],
          }
        );
      }
      case "sensitive_read_then_egress": {
        if (!has("egress")) return undefined;
        const e = lastWhere((ev) => ADMITTED.has(ev.decision) && ev.signals.includes("sensitive_read"));
        return (
          e && {
            ruleId: id,
            reason: "a sensitive file read followed by outbound egress",
            matchedEvents: [e.seq],
          }
        );
      }
      case "tainted_database_write": {
        if (!has("database_write")) return undefined;
        const by = armedBy();
        return (
          by && { ruleId: id, reason: "untrusted taint followed by a database write", matchedEvents: by }
        );
      }
      case "tainted_shell_with_data": {
        if (!has("shell_with_data")) return undefined;
        const by = armedBy();
        return (
          by && {
            ruleId: id,
            reason: "untrusted taint followed by a shell command carrying data",
            matchedEvents: by,
          }
        );
      }
      case "secret_access_then_any_egress": {
        if (!has("any_egress")) return undefined;
        const e = lastWhere((ev) => ADMITTED.has(ev.decision) && ev.signals.includes("secret_access"));
        return e && { ruleId: id, reason: "secret access followed by egress", matchedEvents: [e.seq] };
      }
    }
  }
}

const ORDER: readonly BehaviouralRuleId[] = BEHAVIOURAL_RULE_IDS;
