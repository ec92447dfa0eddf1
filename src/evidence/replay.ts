// Replay (DARE conformance check 3): the recorded requests of a run go through the
// bundle that decided them — read from the evidence store by the hash the journal pins,
// written to a private temp directory, opened by the entry point's own runtime — on the
// recorded clock. Executors are never called: an admitted step is answered from its
// snapshot, whose bytes must hash to the output_hash the journal holds, and that answer is
// reported to the Gate as the result was, so the context accumulates as it did. Each step
// is identical (same decision, reason codes and matched rules) or diverged; a missing or
// tampered snapshot or bundle fails its step with a coded reason. What-if is the same
// walk under a changed bundle (whatif.ts).
import { rmSync } from "node:fs";
import {
  type Decision,
  type DecisionId,
  EvidenceError,
  type Sha256Hash,
  type TaintLabel,
  WardenError,
} from "../contracts/index.js";
import type { Gate, GateOutcome } from "../gate/index.js";
import type { JournalEntry } from "../journal/index.js";
import {
  type DecisionBundle,
  type MaterializedBundle,
  materializeBundle,
  parseBundle,
  withChanges,
} from "./bundle.js";
import {
  type DecisionStep,
  type RunEvidence,
  readVerified,
  type Selection,
  selectRuns,
} from "./journal-read.js";
import { EvidenceStore } from "./store.js";

/** How an entry point opens its runtime over a materialized bundle (nothing executes). */
export interface ReplayHost {
  open(
    bundle: MaterializedBundle,
    o: { principal: string; clock: () => number },
  ): Promise<{ gate: Gate; close(): Promise<void> }>;
}

export interface Verdict {
  decision: Decision;
  reasonCodes: string[];
  matchedRules: string[];
}

export interface StepReport {
  step: number;
  decisionId: string;
  tool: string;
  recorded: Verdict;
  replayed?: Verdict;
  status: "identical" | "diverged" | "failed";
  /** Why it diverged or failed (a failed step carries an ERR_EVIDENCE_* code). */
  reason?: string;
  code?: string;
}

export interface RunReport {
  runId: string;
  bundleHash: string;
  steps: StepReport[];
  counts: { identical: number; diverged: number; failed: number };
}

export interface ReplayOptions extends Selection {
  db: string;
  keys: string[];
  host: ReplayHost;
  /** What-if: replace the pinned bundle's policies and/or contracts. */
  change?: { policy?: readonly string[] | undefined; contractsDir?: string | undefined };
}

function recordedVerdict(s: DecisionStep): Verdict {
  return {
    decision: s.body.decision,
    reasonCodes: [...s.body.reason_codes],
    matchedRules: s.body.matched_rules.map((r) => r.id),
  };
}

function verdictOf(o: GateOutcome): Verdict {
  return {
    decision: o.decision,
    reasonCodes: [...o.reasonCodes],
    matchedRules: o.matchedRules.map((r) => r.id),
  };
}

const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

function compare(a: Verdict, b: Verdict): string | undefined {
  if (a.decision !== b.decision) return `${a.decision} → ${b.decision}`;
  if (!same(a.reasonCodes, b.reasonCodes)) return `reason codes [${a.reasonCodes}] → [${b.reasonCodes}]`;
  if (!same(a.matchedRules, b.matchedRules)) return `matched rules [${a.matchedRules}] → [${b.matchedRules}]`;
  return undefined;
}

