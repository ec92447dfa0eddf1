// `warden shadow report --journal DB [--since ISO] [--json]`: what the shadow bundle would
// have decided otherwise, grouped by rule and tool with examples (src/evidence/shadow-report.ts).
// `warden shadow promote --config SIDECAR.yaml --report REPORT.json --by NAME`: makes the
// configured shadow bundle the enforcing one — only with a report made over that very
// bundle (its hash among the report's shadow bundles, the report's sha256 intact) — journals
// `warden.policy.shadow_promoted` (who, which report, both bundle hashes) and rewrites the
// config file (comments kept): `policies` become the shadow's, `shadow` is removed. The
// sidecar enforces the promoted bundle from its next start.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { parseDocument } from "yaml";
import { CliError, POLICY_SHADOW_PROMOTED, sha256Of } from "../../contracts/index.js";
import { type ShadowReport, shadowReport } from "../../evidence/index.js";
import { openJournal, SqliteJournalStore } from "../../journal/index.js";
import { loadPolicyBundle } from "../../policy/index.js";
import { loadJournalKey, loadSidecarConfig } from "../../server/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { openJournalFile } from "./journal-files.js";
import { SUMMARY } from "./summaries.js";

const REPORT_OPTIONS = defineOptions({
  journal: { flags: "--journal <file>", description: "journal database", kind: "value", required: true },
  since: { flags: "--since <iso>", description: "only entries at or after this time", kind: "value" },
  json: { flags: "--json", description: "print the report as JSON (the input of promote)", kind: "flag" },
});

const PROMOTE_OPTIONS = defineOptions({
  config: {
    flags: "--config <file>",
    description: "the sidecar configuration",
    kind: "value",
    required: true,
  },
  report: {
    flags: "--report <file>",
    description: "the JSON report (shadow report --json) you reviewed",
    kind: "value",
    required: true,
  },
  by: { flags: "--by <name>", description: "who promotes (journaled)", kind: "value", required: true },
});

export function registerShadow(program: Command, ctx: CliContext): void {
  const shadow = program.command("shadow").description(SUMMARY.shadow);
  addOptions(
    shadow.command("report").description("summarise the shadow bundle's disagreements by rule and tool"),
    REPORT_OPTIONS,
  ).action(async (opts: OptionsOf<typeof REPORT_OPTIONS>) => {
    const since = opts.since === undefined ? undefined : isoOf(opts.since);
    const file = openJournalFile(opts.journal);
    try {
      const r = await shadowReport(() => file.entries(), since === undefined ? {} : { since });
      ctx.io.out(opts.json ? `${JSON.stringify(r, null, 2)}\n` : renderReport(r));
    } finally {
      await file.store?.close();
    }
  });
  addOptions(
    shadow
      .command("promote")
      .description("make the shadow bundle the enforcing one, recording who and which report"),
    PROMOTE_OPTIONS,
  ).action(async (opts: OptionsOf<typeof PROMOTE_OPTIONS>) => {
    ctx.io.out(await promote(opts));
  });
}

function isoOf(s: string): string {
  const t = Date.parse(s);
  if (Number.isNaN(t)) throw new CliError("ERR_CLI_USAGE", "--since is an ISO 8601 time");
  return new Date(t).toISOString();
}

function readReport(path: string): ShadowReport {
  let r: ShadowReport;
  try {
    r = JSON.parse(readFileSync(path, "utf8")) as ShadowReport;
  } catch (err) {
    throw new CliError("ERR_CLI_INPUT", `${path} is not a JSON shadow report`, { cause: err });
  }
  const { sha256, ...body } = r ?? ({} as ShadowReport);
  if (typeof sha256 !== "string" || sha256Of(body) !== sha256)
    throw new CliError("ERR_CLI_INPUT", `${path}: the report's sha256 does not match its content`);
  return r;
}

async function promote(opts: OptionsOf<typeof PROMOTE_OPTIONS>): Promise<string> {
  const loaded = loadSidecarConfig(opts.config);
  const c = loaded.config;
  if (c.shadow === undefined)
    throw new CliError("ERR_CLI_INPUT", `${opts.config} has no shadow bundle to promote`);
  const report = readReport(opts.report);
  const from = loadPolicyBundle(c.policies).policyBundleHash;
  const to = loadPolicyBundle(c.shadow.policies).policyBundleHash;
  if (!report.shadow_bundles.includes(to))
    throw new CliError(
      "ERR_CLI_INPUT",
      `${opts.report} is not a report over the configured shadow bundle ${to}; run warden shadow report --json again`,
    );
  const store = SqliteJournalStore.open(c.journal.path);
  try {
    const j = await openJournal({ store, signer: loadJournalKey(loaded) });
    await j.appendBuilt({
      type: POLICY_SHADOW_PROMOTED,
      body: {
        by: opts.by,
        from_bundle_hash: from,
        to_bundle_hash: to,
        report_sha256: report.sha256 as `sha256:${string}`,
        report_diffs: report.diffs,
        sources: c.shadow.policies.map((p) => p.slice(-4096)),
      },
    });
  } finally {
    await store.close();
  }
  rewriteConfig(opts.config);
  return `promoted ${to} (was ${from}) by ${opts.by}; wrote ${opts.config}; restart the sidecar to enforce it\n`;
}

/** `policies` ← `shadow.policies`, `shadow` removed; comments and layout kept; atomic replace. */
function rewriteConfig(path: string): void {
  const doc = parseDocument(readFileSync(path, "utf8"));
  const policies = doc.getIn(["shadow", "policies"], true);
  doc.set("policies", policies);
  doc.delete("shadow");
  const tmp = `${path}.promote-${process.pid}.tmp`;
  writeFileSync(tmp, String(doc), { mode: 0o600 });
  renameSync(tmp, path);
}

function renderReport(r: ShadowReport): string {
  const lines = [
    `shadow bundle ${r.shadow_bundles.join(", ") || "(no disagreement recorded)"}`,
    `${r.diffs} of ${r.decisions} decisions would change${r.dropped > 0 ? `; ${r.dropped} never judged (queue full)` : ""}`,
    `window ${r.since ?? "start"} .. ${r.until ?? "-"}; report ${r.sha256}`,
  ];
  for (const g of r.groups) {
    lines.push(`  ${g.count}× ${g.tool} ${g.change} by ${g.shadow_rules.join(", ") || "-"}`);
    for (const x of g.examples)
      lines.push(`      ${x.time} ${x.decision_id} ${JSON.stringify(x.parameters ?? {})}`);
  }
  if (r.groups_truncated) lines.push("  (more groups than the report lists; counted above)");
  return `${lines.join("\n")}\n`;
}
