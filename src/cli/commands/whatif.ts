// `warden whatif RUN --policy NEW.yaml [--contracts DIR] [--from ISO --to ISO] --journal DB
// [--json]`: the recorded requests of a run (or of every run in a time range) replayed under
// the pinned bundle with its policies and/or contracts replaced. Prints the decisions that
// change (step, tool, old → new, reason) and the counts; `--json` for CI. Exit 0 whatever
// changed (a what-if is a question, not a check); 2 for bad input; a tampered journal,
// bundle or snapshot is still refused.
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import { type RunReport, replayRuns } from "../../evidence/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { cliReplayHost } from "../replay-host.js";
import { journalKeys, selection } from "./export.js";
import { SUMMARY } from "./summaries.js";

const WHATIF_OPTIONS = defineOptions({
  journal: { flags: "--journal <file>", description: "journal database", kind: "value", required: true },
  policy: { flags: "--policy <files...>", description: "the policy files to try instead", kind: "values" },
  contracts: {
    flags: "--contracts <dir>",
    description: "the contract directory to try instead",
    kind: "value",
  },
  from: {
    flags: "--from <iso>",
    description: "every run with a decision at or after this time",
    kind: "value",
  },
  to: { flags: "--to <iso>", description: "every run with a decision at or before this time", kind: "value" },
  keys: {
    flags: "--keys <files...>",
    description: "the journal's key files (default: <journal>.key.pem beside it)",
    kind: "values",
  },
  json: { flags: "--json", description: "print the diff as JSON", kind: "flag" },
});
type WhatifOpts = OptionsOf<typeof WHATIF_OPTIONS>;

export interface WhatifRow {
  run: string;
  step: number;
  tool: string;
  old: string;
  new: string;
  reason: string;
}

/** The new decision's reason codes, and the matched rules a `RULE:<id>` code does not already name. */
function reasonOf(v: { reasonCodes: string[]; matchedRules: string[] } | undefined): string {
  if (v === undefined) return "";
  const rules = v.matchedRules.filter((m) => !v.reasonCodes.includes(`RULE:${m}`)).map((m) => `rule ${m}`);
  return [...v.reasonCodes, ...rules].join(", ");
}

export function diffRows(reports: readonly RunReport[]): WhatifRow[] {
  return reports.flatMap((r) =>
    r.steps
      .filter((s) => s.status !== "identical")
      .map((s) => ({
        run: r.runId,
        step: s.step,
        tool: s.tool,
        old: s.recorded.decision,
        new: s.replayed?.decision ?? "(failed)",
        reason: s.status === "failed" ? `${s.code}: ${s.reason ?? ""}` : reasonOf(s.replayed),
      })),
  );
}

function table(rows: readonly WhatifRow[], runs: number, steps: number): string {
  const w = Math.max(4, ...rows.map((r) => r.tool.length));
  const lines = rows.map(
    (r) =>
      `| ${String(r.step).padStart(4)} | ${r.tool.padEnd(w)} | ${`${r.old} → ${r.new}`.padEnd(17)} | ${r.reason} |`,
  );
  const head = `| step | ${"tool".padEnd(w)} | old → new         | reason |\n|-----:|${"-".repeat(w + 2)}|-------------------|--------|\n`;
  return `${rows.length > 0 ? `${head}${lines.join("\n")}\n` : ""}${runs} run(s), ${steps} step(s): ${rows.length} changed, ${steps - rows.length} unchanged\n`;
}

export function registerWhatif(program: Command, ctx: CliContext): void {
  addOptions(
    program.command("whatif").description(SUMMARY.whatif).argument("[run]", "run id"),
    WHATIF_OPTIONS,
  ).action(async (run: string | undefined, o: WhatifOpts) => {
    if (o.policy === undefined && o.contracts === undefined)
      throw new CliError("ERR_CLI_USAGE", "give the change to try: --policy FILE... and/or --contracts DIR");
    const reports = await replayRuns({
      db: o.journal,
      keys: journalKeys(o.journal, o.keys),
      ...selection(run, o),
      host: cliReplayHost,
      change: { policy: o.policy, contractsDir: o.contracts },
    });
    const rows = diffRows(reports);
    const steps = reports.reduce((n, r) => n + r.steps.length, 0);
    if (o.json) {
      const changed = rows.length;
      ctx.io.out(
        `${JSON.stringify({ runs: reports.length, steps, changed, unchanged: steps - changed, rows }, null, 2)}\n`,
      );
    } else ctx.io.out(table(rows, reports.length, steps));
  });
}
