// Verifying several journal chains together: the per-replica chains of distributed mode
// (docs/journal.md, "Several chains"). Each chain must verify alone (verifyJournal); on top
// of that, chains are named by the checkpoint that is their entry 1 (a chain whose entry 1
// is not a checkpoint is the legacy global chain ""), names are unique, and every head a
// checkpoint names ({chain, seq, hash}) must be in the inputs, reach that seq and have that
// hash there. So a chain cut, deleted or rewritten (even re-signed with the journal's key)
// after another chain's checkpoint saw it no longer matches that checkpoint. Memory follows
// the number of checkpoint references: a second streaming pass reads only referenced seqs.
import type { Keyring } from "../crypto/index.js";
import { ChainScan, lookUpHashes, type Reference } from "./chain-scan.js";
import type { JournalHead } from "./entry.js";
import { verifySource } from "./segment-verify.js";
import type { JournalSource, VerifyFailureReason, VerifyOptions } from "./verify.js";

/** One chain to verify. `open` is called once per pass (at most twice). */
export interface ChainInput {
  /** What a store knows the chain as ("" for the legacy global chain); a file has none. */
  name?: string;
  open(): JournalSource;
}

/** A signed head is for one chain: it is not an option of several. */
export type ChainsOptions = Omit<VerifyOptions, "expectHead">;

export interface ChainSummary {
  /** Index in the inputs. */
  input: number;
  /** The chain's name; null when entry 1 could not be read. */
  name: string | null;
  /** Entries proven good (all of them when the chain verified alone). */
  checked: number;
  head: JournalHead | null;
}

export type ChainFailureReason =
  | VerifyFailureReason
  /** A given name differs from entry 1's, or a later checkpoint names another chain. */
  | "chain_name_mismatch"
  /** Two inputs are the same chain (or two are the legacy global chain). */
  | "chain_duplicate"
  /** A checkpoint body is malformed, names its own chain, or names a chain twice. */
  | "checkpoint_invalid"
  /** The second pass read other entries than the first verified (the source changed). */
  | "chain_changed";

export type ChainsFailure =
  | { reason: ChainFailureReason; input: number; chain: string | null; seq: number; message: string }
  | {
      /** No input is the chain a checkpoint names / the chain does not reach or differs at the seq named. */
      reason: "chain_missing" | "checkpoint_unmatched";
      /** The named chain's input (null when missing). */
      input: number | null;
      chain: string;
      seq: number;
      /** The checkpoint that names it. */
      by: { chain: string; seq: number };
      message: string;
    };

interface Totals {
  chains: ChainSummary[];
  /** Checkpoint entries seen. */
  checkpoints: number;
  /** References (heads named by checkpoints) checked. */
  references: number;
}

export type ChainsReport = (Totals & { ok: true }) | (Totals & { ok: false; failures: ChainsFailure[] });

interface Scanned {
  input: ChainInput;
  index: number;
  scan: ChainScan;
  summary: ChainSummary;
  failure: ChainsFailure | null;
}

const quote = (name: string | null) => (name === null ? "(unnamed)" : JSON.stringify(name));

/**
 * Verifies chains together; never throws for anything wrong with the chains themselves.
 * References are checked once every chain verifies alone and the names are consistent.
 */
export async function verifyChains(
  inputs: readonly ChainInput[],
  keyring: Keyring,
  options: ChainsOptions = {},
): Promise<ChainsReport> {
  const { expectHead: _ignored, ...alone } = options as VerifyOptions;
  const scanned: Scanned[] = [];
  for (const [index, input] of inputs.entries()) scanned.push(await scanChain(input, index, keyring, alone));
  const totals: Totals = {
    chains: scanned.map((s) => s.summary),
    checkpoints: scanned.reduce((n, s) => n + s.scan.checkpoints, 0),
    references: 0,
  };
  const failures = scanned.flatMap((s) => (s.failure === null ? [] : [s.failure]));
  failures.push(...duplicates(scanned));
  if (failures.length > 0) return { ...totals, ok: false, failures };
  const checked = await checkReferences(scanned);
  totals.references = checked.references;
  return checked.failures.length > 0
    ? { ...totals, ok: false, failures: checked.failures }
    : { ...totals, ok: true };
}

