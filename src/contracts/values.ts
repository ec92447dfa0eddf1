// Small value helpers every layer shares, written once: the plain-object test used by
// parsers and config loaders, and the one ISO 8601 time format Warden writes (UTC with
// milliseconds, exactly what Date.prototype.toISOString gives).

/** A non-null object that is not an array (what JSON calls an object). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` for a Date or milliseconds since the epoch. */
export function isoTime(at: Date | number): string {
  return (typeof at === "number" ? new Date(at) : at).toISOString();
}
