// A tool contract derived from a function-calling tool description: a name, a description
// and a JSON Schema of the arguments (the shape OpenAI-style and MCP tool lists use). The
// contract dispatches as [mcp] (structured JSON, never a shell line): scalars become typed
// arguments, a string enum an `enum`, objects and arrays `json` arguments validated against
// their own schema (with the tool's `$defs` when they refer to them), and
// `anyOf: [T, {type: null}]` (an optional value) the type T. Anything
// the contract format cannot express is named in `unsupported` and left out of the
// contract, so a call that passes it is refused by validation (fail closed).
import { type ToolContract, ToolContractSchema } from "./contract-schema.js";

export interface SchemaToolDescription {
  name: string;
  description?: string | null | undefined;
  /** JSON Schema of the arguments: `{type: "object", properties, required}`. */
  parameters: Readonly<Record<string, unknown>>;
}

export interface SchemaContractOptions {
  /** The [mcp] server name the contract dispatches to. */
  server: string;
  /** Contract version (default "1"). */
  version?: string;
}

export interface SchemaContract {
  contract: ToolContract;
  /** Argument names the contract format cannot express (left out of the contract). */
  unsupported: string[];
}

const ARG_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SCALARS: Readonly<Record<string, "string" | "integer" | "number" | "boolean">> = {
  string: "string",
  integer: "integer",
  number: "number",
  boolean: "boolean",
};

type Schema = Readonly<Record<string, unknown>>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** `anyOf`/`oneOf` of one schema and `{type: "null"}` is that schema (the value is optional). */
function unwrapNullable(schema: Schema): Schema | undefined {
  const alts = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (alts === null) return schema;
  const nonNull = alts.filter((a) => !(isObject(a) && a.type === "null"));
  if (nonNull.length !== 1 || !isObject(nonNull[0])) return undefined;
  const { anyOf: _a, oneOf: _o, ...rest } = schema;
  return { ...rest, ...nonNull[0] };
}

/** The contract argument for one property, or undefined when the format cannot express it. */
function argSpec(
  raw: Schema,
  required: boolean,
  defs: Schema | undefined,
): Record<string, unknown> | undefined {
  const schema = unwrapNullable(raw);
  if (schema === undefined) return undefined;
  const description =
    typeof schema.description === "string" && schema.description.length > 0
      ? { description: schema.description.slice(0, 4096) }
      : {};
  const e = schema.enum;
  if (
    Array.isArray(e) &&
    e.length > 0 &&
    e.length <= 1024 &&
    e.every((v) => typeof v === "string" && v !== "")
  ) {
    return { type: "enum", allowed: e, required, ...description };
  }
  if (schema.type === "object" || schema.type === "array" || typeof schema.$ref === "string") {
    const { title: _t, default: _d, description: _ds, ...shape } = schema;
    // Local references (`#/$defs/…`, pydantic's nested models) resolve inside the argument's schema.
    const withDefs =
      defs !== undefined && JSON.stringify(shape).includes('"#/$defs/') ? { ...shape, $defs: defs } : shape;
    return { type: "json", schema: withDefs, required, ...description };
  }
  const t = typeof schema.type === "string" ? SCALARS[schema.type] : undefined;
  if (t === undefined) return undefined;
  const max = t === "string" ? { max_length: 65536 } : {};
  return { type: t, required, ...max, ...description };
}

/**
 * Derives a contract from a tool description. Throws (zod) only when the derived contract
 * is malformed, which an unusable tool name causes: check `TOOL_NAME` first with `usableToolName`.
 */
export function contractFromSchema(
  tool: SchemaToolDescription,
  options: SchemaContractOptions,
): SchemaContract {
  const params = tool.parameters;
  const props = isObject(params.properties) ? params.properties : {};
  const required = new Set(
    Array.isArray(params.required) ? params.required.filter((r) => typeof r === "string") : [],
  );
  const defs = isObject(params.$defs) ? params.$defs : undefined;
  const args: Record<string, unknown> = {};
  const unsupported: string[] = [];
  for (const [name, schema] of Object.entries(props)) {
    const spec =
      ARG_NAME.test(name) && isObject(schema) ? argSpec(schema, required.has(name), defs) : undefined;
    if (spec === undefined) unsupported.push(name);
    else args[name] = spec;
  }
  const description = (tool.description ?? "").trim().slice(0, 4096) || tool.name;
  const contract = ToolContractSchema.parse({
    tool: { name: tool.name, version: options.version ?? "1", description, dispatch: "mcp" },
    args,
    mcp: { server: options.server, tool: tool.name },
    output: { format: "json", schema: { type: "object" } },
  });
  return { contract, unsupported };
}

/** Whether a tool name can be a contract name (letters, digits, `_`, `-`; 1..64). */
export function usableToolName(name: string): boolean {
  return TOOL_NAME.test(name);
}
