// Turns a schema-valid ToolContract into a CompiledTool: custom types folded into each
// argument, invalid combinations refused, patterns and `when` expressions compiled,
// templates tokenised and every placeholder resolved — all once, at load time. What
// cannot be resolved here is a manifest error, never a surprise at call time.
import { Ajv, type ValidateFunction } from "ajv";
import { parseStrictJson, type WardenErrorCode } from "../contracts/index.js";
import type { ArgValue, ResolvedArg } from "./arg-types.js";
import { CompileFailure, invalid, resolveArgs } from "./compile-args.js";
import { type Condition, parseCondition } from "./condition.js";
import type { ToolContract } from "./contract-schema.js";
import { type CompiledScope, compileScope, hostnameProblem, parseIpv4 } from "./net.js";
import {
  type Part,
  parseParts,
  type Token,
  tokenizeExec,
  tokenizeTemplate,
  unprotectedDashRefs,
} from "./template.js";

/** Executor-provided variables a command template may use. */
export const RUNTIME_VARIABLES = ["_output_file", "_scan_id", "_evidence_dir"] as const;
export type RuntimeVariable = (typeof RUNTIME_VARIABLES)[number];

export type Ref =
  | { kind: "arg"; name: string }
  | { kind: "default"; name: string; value: string }
  | { kind: "runtime"; name: RuntimeVariable }
  | { kind: "secret"; name: string }
  | { kind: "mapping"; arg: string; values: ReadonlyMap<string, readonly string[]> }
  | { kind: "conditional"; name: string; when: Condition; tokens: readonly Token[] };

export interface ExecPlan {
  kind: "exec";
  program: string;
  tokens: readonly Token[];
  refs: ReadonlyMap<string, Ref>;
}

export type BodyNode =
  | { t: "lit"; v: unknown }
  | { t: "arg"; name: string }
  | { t: "str"; parts: Part[] }
  | { t: "arr"; items: BodyNode[] }
  | { t: "obj"; entries: [string, BodyNode][] };

export interface HttpPlan {
  kind: "http";
  method: string;
  /** URL parts; `query` marks parts after the first `?` (encoded as query components). */
  url: { part: Part; query: boolean }[];
  headers: [string, Part[]][];
  body: BodyNode | undefined;
  refs: ReadonlyMap<string, Ref>;
  successStatus: readonly number[];
}

export interface McpPlan {
  kind: "mcp";
  server: string;
  tool: string;
  fieldMap: ReadonlyMap<string, string>;
}

export interface CompiledTool {
  readonly contract: ToolContract;
  readonly name: string;
  /** Arguments in model-facing order: by position, then by name. */
  readonly args: ReadonlyMap<string, ResolvedArg>;
  readonly backend: ExecPlan | HttpPlan | McpPlan;
  readonly scope: CompiledScope | undefined;
  readonly outputValidator: ValidateFunction;
}

export type CompileResult =
  | { ok: true; tool: CompiledTool }
  | { ok: false; code: WardenErrorCode; message: string; path: string[] };

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });

/** Compiles a schema-valid contract. Expected failures come back as values. */
export function compileContract(contract: ToolContract): CompileResult {
  try {
    return { ok: true, tool: compile(contract) };
  } catch (err) {
    if (err instanceof CompileFailure)
      return { ok: false, code: err.code, message: err.message, path: err.path };
    throw err;
  }
}

function compile(contract: ToolContract): CompiledTool {
  const args = resolveArgs(contract);
  const backends = (["command", "http", "mcp"] as const).filter((k) => contract[k] !== undefined);
  if (backends.length !== 1) {
    invalid([], `exactly one of [command], [http], [mcp] is required (found ${backends.length})`);
  }
  const which = backends[0] as "command" | "http" | "mcp";
  const dispatch = contract.tool.dispatch;
  if (dispatch !== undefined && (dispatch === "exec" ? "command" : dispatch) !== which) {
    invalid(["tool", "dispatch"], `dispatch = "${dispatch}" but the manifest has [${which}]`);
  }
  if (which !== "command" && contract.tool.binary !== undefined) {
    invalid(["tool", "binary"], `binary only applies to [command] tools, not [${which}]`);
  }
  const backend =
    which === "command"
      ? compileCommand(contract, args)
      : which === "http"
        ? compileHttp(contract, args)
        : compileMcp(contract, args);

  let scope: CompiledScope | undefined;
  if (contract.scope !== undefined) {
    const s = compileScope(contract.scope);
    if (!s.ok) invalid(["scope"], `malformed scope entry '${s.entry}'`);
    else scope = s.scope;
  }

  const out = contract.output;
  const parser = out.parser ?? `builtin:${out.format}`;
  if (parser !== `builtin:${out.format}`)
    invalid(["output", "parser"], `parser ${parser} does not match format ${out.format}`);
  let outputValidator: ValidateFunction;
  try {
    outputValidator = ajv.compile(out.schema);
  } catch (err) {
    return invalid(["output", "schema"], `output schema does not compile: ${(err as Error).message}`);
  }
  return { contract, name: contract.tool.name, args, backend, scope, outputValidator };
}

