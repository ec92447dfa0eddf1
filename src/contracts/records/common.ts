// Field types shared by every DARE/GATE wire record. Patterns come from the ids
// and canonical-json modules so that a value a builder produces is always a value
// the schema accepts, and the JSON Schema export carries the same patterns.

import { z } from "zod";
import { SHA256_HASH_PATTERN, type Sha256Hash, sha256Of } from "../canonical-json.js";
import { ContractError, ERROR_CODES, WardenError, type WardenErrorCode } from "../errors.js";
import { SPAN_ID_PATTERN, TRACE_ID_PATTERN, UUID_PATTERN } from "../ids.js";
import { isoTime } from "../values.js";

/** DARE is the original name of the specification, GATE its published name. */
export type Namespace = "dare" | "gate";
export const NAMESPACES: readonly Namespace[] = ["dare", "gate"];

/** The only contract major version this code reads and writes. */
export const SCHEMA_VERSION = "v1" as const;
export const SchemaVersionSchema = z.literal(SCHEMA_VERSION);
/** Spread after caller input in builders so the version cannot be overridden. */
export const VERSION_FIXED = { schema_version: SCHEMA_VERSION } as const;

export const Sha256HashSchema = z
  .string()
  .regex(SHA256_HASH_PATTERN, "expected sha256:<64 lowercase hex>") as unknown as z.ZodType<
  Sha256Hash,
  string
>;

export const UuidSchema = z
  .string()
  .regex(UUID_PATTERN, "expected a lowercase RFC 9562 UUID")
  .meta({ format: "uuid" });

/** W3C trace-context trace-id: 32 lowercase hex, not all zeros. */
export const TraceIdSchema = z.string().regex(TRACE_ID_PATTERN, "expected a W3C trace-id (32 lowercase hex)");

/** W3C trace-context parent/span id: 16 lowercase hex, not all zeros. */
export const SpanIdSchema = z.string().regex(SPAN_ID_PATTERN, "expected a W3C span-id (16 lowercase hex)");

/** RFC 3339 date-time with a zone designator. Builders always write UTC ("Z"). */
export const TimestampSchema = z.iso.datetime({ offset: true });

export const NonEmptyString = z.string().min(1);

export const SPIFFE_ID_PATTERN = /^spiffe:\/\//;
export const SpiffeIdSchema = z.string().regex(SPIFFE_ID_PATTERN, "expected a spiffe:// URI");

export const SEMVER_PATTERN = /^\d+\.\d+\.\d+$/;

export const EnvironmentSchema = z.enum(["dev", "test", "prod"]);
export type Environment = z.infer<typeof EnvironmentSchema>;

export const ToolCategorySchema = z.enum([
  "read_only",
  "reversible_write",
  "irreversible_write",
  "financial",
  "infrastructure",
  "multi_agent",
]);
export type ToolCategory = z.infer<typeof ToolCategorySchema>;

export const RiskTierSchema = z.enum(["low", "medium", "high", "critical"]);
export type RiskTier = z.infer<typeof RiskTierSchema>;

/** Any JSON value (no undefined, no non-finite numbers). */
export const JsonValueSchema = z.json().meta({ id: "JsonValue", description: "Any JSON value." });
export type JsonValue = z.infer<typeof JsonValueSchema>;

/** Pointer to a payload kept out of the record (DARE "Sensitive payload handling"). */
export const PayloadRefSchema = z.strictObject({
  uri: NonEmptyString,
  encryption: z.string().optional(),
  classification: z.enum(["public", "internal", "confidential", "regulated"]).optional(),
  expires_at: TimestampSchema.optional(),
});
export type PayloadRef = z.infer<typeof PayloadRefSchema>;

/** base64 or base64url text; the signature algorithm lives in a sibling field. */
export const SignatureTextSchema = z
  .string()
  .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, "expected base64 or base64url");

/** Zod issue params carry the Warden code a refinement stands for. */
export interface WardenIssueParams {
  wardenCode: WardenErrorCode;
}

type RefinementCtx = z.core.$RefinementCtx;

