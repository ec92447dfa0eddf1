// Structured (`json`) arguments: only for [mcp]-backed contracts, where the call is a JSON
// object and never a shell line. A value is copied into fresh plain objects while it is
// bounded (bytes, depth, keys, array length), stripped of nothing but refused on any
// prototype-reaching key, its strings screened by the text rules without the shell
// metacharacter rule; the copy is then validated against the argument's pinned JSON
// Schema, compiled once by ajv in strict mode with no remote or external references.
import { Ajv, type ValidateFunction } from "ajv";
import type { WardenErrorCode } from "../contracts/index.js";
import { screenText } from "./text-safety.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The bounds every structured argument is held to. */
export const JSON_ARG_LIMITS = {
  /** Serialised UTF-8 bytes of the whole value. */
  maxBytes: 256 * 1024,
  /** Nesting of objects and arrays (the value itself is depth 1). */
  maxDepth: 16,
  /** Keys of any one object. */
  maxKeys: 256,
  /** Elements of any one array. */
  maxItems: 1024,
} as const;

const UNSAFE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export type JsonCheck =
  | { ok: true; value: JsonValue }
  | { ok: false; code: WardenErrorCode; rule: string; message: string };

const fail = (code: WardenErrorCode, rule: string, message: string): JsonCheck => ({
  ok: false,
  code,
  rule,
  message,
});

class Refused extends Error {
  constructor(readonly check: Extract<JsonCheck, { ok: false }>) {
    super(check.message);
  }
}

function refuse(code: WardenErrorCode, rule: string, message: string): never {
  throw new Refused({ ok: false, code, rule, message });
}

const TEXT_CODES = {
  "too-long": "ERR_TOOL_ARG_JSON_TOO_LARGE",
  metachar: "ERR_TOOL_ARG_METACHAR",
  invisible: "ERR_TOOL_ARG_INVISIBLE",
  malformed: "ERR_TOOL_ARG_INVISIBLE",
} as const satisfies Record<string, WardenErrorCode>;

function text(s: string, budget: { left: number }): string {
  // Bounded by what is left of the byte budget, so NFKC never runs on an oversized string.
  const r = screenText(s, Math.max(0, budget.left), { metachars: false });
  if (!r.ok) refuse(TEXT_CODES[r.rule], r.rule, r.message);
  budget.left -= r.value.length + 3;
  if (budget.left < 0) {
    refuse("ERR_TOOL_ARG_JSON_TOO_LARGE", "bytes", `over ${JSON_ARG_LIMITS.maxBytes} bytes`);
  }
  return r.value;
}

function copy(v: unknown, depth: number, budget: { left: number }): JsonValue {
  // Every node costs at least one byte of its serialisation: the walk is bounded by the budget.
  budget.left -= 1;
  if (budget.left < 0)
    refuse("ERR_TOOL_ARG_JSON_TOO_LARGE", "bytes", `over ${JSON_ARG_LIMITS.maxBytes} bytes`);
  if (v === null || typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) refuse("ERR_TOOL_ARG_TYPE", "type", "non-finite number");
    return v;
  }
  if (typeof v === "string") return text(v, budget);
  if (typeof v !== "object") refuse("ERR_TOOL_ARG_TYPE", "type", `a ${typeof v} is not JSON`);
  if (depth > JSON_ARG_LIMITS.maxDepth) {
    refuse("ERR_TOOL_ARG_JSON_TOO_DEEP", "depth", `nested deeper than ${JSON_ARG_LIMITS.maxDepth}`);
  }
  if (Array.isArray(v)) {
    if (v.length > JSON_ARG_LIMITS.maxItems) {
      refuse("ERR_TOOL_ARG_JSON_TOO_MANY", "array-length", `an array over ${JSON_ARG_LIMITS.maxItems} items`);
    }
    const out: JsonValue[] = [];
    for (let i = 0; i < v.length; i++) out.push(copy(v[i], depth + 1, budget));
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    refuse("ERR_TOOL_ARG_TYPE", "type", "only plain objects are JSON");
  }
  const keys = Object.keys(v);
  if (keys.length > JSON_ARG_LIMITS.maxKeys || Object.getOwnPropertySymbols(v).length > 0) {
    refuse("ERR_TOOL_ARG_JSON_TOO_MANY", "keys", `an object over ${JSON_ARG_LIMITS.maxKeys} keys`);
  }
  const out: Record<string, JsonValue> = {};
  for (const raw of keys) {
    const key = text(raw, budget);
    if (UNSAFE_KEYS.has(key) || Object.hasOwn(out, key)) {
      refuse("ERR_TOOL_ARG_JSON_UNSAFE_KEY", "unsafe-key", `the key '${key.slice(0, 32)}' is not allowed`);
    }
    out[key] = copy((v as Record<string, unknown>)[raw], depth + 1, budget);
  }
  return out;
}

