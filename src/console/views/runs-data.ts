// What the runs pages read, all from the journal through the runtime: the runs seen in
// the newest entries (bounded scan) with their counts, one run's entries in order, and
// the run's principal and quarantine state (session, persisted principal state, APAE).
import { GATE_DECISION, GATE_RESOLUTION, GATE_RESULT, type GateDecisionBody } from "../../contracts/index.js";
import { type JournalEntry, MalformedRecord } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { MAX_SCANNED_ENTRIES, MAX_TIMELINE_ROWS, viewError } from "./common.js";

export interface RunSummary {
  runId: string;
  principal: string | undefined;
  first: string;
  last: string;
  lastSeq: number;
  entries: number;
  decisions: number;
  denials: number;
  executions: number;
  approvals: number;
}

export interface RunList {
  runs: RunSummary[];
  /** Entries scanned (the newest MAX_SCANNED_ENTRIES) and whether older ones were left out. */
  scanned: number;
  cut: boolean;
}

function count(r: RunSummary, e: JournalEntry): void {
  r.entries++;
  r.last = e.time;
  r.lastSeq = e.seq;
  if (e.type === GATE_DECISION) {
    const b = e.body as Partial<GateDecisionBody>;
    r.decisions++;
    if (b.decision === "deny") r.denials++;
    r.principal ??= typeof b.principal_id === "string" ? b.principal_id : undefined;
  } else if (e.type === GATE_RESULT) r.executions++;
  else if (e.type === GATE_RESOLUTION && (e.body as { via?: unknown }).via === "approval") r.approvals++;
}

/** The runs of the newest entries, most recently active first. */
export async function listRuns(rt: Runtime): Promise<RunList> {
  const total = await rt.store.count();
  const from = Math.max(1, total - MAX_SCANNED_ENTRIES + 1);
  const runs = new Map<string, RunSummary>();
  let scanned = 0;
  for await (const e of rt.store.entries(from)) {
    scanned++;
    if (e instanceof MalformedRecord || e.run_id === null) continue;
    let r = runs.get(e.run_id);
    if (r === undefined) {
      r = {
        runId: e.run_id,
        principal: undefined,
        first: e.time,
        last: e.time,
        lastSeq: e.seq,
        entries: 0,
        decisions: 0,
        denials: 0,
        executions: 0,
        approvals: 0,
      };
      runs.set(e.run_id, r);
    }
    count(r, e);
  }
  return { runs: [...runs.values()].sort((a, b) => b.lastSeq - a.lastSeq), scanned, cut: from > 1 };
}

export interface RunEntries {
  entries: JournalEntry[];
  /** More entries of the run follow this page. */
  more: boolean;
  principal: string | undefined;
}

/** One page of a run's entries in journal order; ERR_CONSOLE_VIEW_NOT_FOUND for a run with none. */
export async function runEntries(rt: Runtime, runId: string, page: number): Promise<RunEntries> {
  const want = page * MAX_TIMELINE_ROWS;
  const all = await rt.store.query({ run_id: runId, limit: want + 1 });
  if (all.length === 0)
    throw viewError("ERR_CONSOLE_VIEW_NOT_FOUND", `the journal holds no entry of run ${runId}`);
  const decision = all.find((e) => e.type === GATE_DECISION)?.body as Partial<GateDecisionBody> | undefined;
  return {
    entries: all.slice(want - MAX_TIMELINE_ROWS, want),
    more: all.length > want,
    principal: typeof decision?.principal_id === "string" ? decision.principal_id : undefined,
  };
}

export type QuarantineState =
  | { state: "quarantined"; by: "run" | "principal" | "trust"; reason: string }
  | { state: "clear" }
  | { state: "unknown" };

/** Whether the run (or its principal, or its APAE trust row) is quarantined now. */
export function quarantineOf(rt: Runtime, runId: string, principal: string | undefined): QuarantineState {
  const session = rt.sessions.get(runId);
  if (session?.quarantined === true)
    return { state: "quarantined", by: "run", reason: session.quarantineTrigger?.reason ?? "" };
  if (principal !== undefined) {
    const trigger = rt.sessions.principals.quarantineOf(principal);
    if (trigger !== undefined) return { state: "quarantined", by: "principal", reason: trigger.reason };
    const view = rt.apae?.viewOf(principal);
    if (view?.status === "quarantined")
      return {
        state: "quarantined",
        by: "trust",
        reason:
          view.quarantineUntil === null
            ? "APAE trust quarantine"
            : `until ${new Date(view.quarantineUntil).toISOString()}`,
      };
    return { state: "clear" };
  }
  return session === undefined ? { state: "unknown" } : { state: "clear" };
}
