// One validator per built-in argument type. Every string-based type first passes
// screenText (size, NFKC, metacharacters, invisible characters); each rejection carries
// a Warden code and a short rule name so the caller can say which argument broke which rule.
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { ValidateFunction } from "ajv";
import type { WardenErrorCode } from "../contracts/index.js";
import type { BuiltinType } from "./contract-schema.js";
import { checkJsonValue, type JsonValue } from "./json-arg.js";
import {
  type CompiledScope,
  hostnameProblem,
  inScope,
  parseCidr,
  parseIp,
  parseIpv4,
  type ScopeTarget,
} from "./net.js";
import { screenText } from "./text-safety.js";

/** A `json` argument's value is an object or array (or any JSON value its schema allows). */
export type ArgValue = string | number | boolean | JsonValue;

/** An argument with its custom type folded in: everything needed to validate a value. */
export interface ResolvedArg {
  name: string;
  /** The type as the manifest wrote it (built-in or custom). */
  type: string;
  base: BuiltinType;
  required: boolean;
  default?: ArgValue;
  description?: string;
  position?: number;
  allowed?: readonly string[];
  pattern?: RegExp;
  min?: number;
  max?: number;
  clamp: boolean;
  schemes: readonly string[];
  /** Whether a value may start with '-' (contract opt-in; such args must follow a literal `--`). */
  allowLeadingDash: boolean;
  /** Whether the value is checked against deployment scope. */
  scopeCheck: boolean;
  maxLength: number;
  /**
   * Whether string values are held to the shell metacharacter rule: true for every
   * contract except [mcp]-backed ones (their calls are structured JSON, not shell lines).
   */
  shellText: boolean;
  /** The compiled pinned schema of a `json` argument (json arguments exist only under [mcp]). */
  jsonSchema?: ValidateFunction;
}

export type ValueCheck =
  | { ok: true; value: ArgValue }
  | { ok: false; code: WardenErrorCode; rule: string; message: string };

export interface ValueContext {
  /** Scopes a scope-checked value must lie in (all of them); "any" disables scope checks. */
  scopes: readonly CompiledScope[] | "any";
  /** Directory credential files are resolved in and must stay inside. */
  baseDir: string;
}

const fail = (code: WardenErrorCode, rule: string, message: string): ValueCheck => ({
  ok: false,
  code,
  rule,
  message,
});

const TEXT_CODES = {
  "too-long": "ERR_TOOL_ARG_TOO_LONG",
  metachar: "ERR_TOOL_ARG_METACHAR",
  invisible: "ERR_TOOL_ARG_INVISIBLE",
  malformed: "ERR_TOOL_ARG_INVISIBLE",
} as const satisfies Record<string, WardenErrorCode>;

const STRING_TYPES: ReadonlySet<BuiltinType> = new Set([
  "string",
  "enum",
  "scope_target",
  "url",
  "path",
  "ip_address",
  "cidr",
  "duration",
  "regex_match",
  "credential_file",
]);

/** Validates one supplied value; returns the normalised value to use. */
export function validateValue(arg: ResolvedArg, raw: unknown, ctx: ValueContext): ValueCheck {
  if (STRING_TYPES.has(arg.base)) {
    if (typeof raw !== "string")
      return fail("ERR_TOOL_ARG_TYPE", "type", `expected a string for ${arg.type}`);
    const screened = screenText(raw, arg.maxLength, { metachars: arg.shellText });
    if (!screened.ok) return fail(TEXT_CODES[screened.rule], screened.rule, screened.message);
    return validateString(arg, screened.value, ctx);
  }
  switch (arg.base) {
    case "json":
      return arg.jsonSchema === undefined
        ? fail("ERR_TOOL_ARG_JSON_CONTRACT", "schema", "json arguments need a compiled schema")
        : checkJsonValue(raw, arg.jsonSchema);
    case "integer":
    case "port":
      return validateInteger(arg, raw);
    case "number":
      return validateNumber(arg, raw);
    case "boolean":
      if (typeof raw === "boolean") return { ok: true, value: raw };
      if (raw === "true" || raw === "false") return { ok: true, value: raw === "true" };
      return fail("ERR_TOOL_ARG_TYPE", "type", "expected true or false");
    default:
      return fail("ERR_TOOL_ARG_TYPE", "type", `unsupported type ${arg.base}`);
  }
}

