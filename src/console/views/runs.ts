// The runs pages: `/runs` lists the runs of the newest journal entries (principal, first
// and last time, counts, quarantine state) in pages; `/runs/:id` is one run — its
// timeline (decisions, resolutions, executions, denials, approvals in journal order with
// their codes), its provenance graph and its agent's trust. Read-only, auditors and approvers.
import { z } from "zod";
import { GATE_DECISION, GATE_RESOLUTION, GATE_RESULT, type GateDecisionBody } from "../../contracts/index.js";
import type { JournalEntry } from "../../journal/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsolePage, ConsolePageInput, ConsoleViewContext } from "../page.js";
import {
  decisionTag,
  href,
  MAX_PAGE,
  MAX_SCANNED_ENTRIES,
  orError,
  PAGE_ROWS,
  PageNo,
  pager,
  parseInput,
  RunId,
} from "./common.js";
import { provenanceGraph } from "./provenance.js";
import { listRuns, type QuarantineState, quarantineOf, runEntries } from "./runs-data.js";
import { trustSection } from "./trust.js";

const READERS = ["auditor", "approver"] as const;
/** The approver-signed DARE HITL record (src/evidence reads the same type). */
const HITL_TYPE = "dare.hitl.decision";
const ListQuery = z.strictObject({ page: PageNo.optional() });
const RunParams = z.strictObject({ id: RunId });
const RunQuery = z.strictObject({ page: PageNo.optional() });

function quarantineCell(q: QuarantineState): Html {
  if (q.state === "quarantined")
    return html`<span class="quarantined">quarantined (${q.by})</span> ${agentText(q.reason)}`;
  return q.state === "clear"
    ? html`<span class="clear">no</span>`
    : html`<span class="unknown">not known</span>`;
}

async function renderList(ctx: ConsoleViewContext, input: ConsolePageInput): Promise<Html> {
  const q = parseInput(ListQuery, input.query, "runs page");
  const no = q.page ?? 1;
  const list = await listRuns(ctx.runtime);
  const rows = list.runs.slice((no - 1) * PAGE_ROWS, no * PAGE_ROWS).map(
    (r) => html`<tr><td><a href="${href(ctx, ["runs", r.runId])}">${agentText(r.runId)}</a></td>
<td>${r.principal === undefined ? "" : agentText(r.principal)}</td><td>${r.first}</td><td>${r.last}</td>
<td>${r.decisions}</td><td>${r.denials}</td><td>${r.executions}</td><td>${r.approvals}</td>
<td>${quarantineCell(quarantineOf(ctx.runtime, r.runId, r.principal))}</td></tr>`,
  );
  return html`<h1>Runs</h1>
${list.cut ? html`<p class="cut" role="status">From the newest ${MAX_SCANNED_ENTRIES} journal entries.</p>` : ""}
<table class="runs"><thead><tr><th scope="col">run</th><th scope="col">principal</th><th scope="col">first</th>
<th scope="col">last</th><th scope="col">decisions</th><th scope="col">denials</th><th scope="col">executions</th>
<th scope="col">approvals</th><th scope="col">quarantined</th></tr></thead><tbody>${rows}</tbody></table>
${rows.length === 0 ? html`<p class="empty">No runs on this page.</p>` : ""}
${pager(ctx, ["runs"], { no, more: list.runs.length > no * PAGE_ROWS && no < MAX_PAGE, query: {} })}`;
}

function codes(list: readonly string[]): Html {
  return html`${list.map((c, i) => html`${i > 0 ? ", " : ""}<code>${agentText(c)}</code>`)}`;
}

