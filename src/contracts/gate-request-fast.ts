// A pre-compiled check of the GateRequest shape for the decision path, where the zod
// parse cost more than the rest of admission. It is conservative by construction: it
// accepts only plainly well-formed input (plain or null-prototype objects, plain arrays, string keys that are
// all own and enumerable, no `__proto__` key, no undefined member, finite numbers,
// bounded nesting) and builds exactly the value zod's parse builds (a fresh copy, members
// in schema order, defaults filled in). Anything else — every refusal included — is
// answered by zod itself, so a refusal keeps zod's issues, and the result is zod's
// whatever the input. test/contracts/gate-request-fast.test.ts holds the two to the same
// answers with fast-check.

/** Answers the fast check leaves to zod. */
export const UNSURE = Symbol("unsure");

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/;
const TRACE_ID = /^[0-9a-f]{32}$/;
/** Deeper parameters are left to zod (it recurses as far as the stack lets it). */
const MAX_DEPTH = 64;
const EMPTY: object = Object.freeze({});
const isEnumerable = Object.prototype.propertyIsEnumerable;

/** Own string keys, all enumerable, none `__proto__`; undefined when the object has anything else. */
function plainKeys(o: unknown): string[] | undefined {
  if (typeof o !== "object" || o === null) return undefined;
  const proto = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const keys = Reflect.ownKeys(o);
  for (const k of keys) {
    if (typeof k !== "string" || k === "__proto__" || !isEnumerable.call(o, k)) return undefined;
  }
  return keys as string[];
}

const isName = (v: unknown): v is string =>
  typeof v === "string" && v.length >= 1 && v.length <= 128 && NAME.test(v);

const isText = (v: unknown, max: number): v is string => typeof v === "string" && v.length <= max;

/** A copy of a JSON value as z.json() builds it, or UNSURE. */
function json(v: unknown, depth: number): unknown {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      return Number.isFinite(v) ? v : UNSURE;
    case "object":
      break;
    default:
      return UNSURE;
  }
  if (v === null) return null;
  if (depth > MAX_DEPTH) return UNSURE;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) return UNSURE;
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = json(v[i], depth + 1);
      if (x === UNSURE) return UNSURE;
      out[i] = x;
    }
    return out;
  }
  return record(v, depth, Number.POSITIVE_INFINITY);
}

function record(v: unknown, depth: number, maxKey: number): Record<string, unknown> | typeof UNSURE {
  const keys = plainKeys(v);
  if (keys === undefined) return UNSURE;
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k.length > maxKey) return UNSURE;
    const x = json((v as Record<string, unknown>)[k], depth + 1);
    if (x === UNSURE) return UNSURE;
    out[k] = x;
  }
  return out;
}

const LABEL_KEYS: ReadonlySet<string> = new Set([
  "source",
  "origin",
  "confidence",
  "addedAt",
  "propagatedFrom",
]);

function taintLabels(v: unknown, sources: ReadonlySet<string>): unknown[] | typeof UNSURE {
  if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype || v.length > 256) return UNSURE;
  const out = new Array<unknown>(v.length);
  for (let i = 0; i < v.length; i++) {
    const l = v[i] as Record<string, unknown>;
    const keys = plainKeys(l);
    if (keys === undefined) return UNSURE;
    for (const k of keys) if (!LABEL_KEYS.has(k) || l[k] === undefined) return UNSURE;
    const { source, origin, confidence, addedAt, propagatedFrom } = l;
    if (typeof source !== "string" || !sources.has(source) || !isText(origin, 512)) return UNSURE;
    const label: Record<string, unknown> = { source, origin };
    if (confidence !== undefined) {
      if (typeof confidence !== "number" || !(confidence >= 0 && confidence <= 1)) return UNSURE;
      label.confidence = confidence;
    }
    if (addedAt !== undefined) {
      if (!isText(addedAt, 64)) return UNSURE;
      label.addedAt = addedAt;
    }
    if (propagatedFrom !== undefined) {
      if (!isText(propagatedFrom, 128)) return UNSURE;
      label.propagatedFrom = propagatedFrom;
    }
    out[i] = label;
  }
  return out;
}

const REQUEST_KEYS: ReadonlySet<string> = new Set([
  "principalId",
  "runId",
  "toolClass",
  "action",
  "tool",
  "parameters",
  "taintLabels",
  "originalRequest",
  "rationale",
  "traceId",
]);

/**
 * The value `GateRequest.parse(raw)` returns, when `raw` is plainly well-formed; UNSURE
 * for anything else (the caller then asks zod). `sources`: the taint source names.
 */
export function fastGateRequest(
  raw: unknown,
  sources: ReadonlySet<string>,
): Record<string, unknown> | typeof UNSURE {
  // An enumerable member added to Object.prototype would be seen by zod's key walk: zod decides.
  for (const _ in EMPTY) return UNSURE;
  const keys = plainKeys(raw);
  if (keys === undefined) return UNSURE;
  const r = raw as Record<string, unknown>;
  for (const k of keys) if (!REQUEST_KEYS.has(k) || r[k] === undefined) return UNSURE;
  const { principalId, runId, toolClass, action, tool, originalRequest, rationale, traceId } = r;
  if (!isName(principalId) || !isName(toolClass) || !isName(action)) return UNSURE;
  if (typeof runId !== "string" || runId.length < 1 || runId.length > 128) return UNSURE;
  const parameters = r.parameters === undefined ? {} : record(r.parameters, 0, 256);
  if (parameters === UNSURE) return UNSURE;
  const labels = r.taintLabels === undefined ? [] : taintLabels(r.taintLabels, sources);
  if (labels === UNSURE) return UNSURE;
  // Members in the schema's order, as zod builds them.
  const out: Record<string, unknown> = { principalId, runId, toolClass, action };
  if (tool !== undefined) {
    if (!isName(tool)) return UNSURE;
    out.tool = tool;
  }
  out.parameters = parameters;
  out.taintLabels = labels;
  if (originalRequest !== undefined) {
    if (!isText(originalRequest, 1_000_000)) return UNSURE;
    out.originalRequest = originalRequest;
  }
  if (rationale !== undefined) {
    if (!isText(rationale, 1_000_000)) return UNSURE;
    out.rationale = rationale;
  }
  if (traceId !== undefined) {
    if (typeof traceId !== "string" || !TRACE_ID.test(traceId)) return UNSURE;
    out.traceId = traceId;
  }
  return out;
}
