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

// Configured needle lists, lower-cased once per list (configuration never changes after
// parsing; a WeakMap, so a discarded configuration takes its entry with it).
const lowered = new WeakMap<readonly string[], readonly string[]>();

const containsAny = (texts: readonly string[], needles: readonly string[]) => {
  if (texts.length === 0) return false;
  let low = lowered.get(needles);
  if (low === undefined) {
    low = needles.map((n) => n.toLowerCase());
    lowered.set(needles, low);
  }
  for (const t of texts) {
    const s = t.toLowerCase().replaceAll("\\", "/");
    for (const n of low) if (s.includes(n)) return true;
  }
  return false;
};

/** What a class and action alone say about a call, under one configuration. */
interface ActionKinds {
  fileRead: boolean;
  egress: boolean;
  anyEgress: boolean;
  shellExec: boolean;
  databaseWrite: boolean;
}

// Per configuration (never changed after parsing), the kinds of each class × action seen:
// nested maps keyed by the exact names, so no pair of names can stand for another, and
// bounded (cleared when full: class and action names come from requests).
const kindsByRules = new WeakMap<Rules, { byClass: Map<string, Map<string, ActionKinds>>; size: number }>();
const KINDS_MAX = 4096;

function actionKinds(rules: Rules, c: string, a: string): ActionKinds {
  let cache = kindsByRules.get(rules);
  if (cache === undefined) {
    cache = { byClass: new Map(), size: 0 };
    kindsByRules.set(rules, cache);
  }
  const hit = cache.byClass.get(c)?.get(a);
  if (hit !== undefined) return hit;
  const kinds: ActionKinds = {
    fileRead: matchesAction(rules.fileReads, c, a),
    egress: matchesAction(rules.egress, c, a),
    anyEgress: matchesAction(rules.anyEgress, c, a),
    shellExec: matchesAction(rules.shellExec, c, a),
    databaseWrite: matchesAction(rules.databaseWrites, c, a),
  };
  if (cache.size >= KINDS_MAX) {
    cache.byClass.clear();
    cache.size = 0;
  }
  let byAction = cache.byClass.get(c);
  if (byAction === undefined) {
    byAction = new Map();
    cache.byClass.set(c, byAction);
  }
  byAction.set(a, kinds);
  cache.size++;
  return kinds;
}

/** Signals of a proposed call: what kind of behaviour it is, from class, action and parameters. */
export function classify(
  request: Pick<GateRequest, "toolClass" | "action" | "parameters">,
  rules: Rules,
): Signal[] {
  const { toolClass: c, action: a } = request;
  const k = actionKinds(rules, c, a);
  const texts = strings(request.parameters);
  const out: Signal[] = [];
  if (k.fileRead && containsAny(texts, rules.sensitivePaths)) out.push("sensitive_read");
  if (k.egress) out.push("egress");
  if (k.egress || k.anyEgress) out.push("any_egress");
  if (k.shellExec) {
    out.push("shell_exec");
    // All string arguments count: renaming `command` to `args` must not hide the data.
    if (texts.join(" ").length > rules.shellCommandLength) out.push("shell_with_data");
  }
  if (k.databaseWrite) out.push("database_write");
  if (
    (c === "database" && containsAny(texts, rules.secretTables)) ||
    (c === "http" && containsAny(texts, rules.secretEndpoints))
  ) {
    out.push("secret_access");
  }
  return out;
}

export const ADMITTED: ReadonlySet<Decision | undefined> = new Set(["allow", "modify"]);

/**
 * What the sequence rules ask of the window, each answer the newest event in it that
 * fits. `scanView` answers by scanning an array (the reference); the session's
 * BehaviourWindow answers from indexes it keeps as events arrive (facts.ts), and a
 * property test holds the two to the same answers.
 */
export interface WindowView {
  /** The newest event carrying an untrusted taint source. */
  lastUntrusted(): WindowEvent | undefined;
  /** The newest admitted (allow, modify) call with this signal. */
  lastAdmittedWith(signal: "sensitive_read" | "secret_access"): WindowEvent | undefined;
  /** The newest denied call of a class whose risk is below `risk`. */
  lastDeniedBelow(risk: number): WindowEvent | undefined;
}

function isView(w: readonly WindowEvent[] | WindowView): w is WindowView {
  return !Array.isArray(w);
}

// The untrusted sources as a set, once per configuration (it never changes after parsing).
const untrustedSets = new WeakMap<Rules, ReadonlySet<TaintSource>>();

export function untrustedOf(rules: Rules): ReadonlySet<TaintSource> {
  let set = untrustedSets.get(rules);
  if (set === undefined) {
    set = new Set<TaintSource>(rules.untrustedSources);
    untrustedSets.set(rules, set);
  }
  return set;
}

/** The denied calls `lastDeniedBelow` looks for: a call denied in a class with a risk. */
export function deniedRisk(ev: WindowEvent, rules: Rules): number | undefined {
  return ev.kind === "call" && ev.decision === "deny" ? rules.classRisk[ev.toolClass] : undefined;
}

/** The reference WindowView: scans `window` (oldest first) from its newest event. */
export function scanView(window: readonly WindowEvent[], rules: Rules): WindowView {
  const untrusted = untrustedOf(rules);
  const lastWhere = (pred: (e: WindowEvent) => boolean): WindowEvent | undefined => {
    for (let i = window.length - 1; i >= 0; i--) if (pred(window[i]!)) return window[i];
    return undefined;
  };
  return {
    lastUntrusted: () => lastWhere((ev) => ev.taint.some((t) => untrusted.has(t))),
    lastAdmittedWith: (signal) => lastWhere((ev) => ADMITTED.has(ev.decision) && ev.signals.includes(signal)),
    lastDeniedBelow: (risk) =>
      lastWhere((ev) => {
        const r = deniedRisk(ev, rules);
        return r !== undefined && r < risk;
      }),
  };
}

/**
 * Evaluates the enabled rules, in Ari's order, for `candidate` after the `window` events
 * (oldest first). Returns every match; the first is the quarantine trigger.
 */
export function evaluateRules(
  window: readonly WindowEvent[] | WindowView,
  candidate: Candidate,
  rules: Rules,
): RuleMatch[] {
  const view = isView(window) ? window : scanView(window, rules);
  const untrusted = untrustedOf(rules);
  const has = (s: Signal) => candidate.signals.includes(s);
  const callTainted = candidate.taint.some((t) => untrusted.has(t));
  // The taint rules are armed by the call's own taint, or (scope "window") by any untrusted
  // label seen in the window.
  const armedBy = (): number[] | undefined => {
    if (callTainted) return [];
    if (rules.taintScope === "call") return undefined;
    const e = view.lastUntrusted();
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
        const e = view.lastDeniedBelow(risk);
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
        const e = view.lastAdmittedWith("sensitive_read");
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
        const e = view.lastAdmittedWith("secret_access");
        return e && { ruleId: id, reason: "secret access followed by egress", matchedEvents: [e.seq] };
      }
    }
  }
}

const ORDER: readonly BehaviouralRuleId[] = BEHAVIOURAL_RULE_IDS;
