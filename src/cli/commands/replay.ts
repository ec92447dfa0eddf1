// `warden replay RUN --journal DB [--keys FILE...] [--json]`: DARE conformance check 3.
// The run's recorded requests go through the bundle pinned in the journal, executors
// answered from the recorded snapshots (never the real ones); one line per step:
// identical or diverged, or failed with the code (a snapshot or the bundle tampered with or
// missing). Exit 0 when every step is identical, 1 otherwise, 2 for bad input.
import type { Command } from "commander";
import { WardenError } from "../../contracts/index.js";
import { type RunReport, replayRuns, type StepReport } from "../../evidence/index.js";
import { type CliContext, EXIT } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { cliReplayHost } from "../replay-host.js";
import { journalKeys } from "./export.js";
import { SUMMARY } from "./summaries.js";

/** The evidence could not be trusted: a negative outcome (exit 1), not bad input. */
const UNTRUSTED: ReadonlySet<string> = new Set([
  "ERR_EVIDENCE_JOURNAL_INVALID",
  "ERR_EVIDENCE_BUNDLE_TAMPERED",
  "ERR_EVIDENCE_BUNDLE_MISSING",
]);

const REPLAY_OPTIONS = defineOptions({
  journal: { flags: "--journal <file>", description: "journal database", kind: "value", required: true },
  keys: {
    flags: "--keys <files...>",
    description: "the journal's key files (default: <journal>.key.pem beside it)",
    kind: "values",
  },
  json: { flags: "--json", description: "print the report as JSON", kind: "flag" },
});
type ReplayOpts = OptionsOf<typeof REPLAY_OPTIONS>;

function stepLine(s: StepReport): string {
  const to = s.replayed ? s.replayed.decision : "-";
  const why = s.code !== undefined ? `${s.code}: ${s.reason ?? ""}` : (s.reason ?? "");
  return `${String(s.step).padStart(4)}  ${s.tool.padEnd(24)} ${s.recorded.decision.padEnd(7)} → ${to.padEnd(7)} ${s.status}${why ? `  ${why}` : ""}\n`;
}

export function reportText(r: RunReport): string {
  const head = `run ${r.runId}  bundle ${r.bundleHash}\nstep  tool                     recorded → replayed status\n`;
  const c = r.counts;
  return `${head}${r.steps.map(stepLine).join("")}${c.identical} identical, ${c.diverged} diverged, ${c.failed} failed\n`;
}

export function registerReplay(program: Command, ctx: CliContext): void {
  addOptions(
    program.command("replay").description(SUMMARY.replay).argument("<run>", "run id"),
    REPLAY_OPTIONS,
  ).action(async (run: string, o: ReplayOpts) => {
    let reports: RunReport[];
    try {
      reports = await replayRuns({
        db: o.journal,
        keys: journalKeys(o.journal, o.keys),
        run,
        host: cliReplayHost,
      });
    } catch (err) {
      if (err instanceof WardenError && UNTRUSTED.has(err.code)) {
        ctx.io.err(`${err.code}: ${err.message}\n`);
        ctx.exitCode = EXIT.failed;
        return;
      }
      throw err;
    }
    ctx.io.out(o.json ? `${JSON.stringify(reports, null, 2)}\n` : reports.map(reportText).join("\n"));
    if (reports.some((r) => r.counts.diverged + r.counts.failed > 0)) ctx.exitCode = EXIT.failed;
  });
}
