// The shadow report (docs/policy.md#shadow-policies): what a shadow bundle would have done
// differently over a journal's decisions, grouped by the rules that made the difference
// and by tool, with a few example calls each. Two passes over the entries: the first
// counts decisions and groups the `warden.policy.shadow_diff` entries (memory bounded by the
// number of groups, never by the journal's length), the second fetches the examples'
// parameters from their `warden.gate.decision` entries. `sha256` names the report's
// canonical content, which `warden shadow promote` records as the report the operator saw.
import {
  canonicalJson,
  GATE_DECISION,
  isPlainObject,
  POLICY_SHADOW_DIFF,
  POLICY_SHADOW_DROPPED,
  sha256Of,
} from "../contracts/index.js";

export const SHADOW_REPORT_FORMAT = "warden.shadow-report/1";
const MAX_GROUPS = 1000;
const EXAMPLES_PER_GROUP = 3;

export interface ShadowExample {
  decision_id: string;
  time: string;
  run_id: string | null;
  tool: string;
  /** The call's parameters as the decision entry journaled them (absent when not found). */
  parameters?: unknown;
}

export interface ShadowGroup {
  /** `enforced→shadow` decisions, e.g. `allow→deny`. */
  change: string;
  /** The rule ids the shadow bundle matched (what made it decide otherwise). */
  shadow_rules: string[];
  enforced_rules: string[];
  tool: string;
  count: number;
  examples: ShadowExample[];
}

export interface ShadowReport {
  format: typeof SHADOW_REPORT_FORMAT;
  since: string | null;
  /** Time of the last entry read. */
  until: string | null;
  /** The shadow bundles loaded or disagreeing in the window (a report over a bundle change names both). */
  shadow_bundles: string[];
  enforced_bundles: string[];
  /** Gate decisions in the window (the population the diffs are out of). */
  decisions: number;
  diffs: number;
  /** Decisions the shadow never judged (its queue was full). */
  dropped: number;
  /** Groups beyond the report's bound were counted in `diffs` only. */
  groups_truncated: boolean;
  groups: ShadowGroup[];
  by_tool: { tool: string; diffs: number; changes: Record<string, number> }[];
  /** sha256 of the canonical JSON of everything above. */
  sha256: string;
}

export interface ShadowReportOptions {
  /** ISO time; entries before it are ignored. */
  since?: string;
}

interface Tally {
  decisions: number;
  diffs: number;
  dropped: number;
  until: string | null;
  shadow: Set<string>;
  enforced: Set<string>;
  groups: Map<string, ShadowGroup>;
  truncated: boolean;
}

/** Builds the report from a journal's entries (`entries` is called twice: two passes). */
export async function shadowReport(
  entries: () => AsyncIterable<unknown>,
  options: ShadowReportOptions = {},
): Promise<ShadowReport> {
  const since = options.since ?? null;
  const t: Tally = {
    decisions: 0,
    diffs: 0,
    dropped: 0,
    until: null,
    shadow: new Set(),
    enforced: new Set(),
    groups: new Map(),
    truncated: false,
  };
  for await (const raw of entries()) {
    const e = entryOf(raw);
    if (e === undefined || (since !== null && e.time < since)) continue;
    t.until = e.time;
    if (e.type === GATE_DECISION) t.decisions++;
    else if (e.type === POLICY_SHADOW_DROPPED) t.dropped += num(e.body.dropped);
    else if (e.type === POLICY_SHADOW_DIFF) tallyDiff(t, e);
    else if (e.type === "warden.policy.bundle_loaded" && e.body.source === "shadow") {
      const h = str(e.body.policy_bundle_hash);
      if (h !== "") t.shadow.add(h);
    }
  }
  await fillParameters(entries, t.groups);
  return seal(since, t);
}

function tallyDiff(t: Tally, e: Entry): void {
  const b = e.body;
  const enforced = verdict(b.enforced);
  const shadow = verdict(b.shadow);
  t.diffs++;
  if (shadow.bundle !== "") t.shadow.add(shadow.bundle);
  if (enforced.bundle !== "") t.enforced.add(enforced.bundle);
  const tool = str(b.tool) || `${str(b.tool_class)}.${str(b.action)}`;
  const change = `${enforced.decision}→${shadow.decision}`;
  const key = canonicalJson([change, shadow.rules, enforced.rules, tool]);
  let g = t.groups.get(key);
  if (g === undefined) {
    if (t.groups.size >= MAX_GROUPS) {
      t.truncated = true;
      return;
    }
    g = { change, shadow_rules: shadow.rules, enforced_rules: enforced.rules, tool, count: 0, examples: [] };
    t.groups.set(key, g);
  }
  g.count++;
  if (g.examples.length < EXAMPLES_PER_GROUP)
    g.examples.push({ decision_id: str(b.decision_id), time: e.time, run_id: e.run_id, tool });
}

/** Second pass: the examples' parameters, from their decision entries. */
async function fillParameters(entries: () => AsyncIterable<unknown>, groups: Map<string, ShadowGroup>) {
  const wanted = new Map<string, ShadowExample[]>();
  for (const g of groups.values())
    for (const x of g.examples) wanted.set(x.decision_id, [...(wanted.get(x.decision_id) ?? []), x]);
  if (wanted.size === 0) return;
  for await (const raw of entries()) {
    const e = entryOf(raw);
    if (e?.type !== GATE_DECISION) continue;
    const xs = wanted.get(str(e.body.decision_id));
    if (xs === undefined) continue;
    for (const x of xs) x.parameters = e.body.parameters_elided ?? e.body.parameters ?? {};
  }
}

function seal(since: string | null, t: Tally): ShadowReport {
  const groups = [...t.groups.values()].sort((a, b) => b.count - a.count || (a.tool < b.tool ? -1 : 1));
  const tools = new Map<string, { tool: string; diffs: number; changes: Record<string, number> }>();
  for (const g of groups) {
    const x = tools.get(g.tool) ?? { tool: g.tool, diffs: 0, changes: {} };
    x.diffs += g.count;
    x.changes[g.change] = (x.changes[g.change] ?? 0) + g.count;
    tools.set(g.tool, x);
  }
  const body = {
    format: SHADOW_REPORT_FORMAT,
    since,
    until: t.until,
    shadow_bundles: [...t.shadow].sort(),
    enforced_bundles: [...t.enforced].sort(),
    decisions: t.decisions,
    diffs: t.diffs,
    dropped: t.dropped,
    groups_truncated: t.truncated,
    groups,
    by_tool: [...tools.values()].sort((a, b) => b.diffs - a.diffs),
  } as const;
  return { ...body, sha256: sha256Of(body) };
}

interface Entry {
  type: string;
  time: string;
  run_id: string | null;
  body: Record<string, unknown>;
}

function entryOf(raw: unknown): Entry | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { type, time, run_id, body } = raw as Record<string, unknown>;
  if (typeof type !== "string" || typeof time !== "string" || !isPlainObject(body)) return undefined;
  return { type, time, run_id: typeof run_id === "string" ? run_id : null, body };
}

function verdict(v: unknown): { decision: string; rules: string[]; bundle: string } {
  const o = isPlainObject(v) ? (v as Record<string, unknown>) : {};
  const rules = Array.isArray(o.rule_ids) ? o.rule_ids.filter((x): x is string => typeof x === "string") : [];
  return { decision: str(o.decision) || "?", rules, bundle: str(o.policy_bundle_hash) };
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
