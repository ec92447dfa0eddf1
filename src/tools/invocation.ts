// Building the invocation from validated arguments and the pre-tokenised template. An
// exec invocation is an argv array (each argument value inside exactly one element, no
// shell); an HTTP invocation encodes path/query values and JSON-encodes body values, and
// carries secrets only as named references resolved from the environment at execution
// time; an MCP invocation maps argument names onto the downstream tool's fields.
import { ToolError, type WardenErrorCode } from "../contracts/index.js";
import { type ArgValue, valueToString } from "./arg-types.js";
import type { BodyNode, CompiledTool, ExecPlan, HttpPlan, McpPlan, Ref } from "./compile.js";
import { evaluateCondition } from "./condition.js";
import type { Part, Token } from "./template.js";
import { isValidatedArgs, type ValidatedArgs, type ValidateOptions, validateArgs } from "./validate.js";

/** A secret reference inside an HTTP invocation and how its value must be encoded. */
export interface SecretRef {
  secret: string;
  encoding: "url" | "json" | "header";
}
export type Segment = string | SecretRef;

export interface ExecInvocation {
  kind: "exec";
  tool: string;
  /** argv[0] is the program; run without a shell. */
  argv: string[];
  timeoutMs: number;
}

export interface HttpInvocation {
  kind: "http";
  tool: string;
  method: string;
  url: Segment[];
  headers: [string, Segment[]][];
  body?: Segment[];
  successStatus: number[];
  timeoutMs: number;
  /** Names of the secrets the request needs (never their values). */
  secrets: string[];
}

export interface McpInvocation {
  kind: "mcp";
  tool: string;
  server: string;
  upstreamTool: string;
  arguments: Record<string, ArgValue>;
  timeoutMs: number;
}

export type Invocation = ExecInvocation | HttpInvocation | McpInvocation;

/** Values the executor supplies for `{_output_file}`, `{_scan_id}`, `{_evidence_dir}`. */
export interface RuntimeValues {
  outputFile?: string;
  scanId?: string;
  evidenceDir?: string;
}

export interface BuildOptions {
  runtime?: RuntimeValues;
}

export type BuildFailure = { ok: false; code: WardenErrorCode; message: string; arg?: string; rule: string };
export type BuildResult = { ok: true; invocation: Invocation } | BuildFailure;

class BuildError extends Error {
  constructor(readonly failure: BuildFailure) {
    super(failure.message);
  }
}

const stop = (code: WardenErrorCode, rule: string, message: string, arg?: string): never => {
  throw new BuildError(
    arg === undefined ? { ok: false, code, rule, message } : { ok: false, code, rule, message, arg },
  );
};

/** Builds the invocation from arguments returned by validateArgs (anything else is misuse). */
export function buildInvocation(
  tool: CompiledTool,
  args: ValidatedArgs,
  options: BuildOptions = {},
): BuildResult {
  if (!isValidatedArgs(args)) {
    throw new ToolError(
      "ERR_TOOL_ARGS_INVALID",
      "buildInvocation takes the args object returned by validateArgs",
    );
  }
  try {
    const b = tool.backend;
    const timeoutMs = tool.contract.tool.timeout_seconds * 1000;
    const invocation =
      b.kind === "exec"
        ? buildExec(tool, b, args, options, timeoutMs)
        : b.kind === "http"
          ? buildHttp(tool, b, args, timeoutMs)
          : buildMcp(tool, b, args, timeoutMs);
    return { ok: true, invocation };
  } catch (err) {
    if (err instanceof BuildError) return err.failure;
    throw err;
  }
}

/** validateArgs then buildInvocation. */
export function prepareInvocation(
  tool: CompiledTool,
  raw: unknown,
  options: ValidateOptions & BuildOptions = {},
): { ok: true; args: ValidatedArgs; invocation: Invocation } | BuildFailure {
  const v = validateArgs(tool, raw, options);
  if (!v.ok) return v;
  const b = buildInvocation(tool, v.args, options);
  if (!b.ok) return b;
  return { ok: true, args: v.args, invocation: b.invocation };
}

// ---------------------------------------------------------------- exec

const RUNTIME_KEYS = {
  _output_file: "outputFile",
  _scan_id: "scanId",
  _evidence_dir: "evidenceDir",
} as const;

function scalar(ref: Ref | undefined, args: ValidatedArgs, runtime: RuntimeValues | undefined): string {
  switch (ref?.kind) {
    case "arg": {
      const v = args[ref.name];
      return v === undefined ? "" : valueToString(v);
    }
    case "default":
      return ref.value;
    case "runtime": {
      const v = runtime?.[RUNTIME_KEYS[ref.name]];
      if (v === undefined || v === "" || v.includes("\0")) {
        return stop("ERR_TOOL_RUNTIME_VAR_MISSING", "runtime", `the executor did not supply {${ref.name}}`);
      }
      return v;
    }
    default:
      return stop("ERR_TOOL_TEMPLATE_INVALID", "template", "unresolvable placeholder");
  }
}

