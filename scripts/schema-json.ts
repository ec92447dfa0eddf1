// JSON Schema from zod, written deterministically (keys sorted recursively): shared by the
// record schemas (export-schemas.ts) and the journal entry bodies (journal-schemas.ts).
import { z } from "zod";

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * The JSON Schema object of one zod schema. Refinements (payload form, hash checks, step
 * rules) have no JSON Schema equivalent and are left out; the zod schema is the full
 * contract. `io: "input"` describes what is accepted (journal bodies are validated as
 * given); a part JSON Schema cannot express (a transform, a custom check) becomes `{}`
 * there rather than failing the export.
 */
export function recordJsonSchema(schema: z.ZodType, io?: "input" | "output"): Record<string, unknown> {
  if (io === undefined) return z.toJSONSchema(schema, { target: "draft-2020-12" }) as Record<string, unknown>;
  return z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
}
