// What-if in the console (docs/evidence.md, `warden whatif`): a pasted policy (YAML, at
// most 256 KiB) tried on a recorded run or on every run with a decision in a time range.
// The journal is verified with the runtime's key, the policy is loaded by the policy
// layer's own loader first (a bad policy is its coded error, and nothing else happens),
// then the evidence layer replays the recorded requests under the pinned bundle with the
// policy replaced, through the entry point's replay host. The page shows the decisions
// that change: step, tool, decision before → after, the rules and reason codes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { sha256Hex, WardenError } from "../../contracts/index.js";
import { type ReplayHost, type RunReport, replayEntries, selectRuns } from "../../evidence/index.js";
import { loadPolicyBundle } from "../../policy/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsoleAction, ConsoleActionResult, ConsolePage, ConsoleViewContext } from "../page.js";
import {
  csrfField,
  errorBox,
  href,
  IsoTime,
  journalPath,
  MAX_PAGE_ROWS,
  parseInput,
  RunId,
  viewError,
} from "./common.js";
import { filledQuery } from "./journal.js";
import { verifiedEntries } from "./journal-actions.js";

/** Largest pasted policy (bytes of UTF-8). */
export const MAX_WHATIF_POLICY_BYTES = 256 * 1024;
/** Runs one what-if replays (each opens a throwaway runtime). */
export const MAX_WHATIF_RUNS = 20;

const WhatifForm = z
  .strictObject({
    csrf: z.string().max(512).optional(),
    policy: z
      .string()
      .min(1, "paste a policy")
      .refine(
        (s) => Buffer.byteLength(s, "utf8") <= MAX_WHATIF_POLICY_BYTES,
        "the policy is larger than 256 KiB",
      ),
    run: RunId.optional(),
    since: IsoTime.optional(),
    until: IsoTime.optional(),
  })
  .refine((f) => (f.run === undefined) !== (f.since === undefined && f.until === undefined), {
    message: "give a run or a time range, not both",
    path: ["run"],
  });
type WhatifForm = z.infer<typeof WhatifForm>;

function form(ctx: ConsoleViewContext, f: Partial<WhatifForm> = {}): Html {
  return html`<form class="whatif" method="post" action="${href(ctx, ["whatif"])}">${csrfField(ctx)}
<label>Policy (YAML, at most 256 KiB)<textarea name="policy" rows="16" cols="80" maxlength="${MAX_WHATIF_POLICY_BYTES}" required>${
    f.policy ?? ""
  }</textarea></label>
<fieldset><legend>Recorded runs</legend><label>run <input type="text" name="run" value="${f.run ?? ""}"></label>
or <label>from time <input type="text" name="since" value="${f.since ?? ""}"></label>
<label>to time <input type="text" name="until" value="${f.until ?? ""}"></label></fieldset>
<button type="submit">Try the policy</button></form>`;
}

interface Row {
  run: string;
  step: number;
  tool: string;
  before: string;
  after: string;
  rules: string[];
  reason: string;
}

function rowsOf(reports: readonly RunReport[]): Row[] {
  return reports.flatMap((r) =>
    r.steps
      .filter((s) => s.status !== "identical")
      .map((s) => ({
        run: r.runId,
        step: s.step,
        tool: s.tool,
        before: s.recorded.decision,
        after: s.replayed?.decision ?? "(failed)",
        rules: s.replayed?.matchedRules ?? [],
        reason:
          s.status === "failed"
            ? `${s.code ?? ""}: ${s.reason ?? ""}`
            : (s.replayed?.reasonCodes ?? []).join(", "),
      })),
  );
}

