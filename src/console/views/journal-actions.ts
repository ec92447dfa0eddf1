// The journal's POST actions. Verify: the whole chain, or a seq range — a range is proven
// through the chain before it (verified from seq 1 to its end: an entry is only as good as
// the chain that leads to it); the page shows ok with the count and head, or the first bad
// seq with its reason. Export: GATE (the DARE record set, src/evidence) or OCSF 1.3.0
// (src/telemetry) as a download, after the journal verifies with the runtime's key, as
// `warden export` does; a journal that does not verify exports nothing.
import { z } from "zod";
import { EvidenceError, WardenError } from "../../contracts/index.js";
import { gateLines, readVerifiedStore } from "../../evidence/index.js";
import { type JournalEntry, verifyJournal } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { toOcsf } from "../../telemetry/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsoleAction, ConsoleActionResult, ConsoleViewContext } from "../page.js";
import {
  errorBox,
  IsoTime,
  journalKeyring,
  journalPath,
  MAX_EXPORT_ENTRIES,
  parseInput,
  RunId,
  Seq,
  viewError,
} from "./common.js";
import { filledQuery } from "./journal.js";

const Csrf = z.string().max(512).optional();
const VerifyForm = z.strictObject({ csrf: Csrf, fromSeq: Seq.optional(), toSeq: Seq.optional() });
const ExportForm = z.strictObject({
  csrf: Csrf,
  format: z.enum(["gate", "ocsf"]),
  run: RunId.optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
});
type ExportForm = z.infer<typeof ExportForm>;

function page(body: Html, audit: Record<string, unknown>): ConsoleActionResult {
  return { kind: "page", html: body, audit };
}

/** A coded failure as the action's page (the audit record says which code). */
function failed(err: unknown, audit: Record<string, unknown>): ConsoleActionResult {
  if (!(err instanceof WardenError)) throw err;
  return page(html`<h1>Journal</h1>${errorBox(err)}`, { ...audit, ok: false, code: err.code });
}

async function verify(
  ctx: ConsoleViewContext,
  body: Readonly<Record<string, string>>,
): Promise<ConsoleActionResult> {
  const form = parseInput(VerifyForm, filledQuery(body), "verify");
  const from = form.fromSeq ?? 1;
  const to = form.toSeq;
  if (to !== undefined && from > to)
    throw viewError("ERR_CONSOLE_VIEW_INPUT", "verify: fromSeq is after toSeq");
  const store = ctx.runtime.store;
  const source = to === undefined ? store : store.entries(1, to);
  const report = await verifyJournal(source, journalKeyring(ctx.runtime));
  const range = to === undefined && from === 1 ? "the whole chain" : `seq ${from}..${to ?? "end"}`;
  const audit = { range, ok: report.ok, checked: report.checked };
  if (report.ok) {
    const short = to !== undefined && (report.head?.seq ?? 0) < to;
    return page(
      html`<h1>Journal verified</h1><p class="${short ? "verify-bad" : "verify-ok"}" role="status">${
        short
          ? html`The journal ends at seq ${report.head?.seq ?? 0}, before ${to}.`
          : html`OK: ${range} verifies`
      } — ${report.checked} entries checked from seq 1${
        report.head === null ? "" : html`, head seq ${report.head.seq} <code>${report.head.hash}</code>`
      }.</p>`,
      audit,
    );
  }
  const f = report.failure;
  return page(
    html`<h1>Journal does not verify</h1><p class="verify-bad" role="alert">First bad entry: seq <strong class="bad-seq">${
      f.seq
    }</strong> — <code>ERR_EVIDENCE_JOURNAL_INVALID</code> (<code>${f.reason}</code>): ${agentText(f.message)}${
      f.seq < from ? html` (before the range ${range}, which is therefore not proven)` : ""
    }</p>`,
    { ...audit, failedSeq: f.seq, reason: f.reason },
  );
}

/** The verified entries of the runtime's journal (bounded), or ERR_EVIDENCE_JOURNAL_INVALID. */
export async function verifiedEntries(rt: Runtime): Promise<JournalEntry[]> {
  const n = await rt.store.count();
  if (n > MAX_EXPORT_ENTRIES)
    throw viewError(
      "ERR_CONSOLE_VIEW_UNAVAILABLE",
      `the journal holds ${n} entries; the console reads at most ${MAX_EXPORT_ENTRIES} (use warden export / whatif)`,
    );
  return readVerifiedStore(rt.store, journalKeyring(rt));
}

function ocsfLines(entries: readonly JournalEntry[], f: ExportForm): string[] {
  const out: string[] = [];
  for (const e of entries) {
    if (f.run !== undefined && e.run_id !== f.run) continue;
    if ((f.since !== undefined && e.time < f.since) || (f.until !== undefined && e.time >= f.until)) continue;
    const ev = toOcsf(e);
    if (ev !== undefined) out.push(`${JSON.stringify(ev)}\n`);
  }
  return out;
}

function gateExport(rt: Runtime, entries: readonly JournalEntry[], f: ExportForm): string[] {
  if (rt.signer.type !== "ed25519")
    throw new EvidenceError(
      "ERR_EVIDENCE_LEDGER_KEY",
      "the GATE export signs with the journal's Ed25519 key",
    );
  return gateLines(entries, {
    db: journalPath(rt),
    privateKey: rt.signer.privateKey,
    ...(f.run !== undefined ? { run: f.run } : {}),
    ...(f.since !== undefined ? { from: f.since } : {}),
    ...(f.until !== undefined ? { to: f.until } : {}),
  });
}

async function exportJournal(
  ctx: ConsoleViewContext,
  body: Readonly<Record<string, string>>,
): Promise<ConsoleActionResult> {
  const f = parseInput(ExportForm, filledQuery(body), "export");
  const selection = { format: f.format, run: f.run ?? null, since: f.since ?? null, until: f.until ?? null };
  try {
    const entries = await verifiedEntries(ctx.runtime);
    const lines = f.format === "gate" ? gateExport(ctx.runtime, entries, f) : ocsfLines(entries, f);
    return {
      kind: "download",
      filename: `warden-${f.format}-export.jsonl`,
      mediaType: "application/x-ndjson",
      body: lines.join(""),
      audit: { ...selection, ok: true, records: lines.length },
    };
  } catch (err) {
    return failed(err, selection);
  }
}

/** Catches a coded input error into the action's page; anything else propagates. */
function guarded(
  fn: (ctx: ConsoleViewContext, body: Readonly<Record<string, string>>) => Promise<ConsoleActionResult>,
): ConsoleAction["handle"] {
  return async (ctx, body) => {
    try {
      return await fn(ctx, body);
    } catch (err) {
      return failed(err, {});
    }
  };
}

export const VERIFY_ACTION: ConsoleAction = {
  path: "/journal/verify",
  roles: ["auditor", "approver"],
  audit: "warden.console.journal_verified",
  handle: guarded(verify),
};

export const EXPORT_ACTION: ConsoleAction = {
  path: "/journal/export",
  roles: ["auditor"],
  audit: "warden.console.journal_exported",
  handle: guarded(exportJournal),
};
