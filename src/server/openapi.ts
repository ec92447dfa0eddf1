// The OpenAPI 3.1 document served at /v1/openapi.json, generated from the route
// declarations (routes/*.ts: the same zod schemas the server parses with, turned into
// components by z.toJSONSchema over one registry) and the one error table, so neither
// can drift from the code and no schema is kept twice.
import { z } from "zod";
import { ERROR_STATUS } from "./errors.js";
import type { RouteSpec } from "./route.js";
import { ROUTES } from "./routes/index.js";
import { ErrorBody } from "./schemas.js";

/** Every named schema a route declares (bodies and answers), plus the error body. */
function named(): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = { ErrorBody };
  for (const r of ROUTES) {
    if (r.body !== undefined) out[r.body.name] = r.body.schema;
    if ("schema" in r.response) out[r.response.name] = r.response.schema;
  }
  return out;
}

function components(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named())) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    io: "input",
    unrepresentable: "any",
  }) as { schemas: Record<string, Record<string, unknown>> };
  // Shared recursive parts (JSON values) come back under "__shared"; give each its own component.
  let text = JSON.stringify(out.schemas);
  const shared = (out.schemas.__shared?.$defs ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(shared)) {
    text = text
      .split(`#/components/schemas/__shared#/$defs/${key}`)
      .join(`#/components/schemas/Shared_${key}`);
  }
  const schemas = JSON.parse(text) as Record<string, Record<string, unknown>>;
  const sharedDefs = (schemas.__shared?.$defs ?? {}) as Record<string, unknown>;
  delete schemas.__shared;
  for (const [key, def] of Object.entries(sharedDefs))
    schemas[`Shared_${key}`] = def as Record<string, unknown>;
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return schemas;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ content: { "application/json": { schema: ref(name) } } });

function errors(codes: readonly (keyof typeof ERROR_STATUS)[]): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const c of codes) byStatus.set(ERROR_STATUS[c], [...(byStatus.get(ERROR_STATUS[c]) ?? []), c]);
  const out: Record<string, unknown> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = { description: list.join(", "), ...json("ErrorBody") };
  }
  return out;
}

const schemaOf = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });

function parameters(r: RouteSpec): unknown[] {
  const path = Object.entries(r.params?.shape ?? {}).map(([name, s]) => ({
    name,
    in: "path",
    required: true,
    schema: schemaOf(s as z.ZodType),
  }));
  const query = Object.entries(r.query?.shape ?? {}).map(([name, s]) => ({
    name,
    in: "query",
    required: false,
    schema: schemaOf(s as z.ZodType),
  }));
  return [...path, ...query];
}

function operation(r: RouteSpec): Record<string, unknown> {
  const ok =
    "schema" in r.response
      ? { description: r.description, ...json(r.response.name) }
      : { description: r.description, content: { [r.response.mediaType]: {} } };
  const params = parameters(r);
  return {
    summary: r.summary,
    ...(r.access !== "none" ? { security: [{ bearer: [] }] } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(r.body !== undefined ? { requestBody: { required: r.body.required, ...json(r.body.name) } } : {}),
    responses: { [String(r.status ?? 200)]: ok, ...errors(r.errors) },
  };
}

/** Builds the document (cheap; the server caches it). */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) {
    const path = r.url.replace(/:(\w+)/g, "{$1}");
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: operation(r) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Warden sidecar",
      version: "1",
      description:
        "Mandatory mediation over HTTP: agents call tools only through the sidecar, which gates, executes and journals each call. See docs/http-api.md.",
    },
    servers: [{ url: "/" }],
    components: {
      schemas: components(),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "Agent or operator token (also accepted in X-API-Key).",
        },
      },
    },
    paths,
  };
}
