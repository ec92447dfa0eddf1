// Reading the evidence a journal already holds, grouped per run: each Gate decision with
// the entries that follow from it (resolution, signed HITL records, the executor's
// evidence envelope and DARE response, the reported result) and the bundle pinned when it
// was made. The journal is verified against the given keys first; nothing is read from a
// journal that does not verify.
import {
  EvidenceError,
  GATE_DECISION,
  GATE_RESOLUTION,
  GATE_RESULT,
  type GateDecisionBody,
} from "../contracts/index.js";
import { Keyring, loadPublicKeyFile } from "../crypto/index.js";
import {
  type JournalEntry,
  type JournalStore,
  MalformedRecord,
  openEmbeddedStore,
  verifyJournal,
} from "../journal/index.js";
import { EVIDENCE_BUNDLE_EVENT, type EvidenceBundleBody } from "./events.js";

export const EVIDENCE_TYPE = "warden.executor.evidence";
export const RESPONSE_TYPE = "dare.tool.response";
export const HITL_TYPE = "dare.hitl.decision";
export const MESSAGE_TYPE = "warden.message.sent";

/** One governed action as the journal holds it. */
export interface DecisionStep {
  decision: JournalEntry;
  body: GateDecisionBody;
  resolution?: JournalEntry;
  hitl: JournalEntry[];
  evidence?: JournalEntry;
  response?: JournalEntry;
  result?: JournalEntry;
  /** The `warden.evidence.bundle` entry in force when the decision was made, if any. */
  bundle?: { entry: JournalEntry; body: EvidenceBundleBody };
}

export interface RunEvidence {
  runId: string;
  steps: DecisionStep[];
  /** `warden.message.sent` entries of the run (each carries a DARE AgentMessageEnvelope). */
  messages: JournalEntry[];
}

export interface Selection {
  run?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

function timeBound(t: string | undefined, flag: string): number | undefined {
  if (t === undefined) return undefined;
  const ms = Date.parse(t);
  if (Number.isNaN(ms))
    throw new EvidenceError("ERR_EVIDENCE_RUN_UNKNOWN", `${flag} is not an ISO 8601 time`);
  return ms;
}

/** Verifies the journal with the keys (files) and returns all its entries in order. */
export async function readVerified(db: string, keys: readonly string[]): Promise<JournalEntry[]> {
  if (keys.length === 0)
    throw new EvidenceError(
      "ERR_EVIDENCE_JOURNAL_INVALID",
      "the journal's public key is needed to verify it (--keys)",
    );
  const store = openEmbeddedStore(db, { readonly: true });
  try {
    return await readVerifiedStore(store, new Keyring(keys.map((k) => loadPublicKeyFile(k))));
  } finally {
    await store.close();
  }
}

/** Verifies an open journal store with a keyring and returns all its entries in order. */
export async function readVerifiedStore(store: JournalStore, keyring: Keyring): Promise<JournalEntry[]> {
  const report = await verifyJournal(store, keyring);
  if (!report.ok)
    throw new EvidenceError(
      "ERR_EVIDENCE_JOURNAL_INVALID",
      `the journal does not verify at seq ${report.failure.seq}: ${report.failure.reason}`,
    );
  const out: JournalEntry[] = [];
  for await (const e of store.entries()) if (!(e instanceof MalformedRecord)) out.push(e);
  return out;
}

function byDecision(entries: readonly JournalEntry[]): Map<string, DecisionStep> {
  const steps = new Map<string, DecisionStep>();
  let bundle: DecisionStep["bundle"];
  const bundles: NonNullable<DecisionStep["bundle"]>[] = [];
  for (const e of entries) {
    if (e.type === EVIDENCE_BUNDLE_EVENT) {
      bundle = { entry: e, body: e.body as EvidenceBundleBody };
      bundles.push(bundle);
    } else if (e.type === GATE_DECISION) {
      const body = e.body as GateDecisionBody;
      // The latest pinned bundle whose policy hash is the one this decision was made under.
      const pinned = [...bundles]
        .reverse()
        .find((b) => b.body.policy_bundle_hash === body.dare.bundles.policy_bundle_hash);
      steps.set(body.decision_id, { decision: e, body, hitl: [], ...(pinned ? { bundle: pinned } : {}) });
    }
  }
  return steps;
}

function attach(steps: Map<string, DecisionStep>, entries: readonly JournalEntry[]): void {
  const byEvidence = new Map<string, DecisionStep>();
  for (const e of entries) {
    const b = e.body as Record<string, unknown>;
    if (e.type === GATE_RESOLUTION || e.type === GATE_RESULT || e.type === EVIDENCE_TYPE) {
      const s = steps.get(String(b.decision_id));
      if (s === undefined) continue;
      if (e.type === GATE_RESOLUTION) s.resolution = e;
      else if (e.type === GATE_RESULT) s.result = e;
      else {
        s.evidence = e;
        byEvidence.set(String(b.evidence_id), s);
      }
    } else if (e.type === HITL_TYPE) {
      const ctx = b.context as { policy_decision_id?: string } | undefined;
      const s = ctx?.policy_decision_id === undefined ? undefined : steps.get(ctx.policy_decision_id);
      s?.hitl.push(e);
    } else if (e.type === RESPONSE_TYPE) {
      const ev = (b.evidence as { ledger_event_id?: string } | undefined)?.ledger_event_id;
      const s = ev === undefined ? undefined : byEvidence.get(ev);
      if (s !== undefined) s.response = e;
    }
  }
}

/** The runs the selection names (one run, or every run with a decision in the time range). */
export function selectRuns(entries: readonly JournalEntry[], sel: Selection): RunEvidence[] {
  const from = timeBound(sel.from, "--from");
  const to = timeBound(sel.to, "--to");
  const steps = byDecision(entries);
  attach(steps, entries);
  const runs = new Map<string, RunEvidence>();
  for (const s of steps.values()) {
    const runId = s.decision.run_id ?? "";
    if (sel.run !== undefined && runId !== sel.run) continue;
    const t = Date.parse(s.decision.time);
    if ((from !== undefined && t < from) || (to !== undefined && t > to)) continue;
    const r = runs.get(runId) ?? { runId, steps: [], messages: [] };
    runs.set(runId, r);
    r.steps.push(s);
  }
  for (const e of entries)
    if (e.type === MESSAGE_TYPE && e.run_id !== null) runs.get(e.run_id)?.messages.push(e);
  if (runs.size === 0)
    throw new EvidenceError(
      "ERR_EVIDENCE_RUN_UNKNOWN",
      sel.run !== undefined
        ? `the journal holds no decision of run ${sel.run}`
        : "no decision in the time range",
    );
  return [...runs.values()];
}