// A value that starts (after any whitespace) with '-' would be read as an option by the
// program it reaches (`--output=/tmp/x`, `-o FILE`, `--`, `-`). NFKC has already folded
// U+FE63 and U+FF0D to '-'; the other dashes (U+2010..U+2015 and the rest of Pd) and the
// minus sign U+2212 (where U+207B/U+208B fold to) are not options to getopt, but are
// refused too: some parsers (PowerShell) take them as option prefixes, and to an
// approver '–rf' reads as an option.
const OPTION_LIKE_RE = /^[\s\p{Z}]*[\p{Pd}\u2212]/u;

function validateString(arg: ResolvedArg, v: string, ctx: ValueContext): ValueCheck {
  if (v === "" && (arg.base !== "string" || arg.required)) {
    return fail("ERR_TOOL_ARG_FORMAT", "empty", "must not be empty");
  }
  const typed = checkBase(arg, v, ctx);
  if (!typed.ok) return typed;
  // Enum values are the contract author's literal choices, so they are exempt.
  if (arg.base !== "enum" && !arg.allowLeadingDash && OPTION_LIKE_RE.test(String(typed.value))) {
    return fail(
      "ERR_TOOL_ARG_FORMAT",
      "option-like",
      "must not start with '-' or a dash (it would be read as an option)",
    );
  }
  if (arg.pattern !== undefined && !arg.pattern.test(v)) {
    return fail("ERR_TOOL_ARG_PATTERN", "pattern", `does not match ${arg.pattern.source}`);
  }
  return typed;
}

function checkBase(arg: ResolvedArg, v: string, ctx: ValueContext): ValueCheck {
  switch (arg.base) {
    case "string":
    case "regex_match":
      return { ok: true, value: v };
    case "enum":
      return arg.allowed?.includes(v)
        ? { ok: true, value: v }
        : fail(
            "ERR_TOOL_ARG_ENUM",
            "allowed",
            `not one of the allowed values (${(arg.allowed ?? []).join(", ")})`,
          );
    case "duration":
      return /^\d{1,9}$/.test(v) || (/^(\d{1,6}h)?(\d{1,6}m)?(\d{1,6}s)?(\d{1,9}ms)?$/.test(v) && v !== "")
        ? { ok: true, value: v }
        : fail("ERR_TOOL_ARG_FORMAT", "duration", "expected seconds or a duration like 1h30m, 45s, 500ms");
    case "path":
      return checkPath(v, "path");
    case "credential_file":
      return checkCredentialFile(v, ctx.baseDir);
    case "ip_address": {
      const ip = parseIp(v);
      if (ip === undefined) return fail("ERR_TOOL_ARG_FORMAT", "ip_address", "not an IPv4 or IPv6 address");
      return checkScope(arg, { kind: "ip", ip }, v, ctx);
    }
    case "cidr": {
      const cidr = parseCidr(v);
      if (cidr === undefined)
        return fail("ERR_TOOL_ARG_FORMAT", "cidr", "not CIDR notation (address/prefix)");
      return checkScope(arg, { kind: "cidr", cidr }, v, ctx);
    }
    case "scope_target":
      return checkScopeTarget(arg, v, ctx);
    case "url":
      return checkUrl(arg, v, ctx);
    default:
      return fail("ERR_TOOL_ARG_TYPE", "type", `unsupported type ${arg.base}`);
  }
}