/** What one timeline row says about its entry (structured fields only, never rationale). */
function summary(e: JournalEntry): Html {
  const b = e.body as Record<string, unknown>;
  if (e.type === GATE_DECISION) {
    const d = b as unknown as GateDecisionBody;
    const reasons = d.matched_rules.map((r) => r.reason).filter((r): r is string => r !== undefined);
    return html`${decisionTag(d.decision)} ${agentText(d.tool ?? `${d.tool_class}.${d.action}`)} — ${codes(
      d.reason_codes,
    )}${reasons.length > 0 ? html` — ${reasons.map((r, i) => html`${i > 0 ? "; " : ""}${agentText(r)}`)}` : ""}`;
  }
  if (e.type === GATE_RESOLUTION)
    return html`${decisionTag(String(b.resolved))} via ${agentText(String(b.via))}: ${agentText(String(b.outcome))}${
      typeof b.by === "string" ? html` by ${agentText(b.by)}` : ""
    }${typeof b.justification === "string" ? html` — ${agentText(b.justification)}` : ""} ${codes(
      Array.isArray(b.reason_codes) ? b.reason_codes.map(String) : [],
    )}`;
  if (e.type === GATE_RESULT)
    return html`executed: ${agentText(String(b.outcome ?? "reported"))}, ${agentText(String(b.classification))}`;
  if (e.type === HITL_TYPE) {
    const d = (b.decision ?? {}) as { action?: unknown; approver_id?: unknown; justification?: unknown };
    return html`signed ${agentText(String(d.action))} by ${agentText(String(d.approver_id))} — ${agentText(
      String(d.justification),
    )}`;
  }
  const code =
    typeof b.code === "string" ? b.code : typeof b.error_code === "string" ? b.error_code : undefined;
  return code === undefined ? html`` : html`<code>${agentText(code)}</code>`;
}

function kindOf(e: JournalEntry): string {
  if (e.type === GATE_DECISION)
    return (e.body as { decision?: string }).decision === "deny" ? "denial" : "decision";
  if (e.type === GATE_RESOLUTION)
    return (e.body as { via?: string }).via === "approval" ? "approval" : "resolution";
  if (e.type === GATE_RESULT) return "execution";
  if (e.type === HITL_TYPE) return "approval";
  return "event";
}

function timeline(ctx: ConsoleViewContext, entries: readonly JournalEntry[]): Html {
  const rows = entries.map(
    (
      e,
    ) => html`<tr class="${`tl-${kindOf(e)}`}"><td><a href="${href(ctx, ["journal", String(e.seq)])}">${e.seq}</a></td>
<td>${e.time}</td><td>${kindOf(e)}</td><td><code>${agentText(e.type)}</code></td><td>${summary(e)}</td></tr>`,
  );
  return html`<table class="timeline"><caption>Timeline</caption><thead><tr><th scope="col">seq</th><th scope="col">time</th>
<th scope="col">kind</th><th scope="col">type</th><th scope="col">what</th></tr></thead><tbody>${rows}</tbody></table>`;
}

async function renderRun(ctx: ConsoleViewContext, input: ConsolePageInput): Promise<Html> {
  const { id } = parseInput(RunParams, input.params, "run");
  const q = parseInput(RunQuery, input.query, "run page");
  const no = q.page ?? 1;
  const run = await runEntries(ctx.runtime, id, no);
  const quarantine = quarantineOf(ctx.runtime, id, run.principal);
  return html`<h1>Run ${agentText(id)}</h1>
<dl class="facts"><dt>principal</dt><dd>${run.principal === undefined ? "not known" : agentText(run.principal)}</dd>
<dt>quarantined</dt><dd>${quarantineCell(quarantine)}</dd></dl>
${timeline(ctx, run.entries)}
${pager(ctx, ["runs", id], { no, more: run.more && no < MAX_PAGE, query: {} })}
<section class="provenance" aria-labelledby="prov-h"><h2 id="prov-h">Where each value came from</h2>
${provenanceGraph(ctx, id, run.entries)}</section>
${await trustSection(ctx.runtime, run.principal)}`;
}

export const RUNS_PAGE: ConsolePage = {
  path: "/runs",
  title: "Runs",
  roles: READERS,
  render: (ctx, input) => orError(() => renderList(ctx, input)),
};

export const RUN_PAGE: ConsolePage = {
  path: "/runs/:id",
  title: "Run",
  roles: READERS,
  render: (ctx, input) => orError(() => renderRun(ctx, input)),
};