function diffTable(ctx: ConsoleViewContext, reports: readonly RunReport[]): Html {
  const rows = rowsOf(reports);
  const steps = reports.reduce((n, r) => n + r.steps.length, 0);
  const shown = rows.slice(0, MAX_PAGE_ROWS).map(
    (r) => html`<tr><td><a href="${href(ctx, ["runs", r.run])}">${agentText(r.run)}</a></td><td>${r.step}</td>
<td>${agentText(r.tool)}</td><td class="${`decision-${r.before}`}">${r.before}</td><td class="${`decision-${r.after}`}">${r.after}</td>
<td>${r.rules.map((x, i) => html`${i > 0 ? ", " : ""}<code>${agentText(x)}</code>`)}</td><td>${agentText(r.reason)}</td></tr>`,
  );
  return html`<p class="whatif-counts" role="status">${reports.length} run(s), ${steps} step(s): ${rows.length} changed, ${
    steps - rows.length
  } unchanged.</p>
${
  rows.length === 0
    ? ""
    : html`<table class="whatif-diff"><caption>Decisions that change</caption><thead><tr><th scope="col">run</th>
<th scope="col">step</th><th scope="col">tool</th><th scope="col">before</th><th scope="col">after</th>
<th scope="col">rules</th><th scope="col">reason</th></tr></thead><tbody>${shown}</tbody></table>`
}${rows.length > MAX_PAGE_ROWS ? html`<p class="cut" role="status">Cut: the first ${MAX_PAGE_ROWS} of ${rows.length} changed decisions.</p>` : ""}`;
}

async function tryPolicy(ctx: ConsoleViewContext, host: ReplayHost, f: WhatifForm): Promise<RunReport[]> {
  const db = journalPath(ctx.runtime);
  const dir = mkdtempSync(join(tmpdir(), "warden-console-whatif-"));
  try {
    const file = join(dir, "policy.yaml");
    writeFileSync(file, f.policy, { mode: 0o600 });
    loadPolicyBundle([file]);
    const entries = await verifiedEntries(ctx.runtime);
    const sel = {
      ...(f.run !== undefined ? { run: f.run } : {}),
      ...(f.since !== undefined ? { from: f.since } : {}),
      ...(f.until !== undefined ? { to: f.until } : {}),
    };
    const runs = selectRuns(entries, sel).length;
    if (runs > MAX_WHATIF_RUNS)
      throw viewError(
        "ERR_CONSOLE_VIEW_INPUT",
        `what-if: ${runs} runs selected, at most ${MAX_WHATIF_RUNS} (narrow the range)`,
      );
    return await replayEntries(entries, { db, host, change: { policy: [file] }, ...sel });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function handle(
  ctx: ConsoleViewContext,
  body: Readonly<Record<string, string>>,
  host: ReplayHost | undefined,
): Promise<ConsoleActionResult> {
  const filled = filledQuery(body);
  // Only values that are valid on their own are shown again (and audited).
  const valid = (schema: z.ZodType<string>, v: string | undefined) =>
    v === undefined || !schema.safeParse(v).success ? undefined : v;
  const run = valid(RunId, filled.run);
  const since = valid(IsoTime, filled.since);
  const until = valid(IsoTime, filled.until);
  const echo = {
    ...(run !== undefined ? { run } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
  try {
    const f = parseInput(WhatifForm, filled, "what-if");
    if (host === undefined)
      throw viewError(
        "ERR_CONSOLE_VIEW_UNAVAILABLE",
        "what-if needs the entry point's replay host (not configured)",
      );
    const reports = await tryPolicy(ctx, host, f);
    const changed = rowsOf(reports).length;
    return {
      kind: "page",
      html: html`<h1>What-if</h1>${diffTable(ctx, reports)}${form(ctx, f)}`,
      audit: {
        ...echo,
        ok: true,
        policy: sha256Hex(f.policy),
        policyBytes: Buffer.byteLength(f.policy, "utf8"),
        runs: reports.length,
        changed,
      },
    };
  } catch (err) {
    if (!(err instanceof WardenError)) throw err;
    return {
      kind: "page",
      html: html`<h1>What-if</h1>${errorBox(err)}${form(ctx, echo)}`,
      audit: { ...echo, ok: false, code: err.code },
    };
  }
}

export const WHATIF_PAGE: ConsolePage = {
  path: "/whatif",
  title: "What-if",
  roles: ["auditor"],
  render: async (ctx) =>
    html`<h1>What-if</h1><p>Try a policy on recorded runs: the decisions that would change are listed; nothing is executed and nothing in force changes.</p>${form(ctx)}`,
};

/** The what-if action over the entry point's replay host (without one it answers ERR_CONSOLE_VIEW_UNAVAILABLE). */
export function whatifAction(host: ReplayHost | undefined): ConsoleAction {
  return {
    path: "/whatif",
    roles: ["auditor"],
    audit: "warden.console.whatif",
    handle: (ctx, body) => handle(ctx, body, host),
  };
}
