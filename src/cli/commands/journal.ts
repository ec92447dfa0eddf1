// `warden journal append|verify|export|show|head`: the evidence chain from the
// command line. Operators record external events (a manual override) into the same
// chain; auditors verify a database or a JSONL export with only public keys.
import { createWriteStream, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import { CliError, GATE_DECISION, parseStrictJson } from "../../contracts/index.js";
import { Keyring, loadPrivateKeyFile, loadPublicKeyFile } from "../../crypto/index.js";
import {
  type ApprovalReport,
  ApproverKeyring,
  exportJsonl,
  headOf,
  type JournalEntry,
  type JournalSource,
  type JournalStore,
  openEmbeddedStore,
  openJournal,
  readJsonl,
  signHead,
  type VerifyReport,
  verifyApprovalSignatures,
  verifySource,
} from "../../journal/index.js";
import { type CliContext, EXIT, readJsonFile } from "../io.js";
import { addOptions } from "../options.js";
import { chainNameOf, verifyFiles } from "./journal-chains.js";
import { countLines, isSqliteFile, openJournalFile } from "./journal-files.js";
import {
  APPEND_OPTIONS,
  type AppendOpts,
  EXPORT_OPTIONS,
  type ExportOpts,
  HEAD_OPTIONS,
  type HeadOpts,
  SHOW_OPTIONS,
  type ShowOpts,
  VERIFY_OPTIONS,
  type VerifyOpts,
} from "./journal-options.js";
import { openChainStore, verifyDatabase } from "./journal-pg.js";
import { registerSegmentCommands } from "./journal-segments.js";
import { SUMMARY } from "./summaries.js";

/** Above this many entries verification uses worker threads and shows progress. */
const LARGE = 5000;

function parseBody(text: string): Record<string, unknown> {
  const value = text.startsWith("@") ? readJsonFile(text.slice(1)) : parseJsonArg(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError("ERR_CLI_INPUT", "--body must be a JSON object");
  }
  return value as Record<string, unknown>;
}

function parseJsonArg(text: string): unknown {
  try {
    return parseStrictJson(text);
  } catch (err) {
    throw new CliError("ERR_CLI_INPUT", `--body is not valid JSON: ${(err as Error).message}`);
  }
}

function describeFailure(r: Extract<VerifyReport, { ok: false }>, chain: string): string {
  return (
    `journal verification FAILED${chain} at seq ${r.failure.seq}: ${r.failure.reason}: ${r.failure.message}\n` +
    `${r.checked} entries verified before it${r.head ? `; last good hash ${r.head.hash}` : ""}\n`
  );
}

const short = (s: string | null, n: number) =>
  s === null ? "-" : s.length > n ? `${s.slice(0, n - 1)}…` : s;

function table(entries: JournalEntry[]): string {
  const rows = entries.map((e) => [
    String(e.seq),
    e.time,
    e.type,
    short(e.run_id, 24),
    decisionOf(e) ?? "",
    short(e.key_id, 10),
    e.hash.slice(7, 19),
  ]);
  const head = ["SEQ", "TIME", "TYPE", "RUN", "DECISION", "KEY", "HASH"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    `${r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd()}\n`;
  return line(head) + rows.map(line).join("");
}

/** The decision an entry carries: the same derivation as the store's `decision` column. */
function decisionOf(e: JournalEntry): string | undefined {
  const b = e.body as {
    result?: { decision?: unknown };
    policy?: { decision?: unknown };
    decision?: unknown;
  };
  const d =
    e.type === GATE_DECISION
      ? b.decision
      : e.type.endsWith(".policy.decision")
        ? b.result?.decision
        : e.type.endsWith(".tool.response")
          ? b.policy?.decision
          : e.type.endsWith(".hitl.decision")
            ? (b.decision as { action?: unknown } | undefined)?.action
            : undefined;
  return typeof d === "string" ? d : undefined;
}

/** The files `journal verify` reads (none with --url); --db (repeatable) or --url. */
function verifyInputs(opts: VerifyOpts): string[] {
  if ((opts.db.length === 0) === (opts.url === undefined))
    throw new CliError(
      "ERR_CLI_USAGE",
      "journal verify needs --db FILE (one or more) or --url URL, not both",
    );
  if (opts.chain !== undefined && opts.url === undefined)
    throw new CliError("ERR_CLI_USAGE", "--chain picks a chain of the --url journal");
  const several = opts.db.length > 1 || (opts.url !== undefined && opts.chain === undefined);
  if (several && opts.expectHead !== undefined)
    throw new CliError(
      "ERR_CLI_USAGE",
      "--expect-head is the head of one chain: give one --db, or --url with --chain NAME",
    );
  return opts.db;
}

/** The store to verify: one chain of the PostgreSQL journal (--url --chain), a SQLite file, or null for a JSONL export. */
async function verifyStore(opts: VerifyOpts): Promise<JournalStore | null> {
  if (opts.url !== undefined) return openChainStore(opts.url, opts.chain ?? "");
  const db = opts.db[0] ?? "";
  return isSqliteFile(db) ? openEmbeddedStore(db, { readonly: true }) : null;
}

/** What `journal export` and `journal head` read: a SQLite file (--db) or one chain of the PostgreSQL journal (--url --chain). */
async function chainStore(
  opts: { db?: string | undefined; url?: string | undefined; chain?: string | undefined },
  command: string,
): Promise<JournalStore> {
  if ((opts.db === undefined) === (opts.url === undefined))
    throw new CliError("ERR_CLI_USAGE", `journal ${command} needs --db FILE or --url URL, not both`);
  if (opts.url === undefined) {
    if (opts.chain !== undefined)
      throw new CliError("ERR_CLI_USAGE", "--chain picks a chain of the --url journal");
    return openEmbeddedStore(opts.db ?? "", { readonly: true });
  }
  // A distributed journal has a chain per replica: export each (`--chain`), verify them together.
  if (opts.chain === undefined)
    throw new CliError(
      "ERR_CLI_USAGE",
      `journal ${command} --url needs --chain NAME (a replica's chain, or "" for the global chain)`,
    );
  return openChainStore(opts.url, opts.chain);
}

/** What `journal verify` prints: the chain's report, then the approver check when asked for. */
function verifyText(
  report: VerifyReport,
  approvals: ApprovalReport | undefined,
  o: { json: boolean; expectHead: boolean; chain: string | null },
): string {
  const named = o.chain === null ? report : { ...report, chain: o.chain };
  if (o.json) return `${JSON.stringify(approvals ? { ...named, approvals } : named, null, 2)}\n`;
  const chain = o.chain === null ? "" : ` (chain ${JSON.stringify(o.chain)})`;
  let text = report.ok
    ? `journal intact${chain}: ${report.checked} entries` +
      (report.head ? `, head seq ${report.head.seq} ${report.head.hash}` : "") +
      `${o.expectHead ? " (reaches the expected head)" : ""}\n`
    : describeFailure(report, chain);
  for (const f of approvals?.failures ?? []) text += `approval at seq ${f.seq}: ${f.code}: ${f.message}\n`;
  if (approvals?.ok) text += `approvals: ${approvals.checked} HITL records signed by their approvers\n`;
  return text;
}

function progressBar(): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    { format: "verifying [{bar}] {percentage}% {value}/{total} entries", stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
}

/** `--approver-keys alice=keys/alice.pub.pem …` as an approver keyring. */
function approverRing(specs: readonly string[]): ApproverKeyring {
  const ring = new ApproverKeyring();
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    if (eq < 1) throw new CliError("ERR_CLI_USAGE", "--approver-keys takes ID=FILE");
    try {
      ring.add(spec.slice(0, eq), loadPublicKeyFile(spec.slice(eq + 1)));
    } catch {
      throw new CliError("ERR_CLI_INPUT", `${spec.slice(eq + 1)}: not an Ed25519 public key`);
    }
  }
  return ring;
}

export function registerJournal(program: Command, ctx: CliContext): void {
  const journal = program.command("journal").description(SUMMARY.journal);
  registerSegmentCommands(journal, ctx);

  addOptions(
    journal
      .command("append")
      .description("append a signed entry (known types are schema-checked; credentials are masked)"),
    APPEND_OPTIONS,
  ).action(async (opts: AppendOpts) => {
    const body = parseBody(opts.body);
    const signer = loadPrivateKeyFile(opts.key);
    const store = openEmbeddedStore(opts.db);
    try {
      const j = await openJournal({ store, signer, allowUnknownTypes: true });
      const e = await j.append({
        type: opts.type,
        run_id: opts.run ?? null,
        trace_id: opts.trace ?? null,
        body,
      });
      ctx.io.out(opts.json ? `${JSON.stringify(e, null, 2)}\n` : `appended seq ${e.seq} ${e.hash}\n`);
    } finally {
      await store.close();
    }
  });

  addOptions(
    journal
      .command("verify")
      .description("verify a journal database or JSONL export offline; exit 0 only when intact"),
    VERIFY_OPTIONS,
  ).action(async (opts: VerifyOpts) => {
    if (opts.keys === undefined || opts.keys.length === 0) {
      throw new CliError("ERR_CLI_USAGE", "verification needs the journal's public key: --keys FILE...");
    }
    const keyring = new Keyring(opts.keys.map((f) => loadPublicKeyFile(f)));
    const expectHead = opts.expectHead === undefined ? undefined : readJsonFile(opts.expectHead);
    let workers: number | undefined;
    if (opts.workers !== undefined) {
      workers = Number(opts.workers);
      if (!Number.isInteger(workers) || workers < 0 || workers > 64) {
        throw new CliError("ERR_CLI_USAGE", "--workers must be an integer from 0 to 64");
      }
    }
    const files = verifyInputs(opts);
    const approvers = opts.approverKeys === undefined ? undefined : approverRing(opts.approverKeys);
    const several = { workers, json: opts.json === true, approvers };
    if (opts.url !== undefined && opts.chain === undefined) {
      await verifyDatabase(opts.url, keyring, several, ctx);
      return;
    }
    if (files.length > 1) {
      await verifyFiles(files, keyring, several, ctx);
      return;
    }
    const file = files[0] ?? "";
    // A segment journal is verified from its segment files, never through its index.
    const f = opts.url === undefined ? openJournalFile(file) : null;
    const store = f === null ? await verifyStore(opts) : f.store;
    try {
      const total = f !== null ? await f.size() : store ? await store.count() : countLines(file);
      const source: JournalSource = f !== null ? f.source() : (store ?? readJsonl(file));
      const bar = ctx.io.isTTY && total >= LARGE && !opts.json ? progressBar() : null;
      bar?.start(total, 0);
      const report = await verifySource(source, keyring, {
        workers: workers ?? (total >= LARGE ? availableParallelism() : 0),
        ...(expectHead === undefined ? {} : { expectHead }),
        ...(bar ? { onProgress: (n: number) => bar.update(n) } : {}),
      });
      if (bar) {
        bar.update(report.checked);
        bar.stop();
      }
      const approvals =
        approvers === undefined
          ? undefined
          : await verifyApprovalSignatures(f !== null ? f.entries() : store!.entries(), approvers);
      // Entry 1 of a per-replica chain names it (only once entry 1 is proven).
      const chain =
        report.checked > 0 ? await chainNameOf(f !== null ? f.entries() : store!.entries()) : null;
      ctx.io.out(
        verifyText(report, approvals, {
          json: opts.json === true,
          expectHead: expectHead !== undefined,
          chain,
        }),
      );
      if (!report.ok || approvals?.ok === false) ctx.exitCode = EXIT.failed;
    } finally {
      await store?.close();
    }
  });

  addOptions(
    journal
      .command("export")
      .description(
        "export every entry as JSONL (one canonical JSON entry per line), verifiable without the database",
      ),
    EXPORT_OPTIONS,
  ).action(async (opts: ExportOpts) => {
    if (opts.format !== "jsonl") throw new CliError("ERR_CLI_USAGE", "--format must be jsonl");
    const store = await chainStore(opts, "export");
    try {
      if (opts.out === undefined) {
        await exportJsonl(store, (c) => ctx.io.out(c));
        return;
      }
      const file = createWriteStream(opts.out, { flags: "wx", mode: 0o600 });
      const ready = new Promise<void>((res, rej) => file.once("open", () => res()).once("error", rej));
      await ready.catch((err: NodeJS.ErrnoException) => {
        throw new CliError("ERR_CLI_INPUT", `cannot write ${opts.out}: ${err.code ?? "error"}`);
      });
      await exportJsonl(store, (c) =>
        file.write(c) ? undefined : new Promise<void>((res) => file.once("drain", () => res())),
      );
      await new Promise<void>((res, rej) => file.end((err?: Error | null) => (err ? rej(err) : res())));
      ctx.io.out(`wrote ${opts.out} (0600): the journal as JSONL\n`);
    } finally {
      await store.close();
    }
  });

  addOptions(
    journal.command("show").description("list entries as a table, newest last"),
    SHOW_OPTIONS,
  ).action(async (opts: ShowOpts) => {
    const limit = opts.limit === undefined ? 50 : Number(opts.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new CliError("ERR_CLI_USAGE", "--limit must be a positive integer");
    if (opts.since !== undefined && Number.isNaN(Date.parse(opts.since))) {
      throw new CliError("ERR_CLI_USAGE", "--since must be an RFC 3339 time");
    }
    const store = openEmbeddedStore(opts.db, { readonly: true });
    try {
      const entries = (
        await store.query({
          ...(opts.run === undefined ? {} : { run_id: opts.run }),
          ...(opts.type === undefined ? {} : { type: opts.type }),
          ...(opts.decision === undefined ? {} : { decision: opts.decision }),
          ...(opts.since === undefined ? {} : { since: opts.since }),
          descending: true,
          limit,
        })
      ).reverse();
      ctx.io.out(
        opts.json
          ? `${JSON.stringify(entries, null, 2)}\n`
          : entries.length
            ? table(entries)
            : "no entries\n",
      );
    } finally {
      await store.close();
    }
  });

  addOptions(
    journal
      .command("head")
      .description(
        "print the journal's head (seq, hash, time) signed with the journal key, to keep elsewhere",
      ),
    HEAD_OPTIONS,
  ).action(async (opts: HeadOpts) => {
    const store = await chainStore(opts, "head");
    try {
      const signer = loadPrivateKeyFile(opts.key);
      const last = await store.last();
      if (last === null)
        throw new CliError("ERR_CLI_INPUT", "the journal is empty; there is no head to sign");
      const text = `${JSON.stringify(signHead(headOf(last), signer), null, 2)}\n`;
      if (opts.out !== undefined) writeFileSync(opts.out, text, { flag: "wx" });
      ctx.io.out(text);
      if (opts.out !== undefined) ctx.io.err(`wrote ${opts.out}: the signed head\n`);
    } finally {
      await store.close();
    }
  });
}
