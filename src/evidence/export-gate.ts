// `warden export --format gate`: the full DARE record set of the selected runs as GATE
// tooling reads it — JSONL, one record per line, each in the gate namespace
// (event_type gate.*) and canonical JSON. Per action: ToolRequestEnvelope,
// PolicyDecisionRecord, HITLDecisionRecords, ToolResponseEnvelope; per run: its
// LedgerEvents, its ReplayTrace and its AgentMessageEnvelopes. Nothing is written from a
// journal that does not verify with the given keys.
import type { KeyObject } from "node:crypto";
import { existsSync } from "node:fs";
import {
  canonicalJson,
  type DareRecord,
  EvidenceError,
  type Sha256Hash,
  toGateNamespace,
  WardenError,
} from "../contracts/index.js";
import { loadPrivateKeyFile } from "../crypto/index.js";
import type { JournalEntry } from "../journal/index.js";
import { type RunEvidence, readVerified, type Selection, selectRuns } from "./journal-read.js";
import { ledgerEventsOf } from "./records-ledger.js";
import { toolRequestOf, toolResponseOf } from "./records-tool.js";
import { actionStepIndexes, replayTraceOf } from "./records-trace.js";
import { EvidenceStore, evidenceDir } from "./store.js";

export interface ExportOptions extends Selection {
  db: string;
  /** Key files: the journal's public key verifies it; its private key signs the LedgerEvents. */
  keys: string[];
  write: (line: string) => void;
}

function ledgerKey(keys: readonly string[]): KeyObject {
  for (const k of keys) {
    try {
      const pair = loadPrivateKeyFile(k);
      if (pair.type === "ed25519") return pair.privateKey;
    } catch (err) {
      if (!(err instanceof WardenError)) throw err;
    }
  }
  throw new EvidenceError(
    "ERR_EVIDENCE_LEDGER_KEY",
    "the GATE export signs its LedgerEvents with the journal's Ed25519 private key: add it to --keys",
  );
}

/** Whether the evidence store beside the journal holds an intact snapshot of `hash`. */
export function snapshotProbe(db: string): (hash: string) => boolean {
  if (!existsSync(evidenceDir(db))) return () => false;
  const store = EvidenceStore.read(db);
  return (hash) => store.snapshot(hash as Sha256Hash).ok;
}

function runRecords(run: RunEvidence, key: KeyObject, hasSnapshot: (h: string) => boolean): DareRecord[] {
  const out: DareRecord[] = [];
  const idx = actionStepIndexes(run);
  run.steps.forEach((s, i) => {
    out.push(toolRequestOf(s), s.body.dare);
    for (const h of s.hitl) out.push(h.body as unknown as DareRecord);
    const r = toolResponseOf(s, idx[i] as number, hasSnapshot);
    if (r !== undefined) out.push(r);
  });
  out.push(...ledgerEventsOf(run.steps, { privateKey: key }));
  out.push(replayTraceOf(run, hasSnapshot));
  for (const m of run.messages) out.push((m.body as { dare: DareRecord }).dare);
  return out;
}

/**
 * The GATE JSONL lines of the selected runs from entries already verified (the console
 * verifies its runtime's store with the runtime's keys): `db` locates the evidence store
 * beside the journal, `privateKey` (Ed25519) signs the LedgerEvents.
 */
export function gateLines(
  entries: readonly JournalEntry[],
  o: Selection & { db: string; privateKey: KeyObject },
): string[] {
  const runs = selectRuns(entries, o);
  const hasSnapshot = snapshotProbe(o.db);
  return runs.flatMap((run) =>
    runRecords(run, o.privateKey, hasSnapshot).map((r) => `${canonicalJson(toGateNamespace(r))}\n`),
  );
}

/** Writes the records; resolves to how many lines were written. */
export async function exportGate(o: ExportOptions): Promise<number> {
  const key = ledgerKey(o.keys);
  const entries = await readVerified(o.db, o.keys);
  const lines = gateLines(entries, { ...o, privateKey: key });
  for (const line of lines) o.write(line);
  return lines.length;
}
