// Small value helpers every layer shares, written once: the plain-object test used by
// parsers and config loaders, and the one ISO 8601 time format Warden writes (UTC with
// milliseconds, exactly what Date.prototype.toISOString gives).

/**
 * What JSON calls an object: not null, not an array, and a plain record (its prototype is
 * Object.prototype or null), so class instances, Dates, Maps and Buffers are not taken
 * for one.
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// Many records of one decision share a millisecond: the last conversion is remembered.
// Decisions in flight together straddle millisecond boundaries, so the text up to the
// seconds' dot is remembered too, and a new millisecond of the same second only writes
// its three digits. Only whole milliseconds of years 1970–9999 take that way (the range
// where toISOString has this fixed shape); anything else is toISOString's own answer.
let lastMs = Number.NaN;
let lastText = "";
let lastSecond = Number.NaN;
/** `YYYY-MM-DDTHH:mm:ss.` of lastSecond. */
let secondText = "";
const YEAR_10000_MS = 253_402_300_800_000;

/** `YYYY-MM-DDTHH:mm:ss.sssZ` (UTC) for a Date or milliseconds since the epoch. */
export function isoTime(at: Date | number): string {
  const ms = typeof at === "number" ? at : at.getTime();
  if (ms === lastMs) return lastText;
  const fixedShape = Number.isInteger(ms) && ms >= 0 && ms < YEAR_10000_MS;
  const second = Math.floor(ms / 1000);
  if (fixedShape && second === lastSecond) {
    const f = ms - second * 1000;
    lastText = `${secondText}${f < 10 ? "00" : f < 100 ? "0" : ""}${f}Z`;
  } else {
    lastText = new Date(ms).toISOString();
    if (fixedShape) {
      lastSecond = second;
      secondText = lastText.slice(0, 20);
    }
  }
  lastMs = ms;
  return lastText;
}
