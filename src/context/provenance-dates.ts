// Dates as provenance (flow control only, src/gate/flow.ts): a call's date or time argument
// ("2024-05-13", "2024-05-01 09:00") is compared with the days an untrusted output *writes
// out in prose* ("from the 13th to the 17th of May 2024", "May 1st, 2024") and the days the
// user's request names. A day found in output prose and not in the request was chosen by
// that output: when a reservation or an event happens is as consequential as where it goes.
// Days are compared as month and day (a year is often left out in prose). A leaf that is a
// date and nothing else (a record's `date` field) is a record, not prose, and names nothing.
// Parsing is chrono-node's (a maintained natural-language date parser), on bounded text.
import { parse } from "chrono-node";

/** A day as `MM-DD`. */
export type DayKey = string;

/** The longest text parsed for days (prose beyond it is not read for dates). */
const MAX_PARSE = 20_000;
/** A cheap pre-filter: a month name, an ordinal, or a numeric date. */
const MAYBE_DATE =
  /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b\d{1,2}(st|nd|rd|th)\b|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}/i;
/** A date or date-time value and nothing else (ISO 8601 and the common numeric forms). */
const DATE_VALUE =
  /^\s*(\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4})([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?)?\s*$/i;
/** A fixed reference: only month and day are compared, so the year chrono assumes is irrelevant. */
const REFERENCE = new Date(Date.UTC(2000, 0, 1));

const key = (month: number, day: number): DayKey =>
  `${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;

/** Whether a value is a date or date-time and nothing else. */
export function isDateValue(v: unknown): v is string {
  return typeof v === "string" && DATE_VALUE.test(v);
}

/** The days a value that is a date names (its own day; empty when it is not a date). */
export function dayOfValue(v: string): DayKey[] {
  if (!DATE_VALUE.test(v)) return [];
  return daysIn(v);
}

/** The days a text writes out (start and end of ranges included). */
export function daysIn(text: string): DayKey[] {
  const t = text.length > MAX_PARSE ? text.slice(0, MAX_PARSE) : text;
  if (!MAYBE_DATE.test(t)) return [];
  const out = new Set<DayKey>();
  for (const r of parse(t, REFERENCE)) {
    for (const c of [r.start, r.end]) {
      if (c === null || c === undefined) continue;
      if (!c.isCertain("day") || !c.isCertain("month")) continue;
      const m = c.get("month");
      const d = c.get("day");
      if (m !== null && d !== null) out.add(key(m, d));
    }
  }
  return [...out];
}

/** The days an output's prose writes out: every string leaf but those that are a date alone. */
export function proseDays(leaves: readonly string[]): Set<DayKey> {
  const out = new Set<DayKey>();
  for (const leaf of leaves) {
    if (isDateValue(leaf)) continue;
    for (const d of daysIn(leaf)) out.add(d);
  }
  return out;
}