function renderToken(
  t: Token,
  refs: ReadonlyMap<string, Ref>,
  args: ValidatedArgs,
  rt: RuntimeValues | undefined,
): string[] {
  let out = "";
  for (const p of t.parts) out += "lit" in p ? p.lit : scalar(refs.get(p.ref), args, rt);
  // A bare `{x}` whose value is empty disappears instead of passing "" as an argument.
  if (out === "" && !t.quoted && t.parts.length === 1 && "ref" in (t.parts[0] as Part)) return [];
  return [out];
}

function buildExec(
  tool: CompiledTool,
  plan: ExecPlan,
  args: ValidatedArgs,
  options: BuildOptions,
  timeoutMs: number,
): ExecInvocation {
  const argv = [plan.program];
  const lookup = (name: string): string | undefined => {
    const r = plan.refs.get(name);
    if (r?.kind === "arg") {
      const v = args[name];
      return v === undefined ? undefined : valueToString(v);
    }
    return r?.kind === "default" ? r.value : undefined;
  };
  for (const t of plan.tokens.slice(1)) {
    const only = t.parts.length === 1 ? t.parts[0] : undefined;
    const ref = only !== undefined && "ref" in only ? plan.refs.get(only.ref) : undefined;
    if (ref?.kind === "mapping") {
      const v = args[ref.arg];
      if (v !== undefined) argv.push(...(ref.values.get(valueToString(v)) ?? []));
    } else if (ref?.kind === "conditional") {
      if (evaluateCondition(ref.when, lookup)) {
        for (const ct of ref.tokens) argv.push(...renderToken(ct, plan.refs, args, options.runtime));
      }
    } else {
      argv.push(...renderToken(t, plan.refs, args, options.runtime));
    }
  }
  return { kind: "exec", tool: tool.name, argv, timeoutMs };
}

// ---------------------------------------------------------------- http

function httpValue(ref: Ref | undefined, args: ValidatedArgs): ArgValue | undefined {
  if (ref?.kind === "arg") return args[ref.name];
  return undefined;
}

function push(out: Segment[], s: Segment): void {
  const last = out[out.length - 1];
  if (typeof s === "string" && typeof last === "string") out[out.length - 1] = last + s;
  else if (s !== "") out.push(s);
}

function buildHttp(
  tool: CompiledTool,
  plan: HttpPlan,
  args: ValidatedArgs,
  timeoutMs: number,
): HttpInvocation {
  const secrets = new Set<string>();
  const url: Segment[] = [];
  for (const { part, query } of plan.url) {
    if ("lit" in part) {
      push(url, part.lit);
      continue;
    }
    const ref = plan.refs.get(part.ref);
    if (ref?.kind === "secret") {
      secrets.add(ref.name);
      push(url, { secret: ref.name, encoding: "url" });
      continue;
    }
    const v = httpValue(ref, args);
    const text = v === undefined ? "" : valueToString(v);
    // WHATWG URL parsing resolves "." and ".." (and %2e forms) even when percent-encoded.
    if (!query && (text === "." || text === "..")) {
      stop(
        "ERR_TOOL_ARG_TRAVERSAL",
        "url-dot-segment",
        `'${part.ref}' would be a dot segment in the URL path`,
        part.ref,
      );
    }
    push(url, encodeURIComponent(text));
  }
  const headers: [string, Segment[]][] = plan.headers.map(([name, parts]) => {
    const segs: Segment[] = [];
    for (const p of parts) {
      if ("lit" in p) push(segs, p.lit);
      else {
        const ref = plan.refs.get(p.ref);
        if (ref?.kind === "secret") {
          secrets.add(ref.name);
          push(segs, { secret: ref.name, encoding: "header" });
        } else {
          const v = httpValue(ref, args);
          push(segs, v === undefined ? "" : valueToString(v));
        }
      }
    }
    return [name, segs];
  });
  const inv: HttpInvocation = {
    kind: "http",
    tool: tool.name,
    method: plan.method,
    url,
    headers,
    successStatus: [...plan.successStatus],
    timeoutMs,
    secrets: [],
  };
  if (plan.body !== undefined) {
    const body: Segment[] = [];
    writeBody(plan.body, plan, args, body, secrets);
    inv.body = body;
  }
  inv.secrets = [...secrets].sort();
  return inv;
}

