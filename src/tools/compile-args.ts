// Argument resolution for the contract compiler: custom types folded into each argument,
// constraint combinations checked, patterns compiled once with a backtracking guard. A
// manifest error is thrown as a CompileFailure, which compileContract turns into a value.

import type { ValidateFunction } from "ajv";
import type { WardenErrorCode } from "../contracts/index.js";
import { type ResolvedArg, validateValue } from "./arg-types.js";
import {
  type ArgSpec,
  type BuiltinType,
  type CustomType,
  DEFAULT_MAX_LENGTH,
  isBuiltinType,
  type ToolContract,
} from "./contract-schema.js";
import { compileJsonSchema, schemaProblem } from "./json-arg.js";

export class CompileFailure extends Error {
  constructor(
    readonly code: WardenErrorCode,
    message: string,
    readonly path: string[],
  ) {
    super(message);
  }
}

export const invalid = (
  path: string[],
  message: string,
  code: WardenErrorCode = "ERR_TOOL_MANIFEST_INVALID",
): never => {
  throw new CompileFailure(code, message, path);
};

// ---------------------------------------------------------------- arguments

const STRINGISH: ReadonlySet<BuiltinType> = new Set([
  "string",
  "scope_target",
  "url",
  "path",
  "ip_address",
  "cidr",
  "duration",
  "regex_match",
  "credential_file",
]);
const ALWAYS_SCOPED: ReadonlySet<BuiltinType> = new Set(["scope_target", "ip_address", "cidr"]);
const CONSTRAINTS = ["allowed", "pattern", "min", "max", "clamp", "schemes", "max_length"] as const;

export function resolveArgs(contract: ToolContract): Map<string, ResolvedArg> {
  const types = contract.types ?? {};
  for (const name of Object.keys(types)) {
    if (isBuiltinType(name)) invalid(["types", name], `custom type '${name}' shadows a built-in type`);
  }
  const entries = Object.entries(contract.args).sort(([an, a], [bn, b]) => {
    const pa = a.position ?? Number.MAX_SAFE_INTEGER;
    const pb = b.position ?? Number.MAX_SAFE_INTEGER;
    return pa !== pb ? pa - pb : an < bn ? -1 : an > bn ? 1 : 0;
  });
  const positions = new Map<number, string>();
  const out = new Map<string, ResolvedArg>();
  for (const [name, spec] of entries) {
    if (spec.position !== undefined) {
      const other = positions.get(spec.position);
      if (other !== undefined)
        invalid(["args", name, "position"], `position ${spec.position} is also used by '${other}'`);
      positions.set(spec.position, name);
    }
    const arg = resolveArg(name, spec, types, contract.mcp === undefined);
    if (arg.base === "json") arg.jsonSchema = resolveJson(name, spec, contract.mcp !== undefined);
    else if (spec.schema !== undefined) invalid(["args", name, "schema"], "'schema' only applies to json");
    out.set(name, arg);
  }
  return out;
}

/**
 * A `json` argument: only under [mcp] (a process or HTTP contract would have to flatten it
 * into text), with a pinned schema that stays inside itself and compiles under ajv's strict mode.
 */
function resolveJson(name: string, spec: ArgSpec, mcp: boolean): ValidateFunction {
  const at = ["args", name];
  const code = "ERR_TOOL_ARG_JSON_CONTRACT";
  if (!mcp) return invalid(at, "json arguments are only allowed in [mcp] contracts", code);
  if (spec.type !== "json") return invalid([...at, "type"], "json cannot be the base of a custom type", code);
  if (spec.schema === undefined) return invalid(at, "json arguments need 'schema'", code);
  if (spec.default !== undefined) return invalid([...at, "default"], "json arguments cannot have a default");
  const problem = schemaProblem(spec.schema, (source) => compilePattern(source, [...at, "schema"]));
  if (problem !== undefined) return invalid([...at, "schema"], problem, code);
  try {
    return compileJsonSchema(spec.schema);
  } catch (err) {
    return invalid(
      [...at, "schema"],
      `schema does not compile: ${(err as Error).message.slice(0, 200)}`,
      code,
    );
  }
}

