// A reported result (Gate.recordResult): its taint and provenance go into the session, its
// text is screened for instructions addressed to the agent (screening.ts), and it is journaled
// (`warden.gate.result`, then any quarantine) before the promise resolves. The session takes
// the label and the quarantine synchronously, before the first await: a journal that then
// refuses the entry rejects the promise, and the quarantine stays in force.
import type { DecisionId, TaintLabel } from "../contracts/index.js";
import { GATE_RESULT } from "./events.js";
import type { ReportedResult } from "./gate.js";
import type { GateDeps } from "./options.js";
import { journalQuarantine } from "./record.js";
import { screeningReason, screenOutput } from "./screening.js";

/** What `recordResult` reports back: the result's taint and classification, and the screening's finding. */
export interface RecordedOutput {
  taint: TaintLabel[];
  classification: string;
  /** Present when the output screening found instructions (rule ids; whether the run was quarantined). */
  screening?: { rules: string[]; quarantined: boolean };
}

const REPORTED_KEYS = [
  "taintLabels",
  "data",
  "classification",
  "outputHash",
  "tokens",
  "cost",
  "usage",
] as const;

/** The members of a report the session records (outcome is journaled by the Gate itself). */
function reportedInput(result: ReportedResult): ReportedResult {
  const input: ReportedResult = {};
  for (const k of REPORTED_KEYS)
    if (result[k] !== undefined) (input as Record<string, unknown>)[k] = result[k];
  return input;
}

/** Records, screens and journals the result of the admitted call `decisionId`. */
export async function recordResult(
  d: GateDeps,
  decisionId: DecisionId,
  result: ReportedResult,
): Promise<RecordedOutput> {
  const p = d.pending.take(decisionId);
  if (!p) throw new Error("recordResult: unknown or already reported decision id");
  const input = reportedInput(result);
  const request = p.prepared.request;
  const screen = screenOutput(d.o.outputScreening, request, input.data, result.error);
  if (screen.kind === "finding") input.taintLabels = [...(input.taintLabels ?? []), screen.label];
  const now = d.clock();
  const rec = p.session.recordResult(p.prepared, input, now);
  // In force before anything is awaited: the run's (and its principal's) next call sees it.
  const quarantine =
    screen.kind === "finding" && screen.mode === "quarantine"
      ? p.session.quarantine(screeningReason(request, screen.rules), now, {
          type: "output_screening",
          ...(screen.rules[0] !== undefined ? { ruleId: screen.rules[0] } : {}),
        })
      : [];
  const runId = request.runId;
  const resultEvent = rec.events.find((e) => e.type === "call.result");
  const resultSeq = resultEvent?.seq;
  // What was metered (a network call counts as at least one request): journaled with the result.
  const usage = resultEvent?.type === "call.result" ? resultEvent.resources : undefined;
  if (resultSeq !== undefined) d.o.onResult?.({ decisionId, runId, resultSeq });
  await d.o.journal.appendBuilt({
    type: GATE_RESULT,
    run_id: runId,
    trace_id: p.traceId,
    body: {
      decision_id: decisionId,
      ...(input.outputHash !== undefined ? { output_hash: input.outputHash } : {}),
      ...(result.outcome !== undefined ? { outcome: result.outcome } : {}),
      classification: rec.classification,
      taint: rec.taint,
      ...(screen.kind === "finding"
        ? {
            screening: {
              mode: screen.mode,
              rules: screen.rules,
              ...(screen.truncated ? { truncated: true } : {}),
            },
          }
        : {}),
      ...(usage !== undefined ? { usage } : {}),
      ...(rec.provenanceMerged !== undefined
        ? { provenance_merged: { max_outputs: rec.provenanceMerged.maxOutputs } }
        : {}),
    },
  });
  await journalQuarantine(d, [...rec.events, ...quarantine], { runId, traceId: p.traceId });
  const out: RecordedOutput = { taint: rec.taint, classification: rec.classification };
  if (screen.kind === "finding")
    out.screening = { rules: screen.rules, quarantined: screen.mode === "quarantine" };
  return out;
}