// ---------------------------------------------------------------- command

function literalTokens(tokens: Token[], at: string[]): string[] {
  return tokens.map((t) => {
    if (t.parts.some((p) => "ref" in p))
      invalid(at, "mapping values are literal flags; placeholders are not allowed");
    return t.parts.map((p) => ("lit" in p ? p.lit : "")).join("");
  });
}

function tokensOf(
  parsed: { ok: true; value: Token[] } | { ok: false; message: string },
  at: string[],
): Token[] {
  if (!parsed.ok) return invalid(at, parsed.message, "ERR_TOOL_TEMPLATE_INVALID");
  return parsed.value;
}

function compileCommand(contract: ToolContract, args: ReadonlyMap<string, ResolvedArg>): ExecPlan {
  const cmd = contract.command!;
  if ((cmd.exec === undefined) === (cmd.template === undefined)) {
    invalid(["command"], "exactly one of command.exec and command.template is required");
  }
  const tokens =
    cmd.exec !== undefined
      ? tokensOf(tokenizeExec(cmd.exec), ["command", "exec"])
      : tokensOf(tokenizeTemplate(cmd.template ?? ""), ["command", "template"]);

  const refs = new Map<string, Ref>();
  const define = (key: string, ref: Ref, at: string[]) => {
    if (refs.has(key))
      invalid(at, `template variable '${key}' is defined twice`, "ERR_TOOL_TEMPLATE_INVALID");
    refs.set(key, ref);
  };
  for (const name of args.keys()) define(name, { kind: "arg", name }, ["args", name]);
  for (const [name, value] of Object.entries(cmd.defaults ?? {})) {
    define(name, { kind: "default", name, value: String(value) }, ["command", "defaults", name]);
  }
  for (const name of RUNTIME_VARIABLES) define(name, { kind: "runtime", name }, ["command"]);

  const mappings = Object.entries(cmd.mappings ?? {});
  for (const [argName, table] of mappings) {
    const at = ["command", "mappings", argName];
    const arg = args.get(argName);
    if (arg === undefined) invalid(at, `mapping for undeclared argument '${argName}'`);
    if (arg?.base !== "enum") invalid(at, `mappings apply to enum arguments; '${argName}' is ${arg?.base}`);
    const allowed = new Set(arg?.allowed);
    const keys = Object.keys(table);
    const missing = [...allowed].filter((k) => !Object.hasOwn(table, k));
    const extra = keys.filter((k) => !allowed.has(k));
    if (missing.length > 0) invalid(at, `no mapping for allowed value(s) ${missing.join(", ")}`);
    if (extra.length > 0) invalid(at, `mapping for value(s) not allowed: ${extra.join(", ")}`);
    const values = new Map<string, readonly string[]>();
    for (const [k, v] of Object.entries(table)) {
      const toks = tokensOf(typeof v === "string" ? tokenizeTemplate(v) : tokenizeExec(v), [...at, k]);
      values.set(k, literalTokens(toks, [...at, k]));
    }
    const ref: Ref = { kind: "mapping", arg: argName, values };
    define(`_${argName}_flags`, ref, at);
    define(`_${argName}`, ref, at);
    if (mappings.length === 1) define("_scan_flags", ref, at);
  }

  const condVars = (name: string) => {
    const r = refs.get(name);
    return r?.kind === "arg" || r?.kind === "default";
  };
  for (const [name, c] of Object.entries(cmd.conditionals ?? {})) {
    const at = ["command", "conditionals", name];
    const when = parseCondition(c.when, condVars);
    if (!when.ok)
      invalid([...at, "when"], `bad 'when' expression: ${when.message}`, "ERR_TOOL_CONDITION_INVALID");
    if ((c.template === undefined) === (c.exec === undefined))
      invalid(at, "a conditional needs exactly one of template, exec");
    const toks =
      c.exec !== undefined
        ? tokensOf(tokenizeExec(c.exec), [...at, "exec"])
        : tokensOf(tokenizeTemplate(c.template ?? ""), [...at, "template"]);
    for (const t of toks) checkToken(t, refs, [...at], false);
    const key = name.startsWith("_") ? name : `_${name}`;
    define(
      key,
      {
        kind: "conditional",
        name,
        when: (when as { ok: true; condition: Condition }).condition,
        tokens: toks,
      },
      at,
    );
  }

  const first = tokens[0];
  if (first === undefined) return invalid(["command"], "the command is empty", "ERR_TOOL_TEMPLATE_INVALID");
  if (first.parts.length !== 1 || !("lit" in (first.parts[0] as Part))) {
    invalid(["command"], "the program (first token) must be literal", "ERR_TOOL_TEMPLATE_INVALID");
  }
  const program = (first.parts[0] as { lit: string }).lit;
  const binary = contract.tool.binary;
  if (binary !== undefined && program !== binary) {
    invalid(
      ["command"],
      `the command runs '${program}' but tool.binary is '${binary}'`,
      "ERR_TOOL_TEMPLATE_INVALID",
    );
  }
  const used = new Set<Ref>();
  for (const t of tokens.slice(1)) for (const r of checkToken(t, refs, ["command"], true)) used.add(r);
  for (const ref of new Set(refs.values())) {
    if ((ref.kind === "conditional" || ref.kind === "mapping") && !used.has(ref)) {
      const what = ref.kind === "conditional" ? `conditional '${ref.name}'` : `mapping '${ref.arg}'`;
      invalid(["command"], `${what} is never used in the command`, "ERR_TOOL_TEMPLATE_INVALID");
    }
  }
  checkDashPlacement(tokens.slice(1), refs, args);
  return { kind: "exec", program, tokens, refs };
}