function resolveArg(
  name: string,
  spec: ArgSpec,
  types: Record<string, CustomType>,
  shellText: boolean,
): ResolvedArg {
  const at = ["args", name];
  let base: BuiltinType;
  let custom: CustomType | undefined;
  if (isBuiltinType(spec.type)) {
    base = spec.type;
  } else {
    custom = Object.hasOwn(types, spec.type) ? types[spec.type] : undefined;
    if (custom === undefined)
      return invalid([...at, "type"], `unknown type '${spec.type}'`, "ERR_TOOL_TYPE_UNKNOWN");
    base = custom.base;
  }
  const merged: Partial<Record<(typeof CONSTRAINTS)[number], unknown>> = {};
  for (const key of CONSTRAINTS) {
    const fromArg = spec[key];
    const fromType = custom?.[key];
    if (fromArg !== undefined && fromType !== undefined) {
      invalid([...at, key], `both the argument and its type '${spec.type}' define '${key}'`);
    }
    merged[key] = fromArg ?? fromType;
  }
  const allowed = merged.allowed as string[] | undefined;
  const patternSource = merged.pattern as string | undefined;
  const min = merged.min as number | undefined;
  const max = merged.max as number | undefined;
  const clamp = (merged.clamp as boolean | undefined) ?? false;
  const schemes = (merged.schemes as string[] | undefined) ?? [];
  const maxLength = merged.max_length as number | undefined;

  const only = (key: string, ok: boolean, what: string) => {
    if (!ok) invalid([...at, key], `'${key}' only applies to ${what} (type ${spec.type} is ${base})`);
  };
  if (allowed !== undefined) only("allowed", base === "enum", "enum");
  if (base === "enum" && allowed === undefined) invalid(at, "enum arguments need 'allowed'");
  if (patternSource !== undefined) only("pattern", STRINGISH.has(base), "string-based types");
  if (base === "regex_match" && patternSource === undefined)
    invalid(at, "regex_match arguments need 'pattern'");
  const numeric = base === "integer" || base === "number";
  if (min !== undefined) only("min", numeric, "integer and number");
  if (max !== undefined) only("max", numeric, "integer and number");
  if (merged.clamp !== undefined) only("clamp", numeric, "integer and number");
  if (clamp && min === undefined && max === undefined) invalid([...at, "clamp"], "clamp needs min or max");
  if (min !== undefined && max !== undefined && min > max)
    invalid([...at, "min"], `min ${min} is above max ${max}`);
  if (
    base === "integer" &&
    ((min !== undefined && !Number.isInteger(min)) || (max !== undefined && !Number.isInteger(max)))
  ) {
    invalid(at, "integer bounds must be integers");
  }
  if (merged.schemes !== undefined) only("schemes", base === "url", "url");
  if (spec.scope_check)
    only("scope_check", base === "url", "url (scope_target, ip_address and cidr are always checked)");
  if (maxLength !== undefined)
    only("max_length", STRINGISH.has(base) || base === "enum", "string-based types");
  if (spec.sanitize !== undefined)
    only("sanitize", STRINGISH.has(base) || base === "enum", "string-based types");
  if (spec.allow_leading_dash !== undefined)
    only("allow_leading_dash", base === "string" || base === "regex_match", "string and regex_match");
  if (spec.required && spec.default !== undefined)
    invalid([...at, "default"], "a required argument cannot have a default");
  if (base === "credential_file" && spec.default !== undefined) {
    invalid([...at, "default"], "credential_file arguments cannot have a default");
  }

  const resolved: ResolvedArg = {
    name,
    type: spec.type,
    base,
    required: spec.required,
    clamp,
    schemes,
    allowLeadingDash: spec.allow_leading_dash ?? false,
    scopeCheck: ALWAYS_SCOPED.has(base) || spec.scope_check,
    maxLength: maxLength ?? DEFAULT_MAX_LENGTH,
    shellText,
  };
  const description = spec.description ?? custom?.description;
  if (description !== undefined) resolved.description = description;
  if (spec.position !== undefined) resolved.position = spec.position;
  if (allowed !== undefined) resolved.allowed = allowed;
  if (patternSource !== undefined) resolved.pattern = compilePattern(patternSource, [...at, "pattern"]);
  if (min !== undefined) resolved.min = min;
  if (max !== undefined) resolved.max = max;
  if (spec.default !== undefined) {
    const checked = validateValue(resolved, spec.default, { scopes: "any", baseDir: "." });
    if (!checked.ok) invalid([...at, "default"], `default is not a valid ${spec.type}: ${checked.message}`);
    else resolved.default = checked.value;
  }
  return resolved;
}

/**
 * Patterns are manifest text (covered by the contract signature), compiled once. A cheap
 * guard refuses the classic catastrophic-backtracking shape — an unbounded quantifier
 * applied to a group that itself ends in an unbounded quantifier, like `(a+)+`.
 */
export function compilePattern(source: string, at: string[]): RegExp {
  if (/[+*}]\)[+*]|[+*}]\)\{\d+,\}/.test(source)) {
    invalid(at, "pattern nests unbounded quantifiers (catastrophic backtracking)");
  }
  try {
    return new RegExp(source);
  } catch (err) {
    return invalid(at, `pattern does not compile: ${(err as Error).message}`);
  }
}
