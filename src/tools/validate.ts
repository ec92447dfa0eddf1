// Validating what the model proposes: a plain object of typed arguments, nothing more.
// Unknown arguments, missing required ones and any value a type refuses are rejected with
// a code naming the argument and the rule; accepted values come back normalised. Only
// objects produced here are accepted by buildInvocation.
import { ToolError, type WardenErrorCode } from "../contracts/index.js";
import { type ArgValue, validateValue } from "./arg-types.js";
import type { CompiledTool } from "./compile.js";
import { type CompiledScope, compileScope, type ScopeInput } from "./net.js";

export interface ValidateOptions {
  /** Deployment scope; scope-checked values must lie in it and in the contract's own scope. */
  scope?: ScopeInput;
  /**
   * With neither a contract scope nor a deployment scope, scope-checked arguments are
   * refused (fail closed) unless this is set.
   */
  unrestrictedScope?: boolean;
  /** Directory credential_file arguments resolve in (default: the working directory). */
  baseDir?: string;
}

/** Validated, normalised arguments in declaration order. */
export type ValidatedArgs = Readonly<Record<string, ArgValue>>;

export type ArgRejection = {
  ok: false;
  code: WardenErrorCode;
  message: string;
  /** The argument at fault (absent when the whole argument object is malformed). */
  arg?: string;
  rule: string;
};

export type ArgsResult = { ok: true; args: ValidatedArgs } | ArgRejection;

const validated = new WeakSet<object>();

/** True only for argument objects returned by validateArgs. */
export function isValidatedArgs(value: unknown): value is ValidatedArgs {
  return typeof value === "object" && value !== null && validated.has(value);
}

export function validateArgs(tool: CompiledTool, raw: unknown, options: ValidateOptions = {}): ArgsResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return {
      ok: false,
      code: "ERR_TOOL_ARGS_INVALID",
      rule: "object",
      message: "arguments must be a JSON object",
    };
  }
  const proto = Object.getPrototypeOf(raw);
  if (proto !== Object.prototype && proto !== null) {
    return {
      ok: false,
      code: "ERR_TOOL_ARGS_INVALID",
      rule: "object",
      message: "arguments must be a plain object",
    };
  }
  const input = raw as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!tool.args.has(key)) {
      return {
        ok: false,
        code: "ERR_TOOL_ARG_UNKNOWN",
        arg: key.slice(0, 64),
        rule: "unknown",
        message: `${tool.name} has no argument '${key.slice(0, 64)}'`,
      };
    }
  }
  const scopes = effectiveScopes(tool, options);
  const ctx = { scopes, baseDir: options.baseDir ?? process.cwd() };
  const out: Record<string, ArgValue> = {};
  for (const [name, arg] of tool.args) {
    const supplied = Object.hasOwn(input, name) ? input[name] : undefined;
    let value: unknown = supplied;
    if (supplied === undefined || supplied === null) {
      if (arg.default !== undefined) value = arg.default;
      else if (arg.required) {
        return {
          ok: false,
          code: "ERR_TOOL_ARG_MISSING",
          arg: name,
          rule: "required",
          message: `'${name}' is required`,
        };
      } else continue;
    }
    // Defaults are re-checked too: a default target must still be inside the deployment scope.
    const checked = validateValue(arg, value, ctx);
    if (!checked.ok) {
      return {
        ok: false,
        code: checked.code,
        arg: name,
        rule: checked.rule,
        message: `'${name}': ${checked.message}`,
      };
    }
    out[name] = checked.value;
  }
  Object.freeze(out);
  validated.add(out);
  return { ok: true, args: out };
}

function effectiveScopes(tool: CompiledTool, options: ValidateOptions): CompiledScope[] | "any" {
  const scopes: CompiledScope[] = [];
  if (tool.scope !== undefined) scopes.push(tool.scope);
  if (options.scope !== undefined) {
    const s = compileScope(options.scope);
    // A malformed deployment scope is a configuration fault, not the model's doing.
    if (!s.ok)
      throw new ToolError(
        "ERR_TOOL_MANIFEST_INVALID",
        `malformed deployment scope entry '${s.entry.slice(0, 64)}'`,
      );
    scopes.push(s.scope);
  }
  if (scopes.length === 0 && options.unrestrictedScope === true) return "any";
  return scopes;
}
