// One declaration per route: method, path, access class, the zod schemas of its path,
// query and body, its answer and the error codes it can send. The server mounts routes
// from these declarations (parsing inputs with the same schemas) and the OpenAPI
// document is generated from them, so the served description cannot drift from the
// parser and there is no second, hand-kept schema.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { ApiErrorCode } from "./errors.js";
import { ApiError } from "./errors.js";

/** Who may call a route: nobody authenticated, an agent, an operator, either, or /metrics' own rule. */
export type Access = "none" | "agent" | "operator" | "any" | "metrics";

export interface RouteSpec {
  readonly method: "GET" | "POST";
  /** Fastify path syntax (`/v1/runs/:id`); OpenAPI gets `{id}`. */
  readonly url: string;
  readonly access: Access;
  readonly summary: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: { readonly name: string; readonly schema: z.ZodType; readonly required: boolean };
  /** The 200 answer: a named JSON schema, or a media type with no schema. */
  readonly response: { readonly name: string; readonly schema: z.ZodType } | { readonly mediaType: string };
  /** The success status (default 200). */
  readonly status?: 200 | 201;
  readonly description: string;
  readonly errors: readonly ApiErrorCode[];
}

/** Who is refused before any route runs: missing, wrong or misplaced credentials, pacing. */
export const AUTH_ERRORS = [
  "ERR_AUTH_MISSING",
  "ERR_AUTH_INVALID",
  "ERR_AUTH_FORBIDDEN",
  "ERR_SERVER_RATE_LIMITED",
] as const satisfies readonly ApiErrorCode[];

/** What a JSON body can be refused for by the strict parser and the route's schema. */
export const BODY_ERRORS = [
  "ERR_SERVER_BODY_TOO_LARGE",
  "ERR_SERVER_BODY_MALFORMED",
  "ERR_SERVER_MEDIA_TYPE",
  "ERR_SERVER_REQUEST_INVALID",
  "ERR_JSON_SYNTAX",
  "ERR_JSON_DUPLICATE_KEY",
  "ERR_JSON_FORBIDDEN_KEY",
  "ERR_CANON_TOO_DEEP",
  "ERR_CANON_NON_FINITE_NUMBER",
] as const satisfies readonly ApiErrorCode[];

/** Parses a value with a route's schema; the first issue becomes a coded 400. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ApiError(
      "ERR_SERVER_REQUEST_INVALID",
      `${what} invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return r.data;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

type Out<S> = S extends z.ZodType ? z.infer<S> : undefined;
type BodyOut<S> = S extends { schema: infer Z } ? Out<Z> : undefined;

/**
 * Mounts a declared route. Path, query and body are parsed with the declared schemas
 * before the handler runs (a route whose body needs completing from the credential
 * first declares `parse: false` and parses it itself with the same schema).
 */
export function mount<S extends RouteSpec>(
  app: FastifyInstance,
  spec: S,
  handler: (
    req: FastifyRequest,
    reply: FastifyReply,
    input: RouteInput<Out<S["params"]>, Out<S["query"]>, BodyOut<S["body"]>>,
  ) => Promise<unknown>,
  opts: { parse?: boolean } = {},
): void {
  const parse = opts.parse ?? true;
  app.route({
    method: spec.method,
    url: spec.url,
    config: { access: spec.access },
    handler: async (req, reply) => {
      const input = {
        params: spec.params ? parseInput(spec.params, req.params, "path") : undefined,
        query: spec.query ? parseInput(spec.query, req.query, "query") : undefined,
        body: spec.body && parse ? parseInput(spec.body.schema, req.body ?? {}, "request body") : req.body,
      } as RouteInput<Out<S["params"]>, Out<S["query"]>, BodyOut<S["body"]>>;
      return handler(req, reply, input);
    },
  });
}
