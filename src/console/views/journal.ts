// The journal pages: `/journal` filters entries (event type, run, time range, seq range)
// newest first in bounded pages, with the verify and export forms (POSTs, journal-actions.ts);
// `/journal/:seq` shows one entry with its canonical JSON, made visible as agent text.
import { z } from "zod";
import { EVENT_TYPE_PATTERN, entryJson, type JournalEntry, MalformedRecord } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsolePage, ConsolePageInput, ConsoleViewContext } from "../page.js";
import {
  csrfField,
  href,
  IsoTime,
  MAX_PAGE,
  MAX_SCANNED_ENTRIES,
  orError,
  PAGE_ROWS,
  PageNo,
  pager,
  parseInput,
  RunId,
  Seq,
  viewError,
} from "./common.js";

const READERS = ["auditor", "approver"] as const;

const Filter = z.strictObject({
  type: z.string().regex(EVENT_TYPE_PATTERN, "not an event type").optional(),
  run: RunId.optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
  fromSeq: Seq.optional(),
  toSeq: Seq.optional(),
  page: PageNo.optional(),
});
type Filter = z.infer<typeof Filter>;
const EntryParams = z.strictObject({ seq: Seq });

/** Filter fields from the query, empty fields dropped (an empty form field means "any"). */
export function filledQuery(q: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== ""));
}

function matches(e: JournalEntry, f: Filter): boolean {
  return (
    (f.type === undefined || e.type === f.type) &&
    (f.run === undefined || e.run_id === f.run) &&
    (f.since === undefined || e.time >= f.since) &&
    (f.until === undefined || e.time < f.until)
  );
}

/** A seq-range filter: the range is scanned (at most MAX_SCANNED_ENTRIES), newest first. */
async function bySeqRange(rt: Runtime, f: Filter, want: number): Promise<JournalEntry[]> {
  const to = f.toSeq ?? (await rt.store.count());
  const from = f.fromSeq ?? Math.max(1, to - MAX_SCANNED_ENTRIES + 1);
  if (from > to) throw viewError("ERR_CONSOLE_VIEW_INPUT", "journal filter: fromSeq is after toSeq");
  if (to - from + 1 > MAX_SCANNED_ENTRIES)
    throw viewError(
      "ERR_CONSOLE_VIEW_INPUT",
      `journal filter: a seq range spans at most ${MAX_SCANNED_ENTRIES} entries`,
    );
  const out: JournalEntry[] = [];
  for await (const e of rt.store.entries(from, to))
    if (!(e instanceof MalformedRecord) && matches(e, f)) out.push(e);
  return out.reverse().slice(0, want);
}

async function filtered(rt: Runtime, f: Filter, want: number): Promise<JournalEntry[]> {
  if (f.fromSeq !== undefined || f.toSeq !== undefined) return bySeqRange(rt, f, want);
  return rt.store.query({
    ...(f.type !== undefined ? { type: f.type } : {}),
    ...(f.run !== undefined ? { run_id: f.run } : {}),
    ...(f.since !== undefined ? { since: f.since } : {}),
    ...(f.until !== undefined ? { until: f.until } : {}),
    descending: true,
    limit: want,
  });
}

function field(name: string, label: string, value: string | number | undefined, type = "text"): Html {
  return html`<label>${label} <input type="${type}" name="${name}" value="${value ?? ""}"></label>`;
}

function filterForm(ctx: ConsoleViewContext, f: Filter): Html {
  return html`<form class="filter" method="get" action="${href(ctx, ["journal"])}" role="search">
${field("type", "event type", f.type)} ${field("run", "run", f.run)}
${field("since", "from time", f.since)} ${field("until", "to time", f.until)}
${field("fromSeq", "from seq", f.fromSeq, "number")} ${field("toSeq", "to seq", f.toSeq, "number")}
<button type="submit">Filter</button></form>`;
}