/** Bounds, copies and schema-checks one structured value. */
export function checkJsonValue(raw: unknown, validate: ValidateFunction): JsonCheck {
  let value: JsonValue;
  try {
    value = copy(raw, 1, { left: JSON_ARG_LIMITS.maxBytes });
  } catch (err) {
    if (err instanceof Refused) return err.check;
    return fail("ERR_TOOL_ARG_TYPE", "type", "not a JSON value");
  }
  if (Buffer.byteLength(JSON.stringify(value)) > JSON_ARG_LIMITS.maxBytes) {
    return fail("ERR_TOOL_ARG_JSON_TOO_LARGE", "bytes", `over ${JSON_ARG_LIMITS.maxBytes} bytes`);
  }
  if (!validate(value)) {
    const e = validate.errors?.[0];
    const where = e?.instancePath === "" || e === undefined ? "" : ` at ${e.instancePath.slice(0, 128)}`;
    return fail(
      "ERR_TOOL_ARG_JSON_SCHEMA",
      "schema",
      `does not match the schema${where}: ${e?.message ?? "invalid"}`,
    );
  }
  return { ok: true, value };
}

// Strict: unknown keywords, ambiguous types and format names fail compilation; no loader
// is configured, so a remote reference can never be fetched.
const ajv = new Ajv({ strict: true, allErrors: false, validateSchema: true, validateFormats: true });

/** Keywords that would leave the schema: identifiers, meta-schema switches, dynamic refs. */
const OUTSIDE_KEYWORDS = [
  "$id",
  "$schema",
  "$dynamicRef",
  "$recursiveRef",
  "$dynamicAnchor",
  "$recursiveAnchor",
];

/** Why a schema is unusable, or undefined; `patternGuard` vets every regular expression. */
export function schemaProblem(schema: unknown, patternGuard: (source: string) => void): string | undefined {
  const walk = (v: unknown, depth: number): string | undefined => {
    if (depth > 64) return "the schema nests too deeply";
    if (Array.isArray(v)) {
      for (const item of v) {
        const p = walk(item, depth + 1);
        if (p !== undefined) return p;
      }
      return undefined;
    }
    if (v === null || typeof v !== "object") return undefined;
    for (const [k, item] of Object.entries(v)) {
      if (OUTSIDE_KEYWORDS.includes(k)) return `'${k}' is not allowed in an argument schema`;
      if (k === "$ref" && (typeof item !== "string" || !item.startsWith("#"))) {
        return "only references inside the schema ('#...') are allowed";
      }
      if (k === "pattern" && typeof item === "string") patternGuard(item);
      if (k === "patternProperties" && item !== null && typeof item === "object") {
        for (const source of Object.keys(item)) patternGuard(source);
      }
      const p = walk(item, depth + 1);
      if (p !== undefined) return p;
    }
    return undefined;
  };
  return walk(schema, 0);
}

/** Compiles a vetted schema; throws (with ajv's reason) when strict compilation fails. */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  return ajv.compile(schema);
}