function checkScope(arg: ResolvedArg, target: ScopeTarget, value: string, ctx: ValueContext): ValueCheck {
  if (!arg.scopeCheck || ctx.scopes === "any") return { ok: true, value };
  if (ctx.scopes.length === 0) {
    return fail("ERR_TOOL_ARG_OUT_OF_SCOPE", "no-scope", "no deployment scope is configured (fail closed)");
  }
  for (const scope of ctx.scopes) {
    if (!inScope(target, scope))
      return fail("ERR_TOOL_ARG_OUT_OF_SCOPE", "scope", "outside the deployment scope");
  }
  return { ok: true, value };
}

function checkScopeTarget(arg: ResolvedArg, v: string, ctx: ValueContext): ValueCheck {
  if (v.includes("*") || v.includes("?"))
    return fail("ERR_TOOL_ARG_FORMAT", "wildcard", "wildcards are not allowed");
  if (v.includes("..")) return fail("ERR_TOOL_ARG_TRAVERSAL", "traversal", "contains '..'");
  if (v.includes("/")) {
    const cidr = parseCidr(v);
    if (cidr === undefined)
      return fail("ERR_TOOL_ARG_FORMAT", "cidr", "'/' is only allowed in CIDR notation");
    return checkScope(arg, { kind: "cidr", cidr }, v, ctx);
  }
  const ip = parseIp(v);
  if (ip !== undefined) return checkScope(arg, { kind: "ip", ip }, v, ctx);
  const problem = hostnameProblem(v);
  if (problem !== undefined)
    return fail("ERR_TOOL_ARG_FORMAT", `hostname-${problem}`, hostnameMessage(problem));
  return checkScope(arg, { kind: "host", host: v.toLowerCase() }, v, ctx);
}

function hostnameMessage(problem: string): string {
  switch (problem) {
    case "non-ascii":
      return "not an ASCII hostname (IDN look-alikes are rejected)";
    case "punycode":
      return "punycode (xn--) labels are rejected";
    case "numeric":
      return "neither an IP address nor a hostname";
    default:
      return "not an IP address, CIDR or hostname";
  }
}

const DEFAULT_SCHEMES = ["http", "https"];

function checkUrl(arg: ResolvedArg, v: string, ctx: ValueContext): ValueCheck {
  if (/[^\x21-\x7e]/.test(v)) {
    return fail("ERR_TOOL_ARG_FORMAT", "url-ascii", "URLs must be ASCII without spaces (percent-encode)");
  }
  if (v.includes("\\"))
    return fail("ERR_TOOL_ARG_FORMAT", "url-backslash", "backslashes are not allowed in URLs");
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return fail("ERR_TOOL_ARG_FORMAT", "url", "not an absolute URL");
  }
  const scheme = url.protocol.slice(0, -1);
  const schemes = arg.schemes.length > 0 ? arg.schemes : DEFAULT_SCHEMES;
  if (!schemes.includes(scheme)) {
    return fail("ERR_TOOL_ARG_SCHEME", "scheme", `scheme ${scheme} is not one of ${schemes.join(", ")}`);
  }
  if (url.username !== "" || url.password !== "") {
    return fail("ERR_TOOL_ARG_FORMAT", "url-userinfo", "credentials in the URL are not allowed");
  }
  const host = url.hostname;
  if (host === "") return fail("ERR_TOOL_ARG_FORMAT", "url-host", "the URL has no host");
  const v4 = parseIpv4(host);
  let target: ScopeTarget;
  if (v4 !== undefined) {
    target = { kind: "ip", ip: { version: 4, value: v4 } };
  } else {
    const problem = hostnameProblem(host);
    if (problem !== undefined)
      return fail("ERR_TOOL_ARG_FORMAT", `url-host-${problem}`, hostnameMessage(problem));
    target = { kind: "host", host };
  }
  // The WHATWG-serialised form is what an executor will fetch: the checked host is in it.
  return checkScope(arg, target, url.href, ctx);
}