function actionForms(ctx: ConsoleViewContext): Html {
  return html`<section class="journal-actions" aria-labelledby="verify-h"><h2 id="verify-h">Verify and export</h2>
<form method="post" action="${href(ctx, ["journal", "verify"])}">${csrfField(ctx)}
${field("fromSeq", "from seq", undefined, "number")} ${field("toSeq", "to seq", undefined, "number")}
<button type="submit">Verify the chain</button></form>
<form method="post" action="${href(ctx, ["journal", "export"])}">${csrfField(ctx)}
<label>format <select name="format"><option value="gate">GATE (DARE records)</option><option value="ocsf">OCSF 1.3.0</option></select></label>
${field("run", "run", undefined)} ${field("since", "from time", undefined)} ${field("until", "to time", undefined)}
<button type="submit">Export</button></form></section>`;
}

function entryRow(ctx: ConsoleViewContext, e: JournalEntry): Html {
  return html`<tr><td><a href="${href(ctx, ["journal", String(e.seq)])}">${e.seq}</a></td><td>${e.time}</td>
<td><code>${agentText(e.type)}</code></td><td>${
    e.run_id === null ? "" : html`<a href="${href(ctx, ["runs", e.run_id])}">${agentText(e.run_id)}</a>`
  }</td></tr>`;
}

async function renderJournal(ctx: ConsoleViewContext, input: ConsolePageInput): Promise<Html> {
  const query = filledQuery(input.query);
  const f = parseInput(Filter, query, "journal filter");
  const no = f.page ?? 1;
  const got = await filtered(ctx.runtime, f, no * PAGE_ROWS + 1);
  const shown = got.slice((no - 1) * PAGE_ROWS, no * PAGE_ROWS);
  const { page: _page, ...keep } = query;
  return html`<h1>Journal</h1>${filterForm(ctx, f)}
<table class="journal"><thead><tr><th scope="col">seq</th><th scope="col">time</th><th scope="col">type</th>
<th scope="col">run</th></tr></thead><tbody>${shown.map((e) => entryRow(ctx, e))}</tbody></table>
${shown.length === 0 ? html`<p class="empty">No entry matches.</p>` : ""}
${pager(ctx, ["journal"], { no, more: got.length > no * PAGE_ROWS && no < MAX_PAGE, query: keep })}
${actionForms(ctx)}`;
}

async function renderEntry(ctx: ConsoleViewContext, input: ConsolePageInput): Promise<Html> {
  const { seq } = parseInput(EntryParams, input.params, "journal entry");
  const e = await ctx.runtime.store.get(seq);
  if (e === null) throw viewError("ERR_CONSOLE_VIEW_NOT_FOUND", `the journal holds no entry ${seq}`);
  return html`<h1>Journal entry ${e.seq}</h1>
<dl class="facts"><dt>type</dt><dd><code>${agentText(e.type)}</code></dd><dt>time</dt><dd>${e.time}</dd>
<dt>run</dt><dd>${e.run_id === null ? "none" : html`<a href="${href(ctx, ["runs", e.run_id])}">${agentText(e.run_id)}</a>`}</dd>
<dt>hash</dt><dd><code>${e.hash}</code></dd><dt>previous</dt><dd><code>${e.prev_hash}</code></dd>
<dt>key</dt><dd><code>${e.key_id}</code></dd></dl>
<h2>Canonical JSON</h2><pre class="canonical">${agentText(entryJson(e))}</pre>
<nav class="pager" aria-label="entries">${
    e.seq > 1
      ? html`<a href="${href(ctx, ["journal", String(e.seq - 1)])}" rel="prev">entry ${e.seq - 1}</a>`
      : ""
  } <a href="${href(ctx, ["journal", String(e.seq + 1)])}" rel="next">entry ${e.seq + 1}</a></nav>`;
}

export const JOURNAL_PAGE: ConsolePage = {
  path: "/journal",
  title: "Journal",
  roles: READERS,
  render: (ctx, input) => orError(() => renderJournal(ctx, input)),
};

export const JOURNAL_ENTRY_PAGE: ConsolePage = {
  path: "/journal/:seq",
  title: "Journal entry",
  roles: READERS,
  render: (ctx, input) => orError(() => renderEntry(ctx, input)),
};
