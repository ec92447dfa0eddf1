// The SchemaPin project's own fixtures (schemapin/ in the vectors directory).
import { readVectorJson, vectorPath } from "../../vectors.js";

export type Fixture = "js" | "python" | "go";

export const schemapinVector = (...p: string[]): string => vectorPath("schemapin", ...p);

export function signedSchemaFixture(f: Fixture): { schema: Record<string, unknown>; signature: string } {
  return readVectorJson("schemapin", f, "demo_schema_signed.json") as never;
}

export function wellKnownFixture(f: Fixture): Record<string, unknown> {
  return readVectorJson("schemapin", f, "demo_well_known.json") as Record<string, unknown>;
}

export function signedBundleFixture(): Record<string, unknown> {
  return readVectorJson("schemapin", "bundle", "signed_bundle.json") as Record<string, unknown>;
}
