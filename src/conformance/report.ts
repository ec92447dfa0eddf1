// The pass table: one line per check (spec, id, title, result, what was observed), then the
// counts. Not-configured and not-implemented rows are listed with their reason, never folded
// into the passes.
import type { ConformanceSummary } from "./types.js";

const MARK = { pass: "PASS", fail: "FAIL", "not-configured": "N/C ", "not-implemented": "N/I " } as const;

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

export function formatSummary(s: ConformanceSummary): string {
  const lines = [`warden conformance — ${s.mode} ${s.target} — ${s.specs.join(", ")}`, ""];
  const idWidth = Math.max(2, ...s.results.map((r) => r.id.length));
  lines.push(`${"spec".padEnd(5)}  ${"id".padEnd(idWidth)}  result  title / observed`);
  for (const r of s.results) {
    lines.push(`${r.spec.padEnd(5)}  ${r.id.padEnd(idWidth)}  ${MARK[r.result]}    ${cut(r.title, 100)}`);
    lines.push(
      `${"".padEnd(5 + 2 + idWidth + 2 + 8)}${r.result === "pass" || r.result === "fail" ? "observed: " : "why: "}${cut(r.observed, 240)}`,
    );
  }
  const c = s.counts;
  lines.push(
    "",
    `${s.results.length} checks: ${c.pass} pass, ${c.fail} fail, ${c["not-configured"]} not configured, ${c["not-implemented"]} not implemented — ${s.passed ? "PASS" : "FAIL"}`,
  );
  return `${lines.join("\n")}\n`;
}
