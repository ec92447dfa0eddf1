// What every audit view shares: the bounds, input validation (zod strict objects, a
// failure is a coded message, never a stack trace), links under the console's base path,
// coded error boxes and the journal's keys. Every agent-controlled string goes through
// `agentText`; everything else through `html`, which escapes it.
import { z } from "zod";
import { agentErrorText, WardenError } from "../../contracts/index.js";
import { Keyring } from "../../crypto/index.js";
import { RUN_ID_PATTERN, SegmentJournalStore, SqliteJournalStore } from "../../journal/index.js";
import type { Runtime } from "../../runtime/index.js";
import { agentText, type Html, html } from "../html.js";
import type { ConsoleViewContext } from "../page.js";

/** Rows on one page of any table (the brief's bound is 200). */
export const PAGE_ROWS = 50;
export const MAX_PAGE_ROWS = 200;
/** Journal entries scanned to list runs (the newest ones). */
export const MAX_SCANNED_ENTRIES = 20_000;
/** Entries shown on one run's timeline page. */
export const MAX_TIMELINE_ROWS = 200;
/** Nodes of one provenance graph; past it the graph is cut (and says so). */
export const MAX_GRAPH_NODES = 500;
/** Journal size the console exports or replays in one request (larger: `warden export`). */
export const MAX_EXPORT_ENTRIES = 100_000;

export type ViewError = WardenError;

/** A coded error for a view's bad input, unknown object or missing facility. */
export function viewError(
  code: "ERR_CONSOLE_VIEW_INPUT" | "ERR_CONSOLE_VIEW_NOT_FOUND" | "ERR_CONSOLE_VIEW_UNAVAILABLE",
  message: string,
): WardenError {
  return new WardenError(code, message);
}

/** Parses a page's query or an action's form with a strict schema; throws ERR_CONSOLE_VIEW_INPUT. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue === undefined ? "" : `${issue.path.map(String).join(".") || "(form)"}: `;
  throw viewError("ERR_CONSOLE_VIEW_INPUT", `${what}: ${where}${issue?.message ?? "invalid"}`);
}

/** A run id as the journal stores them (printable ASCII, no spaces, ≤ 256). */
export const RunId = z.string().regex(RUN_ID_PATTERN, "not a run id");
/** Pages reachable by paging (PAGE_ROWS × MAX_PAGE rows, or timeline rows, at most). */
export const MAX_PAGE = 100;
/** A decimal page number (1-based), at most MAX_PAGE. */
export const PageNo = z
  .string()
  .regex(/^[1-9]\d{0,2}$/, "not a page number")
  .transform(Number)
  .refine((n) => n <= MAX_PAGE, `at most page ${MAX_PAGE}`);
/** A journal sequence number. */
export const Seq = z
  .string()
  .regex(/^[1-9]\d{0,14}$/, "not a sequence number")
  .transform(Number);
/** An ISO 8601 time, normalized to the journal's form. */
export const IsoTime = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(Date.parse(s)), "not an ISO 8601 time")
  .transform((s) => new Date(Date.parse(s)).toISOString());

/** A link under the console's base: path segments are URI-encoded, the query too. */
export function href(
  ctx: ConsoleViewContext,
  segments: readonly string[],
  query: Readonly<Record<string, string | number | undefined>> = {},
): string {
  // A run named `.` or `..` would be a dot-segment the browser resolves away: encode its dots.
  const segment = (s: string) => (s === "." || s === ".." ? s.replaceAll(".", "%2E") : encodeURIComponent(s));
  const path = segments.map((s) => `/${segment(s)}`).join("");
  const q = Object.entries(query)
    .filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join("&");
  return `${ctx.base}${path}${q === "" ? "" : `?${q}`}`;
}

/** A coded error as the page shows it: the code and the first line of the message, marked. */
export function errorBox(err: WardenError): Html {
  return html`<div class="view-error" role="alert"><strong>${err.code}</strong>: ${agentText(
    agentErrorText(err.message),
  )}</div>`;
}

/** Runs `fn`; a coded error becomes its error box (anything else propagates to the plugin). */
export async function orError(fn: () => Promise<Html>): Promise<Html> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WardenError) return errorBox(err);
    throw err;
  }
}

/** The hidden CSRF field every state-changing form carries. */
export function csrfField(ctx: ConsoleViewContext): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.csrfToken}">`;
}

/** The keys the runtime's journal verifies under (the server's verify route uses the same). */
export function journalKeyring(rt: Runtime): Keyring {
  return new Keyring([rt.signer.publicKey]);
}

/** The file journal's path (export and what-if read the evidence store beside it). */
export function journalPath(rt: Runtime): string {
  if (rt.store instanceof SegmentJournalStore || rt.store instanceof SqliteJournalStore) return rt.store.path;
  throw viewError(
    "ERR_CONSOLE_VIEW_UNAVAILABLE",
    "export and what-if in the console need a SQLite journal (use warden export / whatif against the store)",
  );
}

/** Previous / next links of a paged table. */
export function pager(
  ctx: ConsoleViewContext,
  segments: readonly string[],
  page: { no: number; more: boolean; query: Readonly<Record<string, string | undefined>> },
): Html {
  const at = (no: number) => href(ctx, segments, { ...page.query, page: no });
  return html`<nav class="pager" aria-label="pages">${
    page.no > 1 ? html`<a href="${at(page.no - 1)}" rel="prev">previous</a>` : ""
  } <span>page ${page.no}</span> ${page.more ? html`<a href="${at(page.no + 1)}" rel="next">next</a>` : ""}</nav>`;
}

/** A decision shown with its class (allow, deny, modify, step_up, defer). */
export function decisionTag(decision: string): Html {
  const known = ["allow", "deny", "modify", "step_up", "defer"].includes(decision);
  return known
    ? html`<span class="${`decision decision-${decision}`}">${decision}</span>`
    : html`<span class="decision">${agentText(decision)}</span>`;
}