/** Pass 1: the chain alone, its name, and its checkpoints' references. */
async function scanChain(
  input: ChainInput,
  index: number,
  keyring: Keyring,
  options: VerifyOptions,
): Promise<Scanned> {
  const scan = new ChainScan();
  const report = await verifySource(scan.tap(input.open()), keyring, options);
  const name = input.name ?? (report.checked === 0 && report.ok ? "" : scan.claimed);
  const summary: ChainSummary = { input: index, name, checked: report.checked, head: report.head };
  const fail = (f: { seq: number; reason: ChainFailureReason; message: string }): Scanned => ({
    input,
    index,
    scan,
    summary,
    failure: { ...f, input: index, chain: name },
  });
  // The first fault in the chain's order; what the tap saw counts only up to what verified.
  const claimed = report.checked > 0 ? scan.claimed : null;
  if (input.name !== undefined && claimed !== null && claimed !== input.name) {
    const actual = claimed === "" ? "the legacy global chain" : `chain ${quote(claimed)}`;
    return fail({
      seq: 1,
      reason: "chain_name_mismatch",
      message: `given as chain ${quote(input.name)}, but entry 1 makes it ${actual}`,
    });
  }
  if (scan.problem !== null && scan.problem.seq <= report.checked) return fail(scan.problem);
  if (!report.ok) return fail(report.failure);
  return { input, index, scan, summary, failure: null };
}

/** Two inputs with one name: the later ones fail. */
function duplicates(scanned: readonly Scanned[]): ChainsFailure[] {
  const first = new Map<string, number>();
  const out: ChainsFailure[] = [];
  for (const s of scanned) {
    const name = s.summary.name;
    if (s.failure !== null || name === null) continue;
    const seen = first.get(name);
    if (seen === undefined) {
      first.set(name, s.index);
      continue;
    }
    const what = name === "" ? "the legacy global chain" : `chain ${quote(name)}`;
    out.push({
      reason: "chain_duplicate",
      input: s.index,
      chain: name,
      seq: 1,
      message: `${what} is also input ${seen}`,
    });
  }
  return out;
}

/** Pass 2: every reference against the chain it names. */
async function checkReferences(
  scanned: readonly Scanned[],
): Promise<{ references: number; failures: ChainsFailure[] }> {
  const byName = new Map<string, Scanned>();
  for (const s of scanned) byName.set(s.summary.name ?? "", s);
  // Referenced chain -> [citing chain, reference] (memory: one item per reference).
  const citations = new Map<string, [string, Reference][]>();
  let references = 0;
  for (const s of scanned) {
    for (const r of s.scan.references) {
      references++;
      const list = citations.get(r.chain) ?? [];
      list.push([s.summary.name ?? "", r]);
      citations.set(r.chain, list);
    }
  }
  const failures: ChainsFailure[] = [];
  for (const [chain, list] of citations) {
    const target = byName.get(chain);
    failures.push(...(await checkChain(chain, target, list)));
  }
  return { references, failures };
}

/** The references to one chain (missing when `target` is undefined). */
async function checkChain(
  chain: string,
  target: Scanned | undefined,
  list: readonly [string, Reference][],
): Promise<ChainsFailure[]> {
  const named = (by: string, r: Reference) =>
    `checkpoint at ${quote(by)} seq ${r.by} names ${quote(chain)} seq ${r.seq} ${r.hash}`;
  const failure = (by: string, r: Reference, reason: "chain_missing" | "checkpoint_unmatched", why: string) =>
    ({
      reason,
      input: target?.index ?? null,
      chain,
      seq: r.seq,
      by: { chain: by, seq: r.by },
      message: `${named(by, r)}, but ${why}`,
    }) satisfies ChainsFailure;
  if (target === undefined)
    return list.map(([by, r]) => failure(by, r, "chain_missing", "no input is that chain"));
  const head = target.summary.head;
  const wanted = new Set<number>();
  for (const [, r] of list) if (head !== null && r.seq < head.seq) wanted.add(r.seq);
  let hashes = new Map<number, string>();
  if (head !== null) hashes.set(head.seq, head.hash);
  if (head !== null && wanted.size > 0) {
    const found = await lookUpHashes(target.input.open(), wanted, head);
    if (!found.ok) {
      const message = `second read of the chain differs at seq ${found.seq}: ${found.message}`;
      return [{ reason: "chain_changed", input: target.index, chain, seq: found.seq, message }];
    }
    hashes = new Map([...hashes, ...found.hashes]);
  }
  const out: ChainsFailure[] = [];
  for (const [by, r] of list) {
    const at = hashes.get(r.seq);
    if (at === r.hash) continue;
    const why =
      at === undefined ? `that chain ends at seq ${head?.seq ?? 0}` : `the entry there has hash ${at}`;
    out.push(failure(by, r, "checkpoint_unmatched", why));
  }
  return out;
}
