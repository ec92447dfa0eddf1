// `warden export --format FORMAT (RUN | --from ISO --to ISO) --journal DB [--keys FILE...]
// [--out FILE]`: evidence out of the journal in a format other tools read. Formats are one
// table (`FORMATS`); each takes the same options and resolves to the number of records
// written. `gate`: the DARE record set as GATE JSONL (docs/evidence.md); `ocsf` / `cef`:
// OCSF 1.3.0 events / CEF lines for a SIEM (docs/telemetry.md). Exit 0 with the
// count on stderr; 1 when the journal does not verify; 2 for bad input.
import { createWriteStream, existsSync } from "node:fs";
import type { Command } from "commander";
import { CliError, WardenError } from "../../contracts/index.js";
import { exportGate } from "../../evidence/index.js";
import { type ExportFormat, TELEMETRY_FORMATS } from "../../telemetry/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { SUMMARY } from "./summaries.js";

export type { ExportFormat };

/** `gate` (src/evidence) and the SIEM formats `ocsf` and `cef` (src/telemetry). */
export const FORMATS: Record<string, ExportFormat> = {
  gate: (o) => exportGate(o),
  ...TELEMETRY_FORMATS,
};

export const EXPORT_OPTIONS = defineOptions({
  format: {
    flags: "--format <format>",
    description: "output format: gate, ocsf or cef",
    kind: "value",
    required: true,
  },
  journal: { flags: "--journal <file>", description: "journal database", kind: "value", required: true },
  keys: {
    flags: "--keys <files...>",
    description: "the journal's key files (default: <journal>.key.pem beside it); gate needs the private key",
    kind: "values",
  },
  from: {
    flags: "--from <iso>",
    description: "every run with a decision at or after this time",
    kind: "value",
  },
  to: { flags: "--to <iso>", description: "every run with a decision at or before this time", kind: "value" },
  out: { flags: "--out <file>", description: "write to a new file (0600) instead of stdout", kind: "value" },
});
type ExportOpts = OptionsOf<typeof EXPORT_OPTIONS>;

/** The key files: as given, else the private key the CLI keeps beside a journal it created. */
export function journalKeys(journal: string, keys: string[] | undefined): string[] {
  if (keys !== undefined && keys.length > 0) return keys;
  const beside = `${journal}.key.pem`;
  if (existsSync(beside)) return [beside];
  throw new CliError("ERR_CLI_USAGE", `no key beside ${journal}: give the journal's key files with --keys`);
}

/** RUN or a time range, exactly one of them. */
export function selection(run: string | undefined, o: { from?: string; to?: string }) {
  if (run !== undefined && (o.from !== undefined || o.to !== undefined))
    throw new CliError("ERR_CLI_USAGE", "give a RUN or --from/--to, not both");
  if (run === undefined && o.from === undefined && o.to === undefined)
    throw new CliError("ERR_CLI_USAGE", "give a RUN or a time range (--from ISO --to ISO)");
  return {
    ...(run !== undefined ? { run } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: o.to } : {}),
  };
}

async function toFile(
  path: string,
  run: (write: (line: string) => void) => Promise<number>,
): Promise<number> {
  const file = createWriteStream(path, { flags: "wx", mode: 0o600 });
  await new Promise<void>((res, rej) => file.once("open", () => res()).once("error", rej)).catch(
    (err: NodeJS.ErrnoException) => {
      throw new CliError("ERR_CLI_INPUT", `cannot write ${path}: ${err.code ?? "error"}`);
    },
  );
  try {
    return await run((line) => void file.write(line));
  } finally {
    await new Promise<void>((res, rej) => file.end((err?: Error | null) => (err ? rej(err) : res())));
  }
}

export function registerExport(program: Command, ctx: CliContext): void {
  addOptions(
    program.command("export").description(SUMMARY.export).argument("[run]", "run id"),
    EXPORT_OPTIONS,
  ).action(async (run: string | undefined, o: ExportOpts) => {
    const format = Object.hasOwn(FORMATS, o.format) ? FORMATS[o.format] : undefined;
    if (format === undefined)
      throw new CliError("ERR_CLI_USAGE", `--format must be one of ${Object.keys(FORMATS).join(", ")}`);
    const opts = { db: o.journal, keys: journalKeys(o.journal, o.keys), ...selection(run, o) };
    try {
      const n =
        o.out === undefined
          ? await format({ ...opts, write: (line) => ctx.io.out(line) })
          : await toFile(o.out, (write) => format({ ...opts, write }));
      ctx.io.err(`${n} records\n`);
      if (o.out !== undefined) ctx.io.out(`wrote ${o.out} (0600): ${n} ${o.format} records\n`);
    } catch (err) {
      if (err instanceof WardenError && err.code === "ERR_EVIDENCE_JOURNAL_INVALID") {
        ctx.io.err(`${err.code}: ${err.message}\n`);
        ctx.exitCode = EXIT.failed;
        return;
      }
      throw err;
    }
  });
}
