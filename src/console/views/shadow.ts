// The shadow report in the console (docs/policy.md#shadow-policies): what the shadow bundle
// would have decided otherwise over the verified journal, grouped by change, shadow rules and
// tool, with example calls. Read-only for auditors: promotion is the CLI's, which records who
// promoted and which report they saw. Every string that came from an agent (tool names,
// parameters, rule ids) is rendered as visible text.

import { z } from "zod";
import { type ShadowReport, shadowReport } from "../../evidence/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsolePage, ConsoleViewContext } from "../page.js";
import { decisionTag, href, IsoTime, MAX_PAGE_ROWS, orError, parseInput } from "./common.js";
import { verifiedEntries } from "./journal-actions.js";

const Query = z.strictObject({ since: IsoTime.optional() });

async function report(ctx: ConsoleViewContext, since: string | undefined): Promise<ShadowReport> {
  const entries = await verifiedEntries(ctx.runtime);
  const iterate = async function* () {
    yield* entries;
  };
  return shadowReport(iterate, since === undefined ? {} : { since });
}

function groupsTable(ctx: ConsoleViewContext, r: ShadowReport): Html {
  if (r.groups.length === 0) return html`<p role="status">No disagreement in this window.</p>`;
  const rows = r.groups.slice(0, MAX_PAGE_ROWS).map((g) => {
    const [before, after] = g.change.split("→");
    const examples = g.examples.map(
      (x) =>
        html`<li><a href="${href(ctx, ["runs", x.run_id ?? ""])}">${agentText(x.run_id ?? "-")}</a> ${agentText(x.time)} <code>${agentText(
          JSON.stringify(x.parameters ?? {}).slice(0, 512),
        )}</code></li>`,
    );
    return html`<tr><td>${g.count}</td><td>${agentText(g.tool)}</td><td>${decisionTag(before ?? "")} → ${decisionTag(after ?? "")}</td>
<td>${g.shadow_rules.map((x, i) => html`${i > 0 ? ", " : ""}<code>${agentText(x)}</code>`)}</td><td><ul>${examples}</ul></td></tr>`;
  });
  return html`<table class="shadow-groups"><caption>Decisions the shadow bundle would change</caption><thead><tr>
<th scope="col">calls</th><th scope="col">tool</th><th scope="col">enforced → shadow</th><th scope="col">shadow rules</th><th scope="col">examples</th>
</tr></thead><tbody>${rows}</tbody></table>`;
}

async function render(ctx: ConsoleViewContext, query: Readonly<Record<string, string>>): Promise<Html> {
  return orError(async () => {
    const q = parseInput(Query, query, "shadow report");
    const r = await report(ctx, q.since);
    const bundles = r.shadow_bundles.length === 0 ? "none loaded" : r.shadow_bundles.join(", ");
    return html`<p role="status">${r.diffs} of ${r.decisions} decisions would change${
      r.dropped > 0 ? `; ${r.dropped} never judged (the shadow's queue was full)` : ""
    }. Shadow bundle: <code>${bundles}</code>. Report <code>${r.sha256}</code>.</p>
<form method="get" action="${href(ctx, ["shadow"])}"><label>since <input type="text" name="since" value="${q.since ?? ""}"></label>
<button type="submit">Show</button></form>${groupsTable(ctx, r)}${
      r.groups_truncated
        ? html`<p class="cut" role="status">More groups than the report lists (counted above).</p>`
        : ""
    }<p>Promote with <code>warden shadow promote --config … --report … --by …</code> (docs/policy.md).</p>`;
  });
}

export const SHADOW_PAGE: ConsolePage = {
  path: "/shadow",
  title: "Shadow",
  roles: ["auditor"],
  render: async (ctx, input) => html`<h1>Shadow policy</h1>${await render(ctx, input.query)}`,
};
