// Correlation ids of the derived DARE records, in one place. The trace id of every record
// of an action is the trace id its journal entries carry (the Gate's, from the caller's
// `traceId` or derived from the run); when the runtime starts carrying the OpenTelemetry
// trace id there, every exported record follows without a change here.

import { uuidFor } from "../executors/index.js";
import { dareRunId, runTraceId } from "../gate/index.js";
import type { JournalEntry } from "../journal/index.js";

export { dareRunId, uuidFor };

/** The DARE trace id of an entry: its own, else the run's stable one. */
export function traceIdOf(e: Pick<JournalEntry, "trace_id" | "run_id">): string {
  return e.trace_id ?? runTraceId(e.run_id ?? "unattributed");
}

/** A stable UUID for the ledger event derived from a journal entry (from its hash). */
export function ledgerEventId(e: Pick<JournalEntry, "hash">): string {
  return uuidFor(`ledger:${e.hash}`);
}

/** DARE wants SPIFFE ids for agents; a principal that is not one gets Warden's local trust domain. */
export function spiffeOf(principal: string): string {
  if (principal.startsWith("spiffe://")) return principal;
  return `spiffe://warden.local/principal/${encodeURIComponent(principal)}`;
}

/** The per-run agent instance id: the principal's SPIFFE id with the run as fragment. */
export function agentInstanceId(principal: string, runId: string): string {
  return `${spiffeOf(principal)}#${encodeURIComponent(runId)}`;
}

/** The id of a ReplayTrace step: the run's DARE id and the step's index. */
export function replayStepId(runId: string, index: number): string {
  return `trace-step-${dareRunId(runId)}-${index}`;
}
