// The one input time format of the trust layer: RFC 3339 with a zone (simulate lines,
// --until, lift records). Output times are isoTime's (contracts).

/** RFC 3339 date-time with a zone (Z or ±hh:mm), seconds required, fraction optional. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds of an RFC 3339 time, or undefined when it is not one. */
export function parseIsoTime(text: string): number | undefined {
  if (!ISO_TIME.test(text)) return undefined;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over into March: a day the month does not have is refused.
  const [y, m, d] = text.slice(0, 10).split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d ? ms : undefined;
}