/** An argument allowed to start with '-' must not begin an argv element before `--`. */
function checkDashPlacement(
  tokens: readonly Token[],
  refs: ReadonlyMap<string, Ref>,
  args: ReadonlyMap<string, ResolvedArg>,
): void {
  const dashed = unprotectedDashRefs(
    tokens,
    (name) => {
      const r = refs.get(name);
      return r?.kind === "arg" && args.get(r.name)?.allowLeadingDash === true;
    },
    (name) => {
      const r = refs.get(name);
      return r?.kind === "conditional" ? r.tokens : undefined;
    },
  );
  if (dashed.length > 0) {
    invalid(
      ["command"],
      `{${dashed[0]}} may start with '-' (allow_leading_dash) and must come after a literal '--'`,
      "ERR_TOOL_TEMPLATE_INVALID",
    );
  }
}

/** Checks a token's placeholders; fragments (mappings, conditionals) must stand alone. */
function checkToken(
  t: Token,
  refs: ReadonlyMap<string, Ref>,
  at: string[],
  fragmentsAllowed: boolean,
): Ref[] {
  const found: Ref[] = [];
  for (const p of t.parts) {
    if (!("ref" in p)) continue;
    if (p.ref.startsWith("_secret:")) {
      invalid(
        at,
        `secrets are not allowed in command lines (visible in the process table): {${p.ref}}`,
        "ERR_TOOL_TEMPLATE_INVALID",
      );
    }
    const ref = refs.get(p.ref);
    if (ref === undefined) invalid(at, `unknown placeholder {${p.ref}}`, "ERR_TOOL_TEMPLATE_INVALID");
    if (ref?.kind === "mapping" || ref?.kind === "conditional") {
      if (!fragmentsAllowed)
        invalid(at, `{${p.ref}} cannot be used inside a conditional`, "ERR_TOOL_TEMPLATE_INVALID");
      if (t.parts.length !== 1 || t.quoted) {
        invalid(
          at,
          `{${p.ref}} expands to flags and must stand alone, unquoted`,
          "ERR_TOOL_TEMPLATE_INVALID",
        );
      }
    }
    if (ref !== undefined) found.push(ref);
  }
  return found;
}

// ---------------------------------------------------------------- http

