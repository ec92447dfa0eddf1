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
let lastMs = Number.NaN;
let lastText = "";

/** `YYYY-MM-DDTHH:mm:ss.sssZ` (UTC) for a Date or milliseconds since the epoch. */
export function isoTime(at: Date | number): string {
  const ms = typeof at === "number" ? at : at.getTime();
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
