// The contract's typed parameters as the zod schema a framework wants (LangChain, the AI
// SDK and the OpenAI Agents SDK all take zod). The source is the model's view of the
// contract (`toModelTool`: an object of typed arguments, no extra members), so the
// framework's check and the model's schema say what the contract says. It is only a
// first filter: the Gate validates the same arguments against the contract again.
import { z } from "zod";
import { AdapterError } from "../contracts/index.js";
import type { ModelTool } from "../tools/index.js";

type Json = Record<string, unknown>;

function num(s: Json, key: string): number | undefined {
  const v = s[key];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function described<T extends z.ZodType>(t: T, s: Json): T {
  return typeof s.description === "string" ? t.describe(s.description) : t;
}

function stringOf(s: Json): z.ZodType {
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((e) => typeof e === "string"))
    return z.enum(s.enum as [string, ...string[]]);
  let t = z.string();
  const max = num(s, "maxLength");
  if (max !== undefined) t = t.max(max);
  // The contract compiles its patterns without flags (src/tools): the same here.
  if (typeof s.pattern === "string") t = t.regex(new RegExp(s.pattern));
  if (s.format === "uri") t = t.url();
  return t;
}

function numberOf(s: Json, integer: boolean): z.ZodType {
  let t = integer ? z.number().int() : z.number();
  const min = num(s, "minimum");
  const max = num(s, "maximum");
  if (min !== undefined) t = t.min(min);
  if (max !== undefined) t = t.max(max);
  return t;
}

/** One argument's schema: the shapes `toModelTool` writes; a pinned JSON schema (json arguments) as zod reads it. */
export function zodOfArgument(s: Json): z.ZodType {
  if (s.type === "string" && s.anyOf === undefined) return described(stringOf(s), s);
  if (s.type === "integer") return described(numberOf(s, true), s);
  if (s.type === "number") return described(numberOf(s, false), s);
  if (s.type === "boolean") return described(z.boolean(), s);
  if (s.type === "string") return described(z.string(), s); // ip_address: the Gate checks the form
  try {
    return z.fromJSONSchema(s as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", "an argument schema zod cannot express", {
      cause: err,
    });
  }
}

export interface ZodOfToolOptions {
  /**
   * How an optional argument is written: `optional` (may be absent), or `nullable` (always
   * present, null meaning absent: what OpenAI's strict function schemas require; drop the
   * nulls with `withoutNulls` before the Gate).
   */
  optional?: "optional" | "nullable";
}

/** The contract's parameters as a strict zod object (unknown members refused, as the contract does). */
export function zodOfTool(tool: ModelTool, options: ZodOfToolOptions = {}): z.ZodObject {
  const required = new Set(tool.inputSchema.required ?? []);
  const shape: Record<string, z.ZodType> = {};
  for (const [name, s] of Object.entries(tool.inputSchema.properties)) {
    const t = zodOfArgument(s);
    if (required.has(name)) shape[name] = t;
    else shape[name] = options.optional === "nullable" ? t.nullable() : t.optional();
  }
  return z.strictObject(shape);
}

/** The arguments without the members a nullable schema sent as null (an absent optional argument). */
export function withoutNulls(tool: ModelTool, args: Record<string, unknown>): Record<string, unknown> {
  const required = new Set(tool.inputSchema.required ?? []);
  return Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== null || required.has(k)));
}