/** The snapshot as the result's data: JSON when it parses, else text, else nothing. */
function snapshotData(bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The bundle every step of the run was decided under; a step without one fails the run. */
function pinnedBundle(run: RunEvidence, store: EvidenceStore, change: ReplayOptions["change"]) {
  const first = run.steps[0] as DecisionStep;
  run.steps.forEach((s, i) => {
    if (s.bundle === undefined)
      throw new EvidenceError(
        "ERR_EVIDENCE_BUNDLE_MISSING",
        `step ${i + 1}: no pinned bundle (recorded without the recorder)`,
      );
    if (s.bundle.body.bundle_hash !== first.bundle?.body.bundle_hash)
      throw new EvidenceError(
        "ERR_EVIDENCE_BUNDLE_MISSING",
        `step ${i + 1}: the bundle changed within the run`,
      );
  });
  const hash = first.bundle?.body.bundle_hash as Sha256Hash;
  let bundle: DecisionBundle;
  try {
    bundle = parseBundle(store.bundle(hash));
  } catch (err) {
    if (err instanceof WardenError) throw new WardenError(err.code, `step 1: ${err.message}`);
    throw err;
  }
  return { hash, bundle: change === undefined ? bundle : withChanges(bundle, change) };
}

interface Walk {
  gate: Gate;
  store: EvidenceStore;
  clock: { now: number };
  /** What-if: a snapshot that cannot answer a step is reported, not fatal for the verdict. */
  runId: string;
}

function requestOf(s: DecisionStep, runId: string) {
  const b = s.body;
  return {
    principalId: b.principal_id,
    runId,
    toolClass: b.tool_class,
    action: b.action,
    ...(b.tool !== undefined ? { tool: b.tool } : {}),
    parameters: b.parameters,
    taintLabels: b.taint,
    ...(b.identity !== undefined
      ? {
          identity: {
            agentId: b.identity.agent_id,
            domain: b.identity.domain,
            capabilities: b.identity.capabilities,
          },
        }
      : {}),
  };
}

/** Feeds the recorded answer of an executed step back from its snapshot; a failure reason or undefined. */
async function answer(
  w: Walk,
  s: DecisionStep,
  o: GateOutcome,
): Promise<{ code: string; reason: string } | undefined> {
  const ev = s.evidence?.body as { output_hash: Sha256Hash | null; taint: TaintLabel[] } | undefined;
  if (ev === undefined || o.decisionId === null || (o.decision !== "allow" && o.decision !== "modify"))
    return;
  let data: unknown;
  if (ev.output_hash !== null) {
    const snap = w.store.snapshot(ev.output_hash);
    if (!snap.ok) return { code: snap.code, reason: snap.message };
    data = snapshotData(snap.bytes);
  }
  const r = s.result?.body as { classification?: string; taint?: TaintLabel[] } | undefined;
  await w.gate.recordResult(o.decisionId as DecisionId, {
    taintLabels: r?.taint ?? ev.taint,
    ...(data !== undefined ? { data } : {}),
    ...(r?.classification !== undefined ? { classification: r.classification } : {}),
    ...(ev.output_hash !== null ? { outputHash: ev.output_hash } : {}),
  });
  return undefined;
}

async function replayStep(w: Walk, s: DecisionStep, i: number): Promise<StepReport> {
  const base = {
    step: i + 1,
    decisionId: s.body.decision_id,
    tool: s.body.dare.action.tool_name,
    recorded: recordedVerdict(s),
  };
  if (s.body.parameters_elided !== undefined || s.body.parameters_defaults !== undefined)
    return {
      ...base,
      status: "failed",
      code: "ERR_EVIDENCE_SNAPSHOT_MISSING",
      reason:
        s.body.parameters_elided !== undefined
          ? "parameters were elided in the journal"
          : "parameters were journaled without their members at false or empty",
    };
  w.clock.now = Date.parse(s.decision.time);
  const o = await w.gate.evaluate(requestOf(s, w.runId));
  const replayed = verdictOf(o);
  const failed = await answer(w, s, o);
  if (failed !== undefined) return { ...base, replayed, status: "failed", ...failed };
  const diff = compare(base.recorded, replayed);
  return diff === undefined
    ? { ...base, replayed, status: "identical" }
    : { ...base, replayed, status: "diverged", reason: diff };
}

async function replayOne(
  o: Omit<ReplayOptions, "keys">,
  run: RunEvidence,
  store: EvidenceStore,
): Promise<RunReport> {
  const { hash, bundle } = pinnedBundle(run, store, o.change);
  const mb = materializeBundle(bundle);
  const clock = { now: Date.parse((run.steps[0] as DecisionStep).decision.time) };
  try {
    const principal = (run.steps[0] as DecisionStep).body.principal_id;
    const rt = await o.host.open(mb, { principal, clock: () => clock.now });
    try {
      const w: Walk = { gate: rt.gate, store, clock, runId: run.runId };
      const steps: StepReport[] = [];
      for (const [i, s] of run.steps.entries()) steps.push(await replayStep(w, s, i));
      const count = (k: StepReport["status"]) => steps.filter((s) => s.status === k).length;
      return {
        runId: run.runId,
        bundleHash: hash,
        steps,
        counts: { identical: count("identical"), diverged: count("diverged"), failed: count("failed") },
      };
    } finally {
      await rt.close();
    }
  } finally {
    rmSync(mb.dir, { recursive: true, force: true });
  }
}

/** Replays the selected runs; throws a coded error when the journal or a bundle cannot be trusted. */
export async function replayRuns(o: ReplayOptions): Promise<RunReport[]> {
  return replayEntries(await readVerified(o.db, o.keys), o);
}

/**
 * Replays the selected runs of entries already verified (the console verifies its
 * runtime's store with the runtime's keys); `db` locates the evidence store.
 */
export async function replayEntries(
  entries: readonly JournalEntry[],
  o: Omit<ReplayOptions, "keys">,
): Promise<RunReport[]> {
  const runs = selectRuns(entries, o);
  const store = EvidenceStore.read(o.db);
  const out: RunReport[] = [];
  for (const run of runs) {
    try {
      out.push(await replayOne(o, run, store));
    } catch (err) {
      if (err instanceof WardenError) throw new WardenError(err.code, `run ${run.runId}: ${err.message}`);
      throw err;
    }
  }
  return out;
}