/** Report a refinement failure that maps to a specific error code. */
export function addWardenIssue(
  ctx: RefinementCtx,
  code: WardenErrorCode,
  message: string,
  path: PropertyKey[] = [],
): void {
  const params: WardenIssueParams = { wardenCode: code };
  ctx.addIssue({ code: "custom", message, path, params: { ...params } });
}

/**
 * sha256Of for values that came from outside: a value canonical JSON refuses
 * (lone surrogate, too deep) becomes an issue with the canonicalizer's code.
 */
export function hashOrIssue(value: unknown, ctx: RefinementCtx, path: PropertyKey[]): Sha256Hash | undefined {
  try {
    return sha256Of(value);
  } catch (err) {
    if (err instanceof WardenError) {
      addWardenIssue(ctx, err.code, err.message, path);
      return undefined;
    }
    throw err;
  }
}

/** RFC 3339 UTC "now" with millisecond precision, as builders write it. */
export function nowTimestamp(now: Date = new Date()): string {
  return isoTime(now);
}

export interface RecordIssue {
  /** Where in the record, e.g. ["inputs", "payload_hash"]. */
  path: (string | number)[];
  message: string;
  code: WardenErrorCode;
}

/** Outcome of parsing a record: a value either way, never an exception. */
export type RecordParseResult<T> =
  | { ok: true; record: T }
  | { ok: false; code: WardenErrorCode; message: string; issues: RecordIssue[] };

const CONTRACT_CODES: ReadonlySet<string> = new Set(ERROR_CODES.contract);

function issueCode(issue: z.core.$ZodIssue): WardenErrorCode {
  if (issue.code === "custom") {
    const code = (issue.params as Partial<WardenIssueParams> | undefined)?.wardenCode;
    if (code !== undefined) return code;
  }
  if (issue.path[0] === "schema_version") return "ERR_CONTRACT_SCHEMA_VERSION";
  return "ERR_CONTRACT_RECORD_INVALID";
}

function formatPath(path: (string | number)[]): string {
  return path.length === 0 ? "(record)" : path.join(".");
}

/** Run a record schema and turn zod issues into coded issues. */
export function safeParseRecord<T>(schema: z.ZodType<T>, value: unknown): RecordParseResult<T> {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, record: r.data };
  const issues: RecordIssue[] = r.error.issues.map((i) => ({
    path: i.path.map((k) => (typeof k === "number" ? k : String(k))),
    message: i.message,
    code: issueCode(i),
  }));
  // A version we do not speak explains every other difference, so it wins. Then
  // a field-level (structural) problem: zod still runs refinements after
  // non-aborting issues such as a failed pattern, and a hash or form verdict
  // over a malformed record would point at the wrong thing.
  const structural = r.error.issues.findIndex((i) => i.code !== "custom");
  const first =
    issues.find((i) => i.code === "ERR_CONTRACT_SCHEMA_VERSION") ??
    (structural >= 0 ? issues[structural] : undefined) ??
    issues[0];
  const code = first?.code ?? "ERR_CONTRACT_RECORD_INVALID";
  const message = first === undefined ? "invalid record" : `${formatPath(first.path)}: ${first.message}`;
  return { ok: false, code, message, issues };
}

/** Throw the coded error for a failed parse (for builders, where bad input is misuse). */
export function throwParseFailure(failure: {
  code: WardenErrorCode;
  message: string;
  issues: RecordIssue[];
}): never {
  const details = { issues: failure.issues.map((i) => ({ path: formatPath(i.path), code: i.code })) };
  if (CONTRACT_CODES.has(failure.code)) {
    throw new ContractError(failure.code as (typeof ERROR_CODES.contract)[number], failure.message, {
      details,
    });
  }
  throw new WardenError(failure.code, failure.message, { details });
}

/** Validate a record a builder assembled; invalid builder input is misuse and throws. */
export function checkBuilt<T>(schema: z.ZodType<T>, record: unknown): T {
  const r = safeParseRecord(schema, record);
  if (!r.ok) throwParseFailure(r);
  return r.record;
}
