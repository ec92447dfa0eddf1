// `--failures`: every pair a defended mode got wrong, one block each — for a successful
// attack, the injection's state-changing calls that executed, with the decision and the flow
// facts policy saw (targets, copied, sources, fromRequest, untargeted, sensitive); for a lost user task,
// the user's calls that were refused and why. Study material: which general rule is missing.
import type { StepResult } from "./harness.js";
import type { Failure, SuiteReport } from "./run.js";

const MAX_ARG = 80;

function args(a: Record<string, unknown>): string {
  return Object.entries(a)
    .map(([k, v]) => {
      const s = JSON.stringify(v) ?? "";
      return `${k}=${s.length > MAX_ARG ? `${s.slice(0, MAX_ARG)}…` : s}`;
    })
    .join(", ");
}

function flow(s: StepResult): string {
  const f = s.flow;
  if (f === undefined) return "no flow facts (refused before policy)";
  return [
    `targets [${f.targets.join(", ")}]`,
    `copied [${f.copied.join(", ")}] from [${f.copiedSources.join(", ")}]`,
    `named by [${f.namedSources.join(", ")}]`,
    `unsourced [${f.unsourced.join(", ")}]`,
    `dictated numbers [${f.dictatedNumbers.join(", ")}]`,
    `fromRequest ${f.fromRequest}`,
    `untargeted ${f.untargeted}`,
    `sensitive [${f.sensitive.join(", ")}]`,
  ].join("; ");
}

function block(rep: SuiteReport, f: Failure): string[] {
  const head = `- ${rep.suite}/${rep.phrasing} ${f.mode} ${f.kind}: ${f.user} × ${f.injection}`;
  const lines = f.steps.map(
    (s) =>
      `    ${s.call.function}(${args(s.call.args)}) → ${s.decision} [${s.reasons.join(", ")}]; ${flow(s)}`,
  );
  return [head, ...(lines.length > 0 ? lines : ["    (no refused or harmful call recorded)"])];
}

/** The failing pairs of every report, grouped by suite, phrasing and mode. */
export function formatFailures(reports: readonly SuiteReport[]): string {
  const out = ["Failing pairs (defended modes):"];
  for (const rep of reports) for (const f of rep.failures) out.push(...block(rep, f));
  if (out.length === 1) out.push("- none");
  return out.join("\n");
}
