// Reading `*.clad.toml` manifests: TOML syntax, then the strict contract schema, then
// compilation. Every failure names the manifest and, where it can be found, the line.
// Custom types from a project-level `toolclad.toml` are copied into the contract's own
// `types` when an argument uses them, so the signed contract carries every rule it applies.
import { readFileSync } from "node:fs";
import { parse as parseToml, TomlError } from "smol-toml";
import type { z } from "zod";
import { ToolError, type WardenErrorCode } from "../contracts/index.js";
import { type CompiledTool, compileContract } from "./compile.js";
import {
  type CustomType,
  isBuiltinType,
  ProjectTypesSchema,
  type ToolContract,
  ToolContractSchema,
} from "./contract-schema.js";

export const MAX_MANIFEST_BYTES = 1024 * 1024;

export interface ParseOptions {
  /** Name used in messages (usually the file path). */
  source?: string;
  /** Project-level custom types (from `toolclad.toml`). */
  types?: Readonly<Record<string, CustomType>>;
}

export type ContractFailure = {
  ok: false;
  code: WardenErrorCode;
  message: string;
  source?: string;
  line?: number;
  /** Key path inside the manifest, e.g. ["args", "target", "pattern"]. */
  path?: string[];
};

export type ParseResult = { ok: true; tool: CompiledTool } | ContractFailure;

/** Parses and compiles manifest text. */
export function parseContract(text: string, options: ParseOptions = {}): ParseResult {
  const where = (extra: Partial<ContractFailure>): Partial<ContractFailure> =>
    options.source === undefined ? extra : { source: options.source, ...extra };
  const failure = (
    code: WardenErrorCode,
    message: string,
    extra: Partial<ContractFailure> = {},
  ): ContractFailure => {
    const f = { ok: false as const, code, message, ...where(extra) };
    const loc = f.source === undefined ? "" : `${f.source}${f.line === undefined ? "" : `:${f.line}`}: `;
    f.message = `${loc}${message}`;
    return f;
  };
  if (Buffer.byteLength(text, "utf8") > MAX_MANIFEST_BYTES) {
    return failure("ERR_TOOL_MANIFEST_INVALID", `manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
  }
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (err) {
    if (err instanceof TomlError) {
      return failure("ERR_TOOL_MANIFEST_SYNTAX", firstLine(err.message), { line: err.line });
    }
    throw err;
  }
  // zod silently drops `__proto__` record keys; a dropped argument must be an error instead.
  const forbidden = forbiddenKeyPath(raw, []);
  if (forbidden !== undefined) {
    return failure("ERR_TOOL_MANIFEST_INVALID", `forbidden key '${forbidden.join(".")}'`, {
      path: forbidden,
      ...lineOf(text, forbidden),
    });
  }
  const parsed = ToolContractSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys" && issue.keys[0] !== undefined) path.push(issue.keys[0]);
    const message =
      issue.code === "unrecognized_keys"
        ? `unknown key '${path.join(".")}'`
        : `${path.join(".")}: ${issue.message}`;
    return failure("ERR_TOOL_MANIFEST_INVALID", message, { path, ...lineOf(text, path) });
  }
  const contract = withProjectTypes(parsed.data, options.types);
  const compiled = compileContract(contract);
  if (!compiled.ok) {
    return failure(compiled.code, `${compiled.path.join(".") || "manifest"}: ${compiled.message}`, {
      path: compiled.path,
      ...lineOf(text, compiled.path),
    });
  }
  return compiled;
}

/** Reads and parses a manifest file. */
export function loadContract(file: string, options: Omit<ParseOptions, "source"> = {}): ParseResult {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return {
      ok: false,
      code: "ERR_TOOL_REGISTRY_IO",
      message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
      source: file,
    };
  }
  return parseContract(text, { ...options, source: file });
}

/** Reads the `[types]` of a project-level `toolclad.toml`. Throws ToolError when malformed. */
export function loadProjectTypes(file: string): Record<string, CustomType> {
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(file, "utf8"));
  } catch (err) {
    if (err instanceof TomlError) {
      throw new ToolError("ERR_TOOL_MANIFEST_SYNTAX", `${file}:${err.line}: ${firstLine(err.message)}`);
    }
    throw new ToolError(
      "ERR_TOOL_REGISTRY_IO",
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  const forbidden = forbiddenKeyPath(raw, []);
  if (forbidden !== undefined) {
    throw new ToolError("ERR_TOOL_MANIFEST_INVALID", `${file}: forbidden key '${forbidden.join(".")}'`);
  }
  const parsed = ProjectTypesSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ToolError("ERR_TOOL_MANIFEST_INVALID", `${file}: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  for (const name of Object.keys(parsed.data.types)) {
    if (isBuiltinType(name))
      throw new ToolError("ERR_TOOL_MANIFEST_INVALID", `${file}: type '${name}' shadows a built-in type`);
  }
  return parsed.data.types;
}

function withProjectTypes(contract: ToolContract, project: ParseOptions["types"]): ToolContract {
  if (project === undefined) return contract;
  const local = contract.types ?? {};
  const added: Record<string, CustomType> = {};
  for (const spec of Object.values(contract.args)) {
    const t = spec.type;
    if (isBuiltinType(t) || Object.hasOwn(local, t) || !Object.hasOwn(project, t)) continue;
    added[t] = project[t] as CustomType;
  }
  if (Object.keys(added).length === 0) return contract;
  return { ...contract, types: { ...added, ...local } };
}

function forbiddenKeyPath(value: unknown, at: string[]): string[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  for (const key of Object.keys(value)) {
    if (key === "__proto__") return [...at, key];
    const inner = forbiddenKeyPath((value as Record<string, unknown>)[key], [...at, key]);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

function firstLine(s: string): string {
  return s.split("\n")[0] ?? s;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Best-effort line of a key path: its table header, then the key inside that table. */
function lineOf(text: string, path: readonly string[]): { line?: number } {
  const lines = text.split(/\r?\n/);
  const isHeader = (l: string) => /^\s*\[/.test(l);
  for (let i = path.length; i >= 1; i--) {
    const header = path.slice(0, i).map(escapeRe).join("\\s*\\.\\s*");
    const re = new RegExp(`^\\s*\\[\\[?\\s*${header}\\s*\\]`);
    const at = lines.findIndex((l) => re.test(l));
    if (at < 0) continue;
    const key = path[i];
    if (key !== undefined) {
      const keyRe = new RegExp(`^\\s*["']?${escapeRe(key)}["']?\\s*[=.]`);
      for (let j = at + 1; j < lines.length && !isHeader(lines[j] as string); j++) {
        if (keyRe.test(lines[j] as string)) return { line: j + 1 };
      }
    }
    return { line: at + 1 };
  }
  const top = path[0];
  if (top !== undefined) {
    const keyRe = new RegExp(`^\\s*${escapeRe(top)}\\s*=`);
    const at = lines.findIndex((l) => keyRe.test(l));
    if (at >= 0) return { line: at + 1 };
  }
  return {};
}