function checkPath(v: string, rule: string): ValueCheck {
  if (v.startsWith("/") || v.startsWith("\\")) {
    return fail("ERR_TOOL_ARG_ABSOLUTE_PATH", "absolute", `${rule} must be relative`);
  }
  if (/^[A-Za-z]:/.test(v))
    return fail("ERR_TOOL_ARG_ABSOLUTE_PATH", "drive", `${rule} must not have a drive prefix`);
  if (/%[0-9A-Fa-f]{2}/.test(v)) {
    return fail(
      "ERR_TOOL_ARG_TRAVERSAL",
      "percent-encoding",
      "percent-encoded bytes are not allowed in paths",
    );
  }
  if (v.split(/[/\\]/).some((seg) => seg === "..")) {
    return fail("ERR_TOOL_ARG_TRAVERSAL", "traversal", "'..' segments are not allowed");
  }
  if (v.startsWith("-")) return fail("ERR_TOOL_ARG_FORMAT", "option-like", "must not start with '-'");
  return { ok: true, value: v };
}

function checkCredentialFile(v: string, baseDir: string): ValueCheck {
  const syntax = checkPath(v, "credential_file");
  if (!syntax.ok) return syntax;
  let base: string;
  let real: string;
  try {
    base = realpathSync(baseDir);
    real = realpathSync(resolve(base, v));
  } catch {
    return fail("ERR_TOOL_ARG_FILE", "not-found", "credential file not found");
  }
  const rel = relative(base, real);
  if (rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)) {
    return fail(
      "ERR_TOOL_ARG_TRAVERSAL",
      "symlink-escape",
      "credential file resolves outside the base directory",
    );
  }
  if (!statSync(real).isFile())
    return fail("ERR_TOOL_ARG_FILE", "not-a-file", "credential file is not a regular file");
  return { ok: true, value: v };
}

function validateInteger(arg: ResolvedArg, raw: unknown): ValueCheck {
  let n: number;
  if (typeof raw === "number") {
    n = raw;
  } else if (typeof raw === "string") {
    const s = raw.length <= 32 ? raw.normalize("NFKC") : raw;
    if (!/^[+-]?\d{1,16}$/.test(s)) return fail("ERR_TOOL_ARG_TYPE", "type", "expected an integer");
    n = Number(s);
  } else {
    return fail("ERR_TOOL_ARG_TYPE", "type", "expected an integer");
  }
  if (!Number.isSafeInteger(n)) return fail("ERR_TOOL_ARG_TYPE", "type", "expected a safe integer");
  if (arg.base === "port" && (n < 1 || n > 65535))
    return fail("ERR_TOOL_ARG_RANGE", "port", "ports are 1-65535");
  return bound(arg, n === 0 ? 0 : n);
}

function validateNumber(arg: ResolvedArg, raw: unknown): ValueCheck {
  let n: number;
  if (typeof raw === "number") {
    n = raw;
  } else if (typeof raw === "string") {
    const s = raw.length <= 64 ? raw.normalize("NFKC") : raw;
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/.test(s)) {
      return fail("ERR_TOOL_ARG_TYPE", "type", "expected a number");
    }
    n = Number(s);
  } else {
    return fail("ERR_TOOL_ARG_TYPE", "type", "expected a number");
  }
  if (!Number.isFinite(n)) return fail("ERR_TOOL_ARG_TYPE", "type", "expected a finite number");
  return bound(arg, n === 0 ? 0 : n);
}

function bound(arg: ResolvedArg, n: number): ValueCheck {
  if (arg.min !== undefined && n < arg.min) {
    return arg.clamp
      ? { ok: true, value: arg.min }
      : fail("ERR_TOOL_ARG_RANGE", "min", `below the minimum ${arg.min}`);
  }
  if (arg.max !== undefined && n > arg.max) {
    return arg.clamp
      ? { ok: true, value: arg.max }
      : fail("ERR_TOOL_ARG_RANGE", "max", `above the maximum ${arg.max}`);
  }
  return { ok: true, value: n };
}

/** The string form a value takes in an argv element, header, or `when` comparison. */
export function valueToString(v: ArgValue): string {
  if (typeof v === "string") return v;
  // Only reachable for json arguments, which compile only under [mcp] (no argv or template).
  return v !== null && typeof v === "object" ? JSON.stringify(v) : String(v);
}