function writeBody(
  node: BodyNode,
  plan: HttpPlan,
  args: ValidatedArgs,
  out: Segment[],
  secrets: Set<string>,
): void {
  switch (node.t) {
    case "lit":
      push(out, JSON.stringify(node.v));
      return;
    case "arg": {
      const v = httpValue(plan.refs.get(node.name), args);
      push(out, v === undefined ? "null" : JSON.stringify(v));
      return;
    }
    case "str":
      push(out, '"');
      for (const p of node.parts) {
        if ("lit" in p) push(out, jsonInner(p.lit));
        else {
          const ref = plan.refs.get(p.ref);
          if (ref?.kind === "secret") {
            secrets.add(ref.name);
            push(out, { secret: ref.name, encoding: "json" });
          } else {
            const v = httpValue(ref, args);
            push(out, jsonInner(v === undefined ? "" : valueToString(v)));
          }
        }
      }
      push(out, '"');
      return;
    case "arr":
      push(out, "[");
      node.items.forEach((item, i) => {
        if (i > 0) push(out, ",");
        writeBody(item, plan, args, out, secrets);
      });
      push(out, "]");
      return;
    case "obj":
      push(out, "{");
      node.entries.forEach(([k, item], i) => {
        push(out, `${i > 0 ? "," : ""}${JSON.stringify(k)}:`);
        writeBody(item, plan, args, out, secrets);
      });
      push(out, "}");
      return;
  }
}

const jsonInner = (s: string) => JSON.stringify(s).slice(1, -1);

/** The environment variable a secret name resolves from: `WARDEN_SECRET_<NAME>`. */
export function secretEnvName(name: string): string {
  return `WARDEN_SECRET_${name.toUpperCase()}`;
}

/** The ToolClad alias, read only when `WARDEN_SECRET_<NAME>` is absent. */
export function secretAliasEnvName(name: string): string {
  return `TOOLCLAD_SECRET_${name.toUpperCase()}`;
}

/**
 * A secret's value: `WARDEN_SECRET_<NAME>` whenever that variable is present (even
 * empty, which counts as missing: an operator who blanks it is not overridden by the
 * alias), else `TOOLCLAD_SECRET_<NAME>`. Undefined when missing or empty.
 */
export function secretValue(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const primary = env[secretEnvName(name)];
  const v = primary !== undefined ? primary : env[secretAliasEnvName(name)];
  return v === undefined || v === "" ? undefined : v;
}

export interface ResolvedHttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Substitutes secret values from `env` at execution time. The result must never reach the model. */
export function resolveHttpRequest(
  inv: HttpInvocation,
  env: Readonly<Record<string, string | undefined>>,
):
  | { ok: true; request: ResolvedHttpRequest }
  | { ok: false; code: WardenErrorCode; message: string; secret: string } {
  const values = new Map<string, string>();
  for (const name of inv.secrets) {
    const v = secretValue(name, env);
    if (v === undefined) {
      return {
        ok: false,
        code: "ERR_TOOL_SECRET_MISSING",
        secret: name,
        message: `secret '${name}' is not set`,
      };
    }
    values.set(name, v);
  }
  let bad: string | undefined;
  const join = (segs: Segment[]) =>
    segs
      .map((s) => {
        if (typeof s === "string") return s;
        const v = values.get(s.secret) ?? "";
        if (s.encoding === "url") return encodeURIComponent(v);
        if (s.encoding === "json") return jsonInner(v);
        if (/[\r\n\0]/.test(v)) bad = s.secret;
        return v;
      })
      .join("");
  const headers: Record<string, string> = {};
  for (const [name, segs] of inv.headers) headers[name] = join(segs);
  const request: ResolvedHttpRequest = { method: inv.method, url: join(inv.url), headers };
  if (inv.body !== undefined) request.body = join(inv.body);
  if (bad !== undefined) {
    return {
      ok: false,
      code: "ERR_TOOL_SECRET_INVALID",
      secret: bad,
      message: `secret '${bad}' contains a line break or NUL`,
    };
  }
  return { ok: true, request };
}

/** A display form with secrets shown as `{_secret:name}` placeholders (for logs and the CLI). */
export function describeInvocation(inv: Invocation): Record<string, unknown> {
  if (inv.kind !== "http") return { ...inv };
  const show = (segs: Segment[]) =>
    segs.map((s) => (typeof s === "string" ? s : `{_secret:${s.secret}}`)).join("");
  const out: Record<string, unknown> = {
    kind: inv.kind,
    tool: inv.tool,
    method: inv.method,
    url: show(inv.url),
    headers: Object.fromEntries(inv.headers.map(([n, s]) => [n, show(s)])),
  };
  if (inv.body !== undefined) out.body = show(inv.body);
  out.successStatus = inv.successStatus;
  out.timeoutMs = inv.timeoutMs;
  out.secrets = inv.secrets;
  return out;
}

// ---------------------------------------------------------------- mcp

function buildMcp(tool: CompiledTool, plan: McpPlan, args: ValidatedArgs, timeoutMs: number): McpInvocation {
  const mapped: Record<string, ArgValue> = {};
  for (const [name, value] of Object.entries(args)) {
    const target = plan.fieldMap.get(name) ?? name;
    Object.defineProperty(mapped, target, { value, enumerable: true, writable: true, configurable: true });
  }
  return {
    kind: "mcp",
    tool: tool.name,
    server: plan.server,
    upstreamTool: plan.tool,
    arguments: mapped,
    timeoutMs,
  };
}