function compileHttp(contract: ToolContract, args: ReadonlyMap<string, ResolvedArg>): HttpPlan {
  const http = contract.http!;
  const refs = new Map<string, Ref>();
  for (const name of args.keys()) refs.set(name, { kind: "arg", name });
  const resolve = (name: string, at: string[]): Ref => {
    if (name.startsWith("_secret:")) return { kind: "secret", name: name.slice("_secret:".length) };
    const r = refs.get(name);
    if (r === undefined) return invalid(at, `unknown placeholder {${name}}`, "ERR_TOOL_TEMPLATE_INVALID");
    return r;
  };
  const partsOf = (text: string, at: string[]): Part[] => {
    const parsed = parseParts(text);
    if (!parsed.ok) return invalid(at, parsed.message, "ERR_TOOL_TEMPLATE_INVALID");
    for (const p of parsed.value) if ("ref" in p) refs.set(p.ref, resolve(p.ref, at));
    return parsed.value;
  };

  const urlParts = partsOf(http.url, ["http", "url"]);
  const head = urlParts[0];
  const origin = head !== undefined && "lit" in head ? /^https?:\/\/[^/?#]+[/?#]/.exec(head.lit) : null;
  if (origin === null) {
    invalid(
      ["http", "url"],
      "the URL must start with a literal http(s)://host/ — placeholders only in path and query",
      "ERR_TOOL_TEMPLATE_INVALID",
    );
  }
  let base: URL;
  try {
    base = new URL((origin as RegExpExecArray)[0]);
  } catch {
    return invalid(["http", "url"], "the URL's origin does not parse", "ERR_TOOL_TEMPLATE_INVALID");
  }
  if (
    parseIpv4(base.hostname) === undefined &&
    hostnameProblem(base.hostname) !== undefined &&
    !base.hostname.startsWith("[")
  ) {
    invalid(["http", "url"], "the URL's host is not a valid hostname", "ERR_TOOL_TEMPLATE_INVALID");
  }
  let inQuery = false;
  const url = urlParts.map((part) => {
    const entry = { part, query: inQuery };
    if ("lit" in part && /[?#]/.test(part.lit)) inQuery = true;
    return entry;
  });
  // A literal that contains '?' puts later parts in the query; the literal itself is as written.

  const headers: [string, Part[]][] = Object.entries(http.headers ?? {}).map(([name, value]) => [
    name,
    partsOf(value, ["http", "headers", name]),
  ]);
  let body: BodyNode | undefined;
  if (http.body_template !== undefined) {
    if (http.method === "GET" || http.method === "HEAD")
      invalid(["http", "body_template"], `${http.method} requests have no body`);
    let json: unknown;
    try {
      json = parseStrictJson(http.body_template, { maxLength: 65536 });
    } catch (err) {
      return invalid(
        ["http", "body_template"],
        `body_template must be JSON: ${(err as Error).message}`,
        "ERR_TOOL_TEMPLATE_INVALID",
      );
    }
    body = bodyNode(json, (text, at) => partsOf(text, at), ["http", "body_template"]);
  }
  return { kind: "http", method: http.method, url, headers, body, refs, successStatus: http.success_status };
}

function bodyNode(v: unknown, partsOf: (text: string, at: string[]) => Part[], at: string[]): BodyNode {
  if (typeof v === "string") {
    const parts = partsOf(v, at);
    if (
      parts.length === 1 &&
      "ref" in (parts[0] as Part) &&
      !(parts[0] as { ref: string }).ref.startsWith("_secret:")
    ) {
      return { t: "arg", name: (parts[0] as { ref: string }).ref };
    }
    return parts.some((p) => "ref" in p) ? { t: "str", parts } : { t: "lit", v };
  }
  if (Array.isArray(v)) return { t: "arr", items: v.map((x, i) => bodyNode(x, partsOf, [...at, String(i)])) };
  if (v !== null && typeof v === "object") {
    return {
      t: "obj",
      entries: Object.entries(v).map(([k, x]) => {
        if (k.includes("{"))
          invalid(at, "placeholders are not allowed in body keys", "ERR_TOOL_TEMPLATE_INVALID");
        return [k, bodyNode(x, partsOf, [...at, k])] as [string, BodyNode];
      }),
    };
  }
  return { t: "lit", v };
}

// ---------------------------------------------------------------- mcp

function compileMcp(contract: ToolContract, args: ReadonlyMap<string, ResolvedArg>): McpPlan {
  const mcp = contract.mcp!;
  const fieldMap = new Map<string, string>();
  const targets = new Set<string>();
  for (const name of args.keys()) {
    const target = mcp.field_map?.[name] ?? name;
    if (targets.has(target))
      invalid(["mcp", "field_map"], `two arguments map to the upstream field '${target}'`);
    targets.add(target);
    fieldMap.set(name, target);
  }
  for (const name of Object.keys(mcp.field_map ?? {})) {
    if (!args.has(name)) invalid(["mcp", "field_map", name], `field_map names undeclared argument '${name}'`);
  }
  return { kind: "mcp", server: mcp.server, tool: mcp.tool, fieldMap };
}

export type { ArgValue };
