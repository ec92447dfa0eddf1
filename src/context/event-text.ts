// The canonical JSON text of a session chain event, hashed on every append. A
// `call.decided` event (one per decision) has a fixed shape, so its text is written
// directly, members in RFC 8785 order, instead of by the generic walk (which looks up the
// sorted names and the quoted form of every member on each call). Only plainly simple
// values take this way: printable-ASCII strings without `"` or `\`, finite numbers, the
// shape's own members. Anything else is the generic canonicalJson's, so the text — and
// the chain's hashes — are canonicalJson's for every event; a property test holds the two
// to the same text (test/context/event-text.test.ts).
import { canonicalJson } from "../contracts/index.js";

/** Thrown inside the writer for anything it leaves to canonicalJson; never escapes. */
const GENERIC = Symbol("generic");

// Strings that JSON.stringify writes as themselves in quotes (as canonical-json.ts's fast walk).
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function str(v: unknown): string {
  if (typeof v !== "string" || v.length > 512 || !PLAIN.test(v)) throw GENERIC;
  return `"${v}"`;
}

function num(v: unknown): string {
  if (typeof v !== "number" || !Number.isFinite(v)) throw GENERIC;
  return String(v);
}

function list(v: unknown, item: (x: unknown) => string): string {
  if (!Array.isArray(v)) throw GENERIC;
  let out = "[";
  for (let i = 0; i < v.length; i++) out += i > 0 ? `,${item(v[i])}` : item(v[i]);
  return `${out}]`;
}

/** Own enumerable names of a plain object, all among `allowed`; GENERIC otherwise. */
function names(v: unknown, allowed: ReadonlySet<string>): string[] {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) throw GENERIC;
  const keys = Object.keys(v);
  for (const k of keys) if (!allowed.has(k) || (v as Record<string, unknown>)[k] === undefined) throw GENERIC;
  return keys;
}

const LABEL = new Set(["addedAt", "confidence", "origin", "propagatedFrom", "source"]);

function label(v: unknown): string {
  names(v, LABEL);
  const l = v as Record<string, unknown>;
  // RFC 8785 order: addedAt, confidence, origin, propagatedFrom, source.
  let out = "{";
  if (l.addedAt !== undefined) out += `"addedAt":${str(l.addedAt)},`;
  if (l.confidence !== undefined) out += `"confidence":${num(l.confidence)},`;
  out += `"origin":${str(l.origin)},`;
  if (l.propagatedFrom !== undefined) out += `"propagatedFrom":${str(l.propagatedFrom)},`;
  return `${out}"source":${str(l.source)}}`;
}

const HIT = new Set(["kind", "outputs", "path"]);

function hit(v: unknown): string {
  if (names(v, HIT).length !== 3) throw GENERIC;
  const h = v as Record<string, unknown>;
  return `{"kind":${str(h.kind)},"outputs":${list(h.outputs, num)},"path":${str(h.path)}}`;
}

const DECIDED = new Set([
  "action",
  "at",
  "behaviour",
  "call",
  "decision",
  "prev",
  "principalId",
  "provenance",
  "reasonCodes",
  "requestHash",
  "seq",
  "taint",
  "tool",
  "toolClass",
  "type",
]);

function decided(e: Record<string, unknown>): string {
  // Every member but `tool` is required: a missing one is left to the generic walk.
  if (names(e, DECIDED).length !== (e.tool === undefined ? 14 : 15)) throw GENERIC;
  return (
    `{"action":${str(e.action)},"at":${str(e.at)},"behaviour":${list(e.behaviour, str)},` +
    `"call":${num(e.call)},"decision":${str(e.decision)},"prev":${str(e.prev)},` +
    `"principalId":${str(e.principalId)},"provenance":${list(e.provenance, hit)},` +
    `"reasonCodes":${list(e.reasonCodes, str)},"requestHash":${str(e.requestHash)},` +
    `"seq":${num(e.seq)},"taint":${list(e.taint, label)},` +
    `${e.tool === undefined ? "" : `"tool":${str(e.tool)},`}"toolClass":${str(e.toolClass)},"type":"call.decided"}`
  );
}

/** `canonicalJson(event)`, written directly for a plainly simple `call.decided` event. */
export function eventText(event: object): string {
  const e = event as Record<string, unknown>;
  if (e.type === "call.decided") {
    try {
      return decided(e);
    } catch (err) {
      if (err !== GENERIC) throw err;
    }
  }
  return canonicalJson(event);
}
