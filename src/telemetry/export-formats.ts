// `warden export --format ocsf|cef`: the export formats this layer contributes to the
// export command's format table (src/cli/commands/export.ts). Each reads a signed journal,
// verifies it with the given public keys first (a journal that does not verify exports
// nothing: an unverifiable record is not evidence), and writes one line per event.

import { CliError } from "../contracts/index.js";
import { Keyring, loadPublicKeyFile } from "../crypto/index.js";
import { type JournalEntry, openEmbeddedStore, verifyJournal } from "../journal/index.js";
import { toCef } from "./cef.js";
import { toOcsf } from "./ocsf.js";

/** The export command's format signature (kept identical to src/cli/commands/export.ts). */
export type ExportFormat = (opts: {
  db: string;
  keys: string[];
  run?: string;
  from?: string;
  to?: string;
  write: (line: string) => void;
}) => Promise<number>;

/** A bound of `from` / `to`: a journal sequence number, or an ISO time. */
type Bound = { seq: number } | { time: number };

function bound(v: string | undefined, flag: string): Bound | undefined {
  if (v === undefined) return undefined;
  if (/^\d{1,15}$/.test(v)) return { seq: Number(v) };
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new CliError("ERR_CLI_USAGE", `${flag} takes a sequence number or an ISO time`);
  return { time: t };
}

const after = (e: JournalEntry, b: Bound | undefined) =>
  b === undefined || ("seq" in b ? e.seq >= b.seq : Date.parse(e.time) >= b.time);
const before = (e: JournalEntry, b: Bound | undefined) =>
  b === undefined || ("seq" in b ? e.seq <= b.seq : Date.parse(e.time) <= b.time);

function format(line: (e: JournalEntry) => string | undefined): ExportFormat {
  return async (opts) => {
    if (opts.keys.length === 0)
      throw new CliError(
        "ERR_CLI_USAGE",
        "export verifies the journal first: give its public key (--keys FILE)",
      );
    const from = bound(opts.from, "--from");
    const to = bound(opts.to, "--to");
    const keyring = new Keyring(opts.keys.map((f) => loadPublicKeyFile(f)));
    const store = openEmbeddedStore(opts.db, { readonly: true });
    try {
      const report = await verifyJournal(store, keyring);
      if (!report.ok)
        throw new CliError(
          "ERR_CLI_INPUT",
          `the journal does not verify at entry ${report.failure.seq}: ${report.failure.reason}`,
        );
      let n = 0;
      for await (const e of store.entries()) {
        if (!("seq" in e) || !("body" in e)) continue;
        if (opts.run !== undefined && e.run_id !== opts.run) continue;
        if (!after(e, from) || !before(e, to)) continue;
        const out = line(e);
        if (out === undefined) continue;
        opts.write(`${out}\n`);
        n++;
      }
      return n;
    } finally {
      await store.close();
    }
  };
}

/** One OCSF 1.3.0 JSON object per line. */
export const ocsfFormat: ExportFormat = format((e) => {
  const ev = toOcsf(e);
  return ev === undefined ? undefined : JSON.stringify(ev);
});

/** One CEF:0 line per event. */
export const cefFormat: ExportFormat = format(toCef);

export const TELEMETRY_FORMATS: Record<string, ExportFormat> = { ocsf: ocsfFormat, cef: cefFormat };
