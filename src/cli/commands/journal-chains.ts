// `warden journal verify --db FILE --db FILE …` or `--url URL`: several per-replica chains
// (JSONL exports or SQLite files, or every chain of a PostgreSQL journal) verified together
// with verifyChains (docs/journal.md, "Several chains").
// Also the name of a single chain, for the one-input output.
import { availableParallelism } from "node:os";
import type { Keyring } from "../../crypto/index.js";
import {
  type ApprovalReport,
  type ApproverKeyring,
  CHECKPOINT,
  type ChainSummary,
  type ChainsFailure,
  type ChainsReport,
  CheckpointSchema,
  verifyApprovalSignatures,
  verifyChains,
} from "../../journal/index.js";
import { type CliContext, EXIT } from "../io.js";
import { type JournalFile, openJournalFile } from "./journal-files.js";

/** Above this many entries in all, verification uses worker threads. */
const LARGE = 5000;

/** The chain entry 1 names when it is a checkpoint (a per-replica chain), else null. */
export async function chainNameOf(entries: AsyncIterable<unknown>): Promise<string | null> {
  let first: unknown = null;
  for await (const raw of entries) {
    first = raw;
    break;
  }
  const e = first as { type?: unknown; body?: unknown } | null;
  if (e === null || typeof e !== "object" || e.type !== CHECKPOINT) return null;
  const body = CheckpointSchema.safeParse(e.body);
  return body.success ? body.data.chain : null;
}

const label = (name: string | null) =>
  name === null
    ? "an unnamed chain"
    : name === ""
      ? "the legacy global chain"
      : `chain ${JSON.stringify(name)}`;

function chainLine(c: ChainSummary, path: string): string {
  const head = c.head ? `, head seq ${c.head.seq} ${c.head.hash}` : "";
  return `  ${label(c.name)}: ${c.checked} entries${head} [${path}]\n`;
}

function failureLine(f: ChainsFailure, paths: readonly string[]): string {
  const where = f.input === null ? "" : ` [${paths[f.input]}]`;
  return `${label(f.chain)} at seq ${f.seq}: ${f.reason}: ${f.message}${where}\n`;
}

interface Approvals {
  input: number;
  path: string;
  report: ApprovalReport;
}

function chainsText(report: ChainsReport, paths: readonly string[], approvals: Approvals[]): string {
  const n = report.chains.length;
  const totals = `${n} chains, ${report.checkpoints} checkpoints, ${report.references} references checked`;
  let text = report.ok ? `journal chains intact: ${totals}\n` : "journal chains verification FAILED\n";
  if (!report.ok) for (const f of report.failures) text += failureLine(f, paths);
  if (!report.ok) text += "chains (entries verified alone):\n";
  for (const c of report.chains) text += chainLine(c, paths[c.input] ?? "");
  for (const a of approvals) {
    for (const f of a.report.failures)
      text += `approval at seq ${f.seq}: ${f.code}: ${f.message} [${a.path}]\n`;
    if (a.report.ok)
      text += `approvals: ${a.report.checked} HITL records signed by their approvers [${a.path}]\n`;
  }
  return text;
}

export interface SeveralOptions {
  workers: number | undefined;
  json: boolean;
  approvers: ApproverKeyring | undefined;
  /** A database read in one snapshot: when, and each chain's head in it (what was verified). */
  snapshot?: { takenAt: string; upTo: { chain: string; seq: number }[] };
}

function snapshotText(s: NonNullable<SeveralOptions["snapshot"]>): string {
  const heads = s.upTo.map((h) => `${h.chain === "" ? '""' : h.chain}@${h.seq}`).join(", ");
  return `verified up to (one snapshot at ${s.takenAt}): ${heads || "no chain"}\n`;
}

/** Verifies the opened files (or a database's chains) as chains of one journal; exit 1 unless every chain and reference checks. */
export async function verifySeveral(
  files: readonly JournalFile[],
  keyring: Keyring,
  o: SeveralOptions,
  ctx: CliContext,
): Promise<void> {
  const paths = files.map((f) => f.path);
  let total = 0;
  for (const f of files) total += await f.size();
  const report = await verifyChains(
    files.map((f) => ({ ...(f.name !== undefined ? { name: f.name } : {}), open: () => f.source() })),
    keyring,
    { workers: o.workers ?? (total >= LARGE ? availableParallelism() : 0) },
  );
  const approvals: Approvals[] = [];
  if (o.approvers !== undefined) {
    for (const [input, f] of files.entries()) {
      const r = await verifyApprovalSignatures(f.entries(), o.approvers);
      approvals.push({ input, path: f.path, report: r });
    }
  }
  const snap = o.snapshot;
  ctx.io.out(
    o.json
      ? `${JSON.stringify({ ...jsonOf(report, paths, approvals), ...(snap !== undefined ? { snapshot: snap } : {}) }, null, 2)}\n`
      : chainsText(report, paths, approvals) + (snap !== undefined ? snapshotText(snap) : ""),
  );
  if (!report.ok || approvals.some((a) => !a.report.ok)) ctx.exitCode = EXIT.failed;
}

/** Opens the files, verifies them together, closes them. */
export async function verifyFiles(
  paths: readonly string[],
  keyring: Keyring,
  o: SeveralOptions,
  ctx: CliContext,
): Promise<void> {
  const files: JournalFile[] = [];
  try {
    for (const p of paths) files.push(openJournalFile(p));
    await verifySeveral(files, keyring, o, ctx);
  } finally {
    for (const f of files) await f.store?.close();
  }
}

function jsonOf(report: ChainsReport, paths: readonly string[], approvals: Approvals[]): object {
  const chains = report.chains.map((c) => ({ ...c, file: paths[c.input] }));
  const out = { ...report, chains };
  if (approvals.length === 0) return out;
  return { ...out, approvals: approvals.map((a) => ({ input: a.input, file: a.path, ...a.report })) };
}
