// The OpenAPI 3.1 document served at /v1/openapi.json, generated from the same zod
// schemas the server parses with (z.toJSONSchema over one registry, so shared parts
// become components) plus the one error table, so neither can drift from the code.
import { z } from "zod";
import { ERROR_STATUS } from "./errors.js";
import {
  ApprovalDecideResponse,
  ApprovalDecisionBody,
  ApprovalListResponse,
  CallBody,
  DecideResponse,
  ErrorBody,
  ExecuteResponse,
  HealthResponse,
  JournalHeadResponse,
  JournalListResponse,
  JournalQueryString,
  RunStateResponse,
  VerifyBody,
  VerifyResponse,
} from "./schemas.js";

const COMPONENTS = {
  CallBody,
  DecideResponse,
  ExecuteResponse,
  ErrorBody,
  RunStateResponse,
  ApprovalListResponse,
  ApprovalDecisionBody,
  ApprovalDecideResponse,
  JournalListResponse,
  JournalHeadResponse,
  VerifyBody,
  VerifyResponse,
  HealthResponse,
} as const;

type Name = keyof typeof COMPONENTS;

function components(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
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

const ref = (name: Name) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: Name) => ({ content: { "application/json": { schema: ref(name) } } });

function errors(...codes: (keyof typeof ERROR_STATUS)[]): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const c of codes) byStatus.set(ERROR_STATUS[c], [...(byStatus.get(ERROR_STATUS[c]) ?? []), c]);
  const out: Record<string, unknown> = {};
  for (const [status, list] of byStatus) {
    out[String(status)] = { description: list.join(", "), ...json("ErrorBody") };
  }
  return out;
}

const AUTH = [
  "ERR_AUTH_MISSING",
  "ERR_AUTH_INVALID",
  "ERR_AUTH_FORBIDDEN",
  "ERR_SERVER_RATE_LIMITED",
] as const;
const BODY = [
  "ERR_SERVER_BODY_TOO_LARGE",
  "ERR_SERVER_BODY_MALFORMED",
  "ERR_SERVER_MEDIA_TYPE",
  "ERR_SERVER_REQUEST_INVALID",
  "ERR_JSON_SYNTAX",
  "ERR_JSON_DUPLICATE_KEY",
  "ERR_JSON_FORBIDDEN_KEY",
  "ERR_CANON_TOO_DEEP",
] as const;

function queryParameters(): unknown[] {
  const shape = JournalQueryString.shape;
  return Object.entries(shape).map(([name, schema]) => ({
    name,
    in: "query",
    required: false,
    schema: z.toJSONSchema(schema as z.ZodType, { io: "input", unrepresentable: "any" }),
  }));
}

/** Builds the document (cheap; the server caches it). */
export function openApiDocument(): Record<string, unknown> {
  const agent = [{ bearer: [] }];
  const operator = [{ bearer: [] }];
  const idParam = (description: string) => [
    { name: "id", in: "path", required: true, description, schema: { type: "string", maxLength: 128 } },
  ];
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
    paths: {
      "/v1/execute": {
        post: {
          summary: "Gate and execute a contract-named tool call for the authenticated principal",
          security: agent,
          requestBody: { required: true, ...json("CallBody") },
          responses: {
            "200": { description: "Decided (and executed when allowed)", ...json("ExecuteResponse") },
            ...errors(
              ...AUTH,
              ...BODY,
              "ERR_AUTH_PRINCIPAL_MISMATCH",
              "ERR_SERVER_RUN_FORBIDDEN",
              "ERR_SERVER_NO_EXECUTOR",
              "ERR_SERVER_JOURNAL_UNAVAILABLE",
              "ERR_SERVER_POLICY_ERROR",
              "ERR_SERVER_SHUTTING_DOWN",
            ),
          },
        },
      },
      "/v1/decide": {
        post: {
          summary: "Decision only (the host executes); step_up and defer are returned, not awaited",
          security: agent,
          requestBody: { required: true, ...json("CallBody") },
          responses: {
            "200": { description: "The decision", ...json("DecideResponse") },
            ...errors(
              ...AUTH,
              ...BODY,
              "ERR_AUTH_PRINCIPAL_MISMATCH",
              "ERR_SERVER_RUN_FORBIDDEN",
              "ERR_SERVER_JOURNAL_UNAVAILABLE",
              "ERR_SERVER_POLICY_ERROR",
              "ERR_SERVER_SHUTTING_DOWN",
            ),
          },
        },
      },
      "/v1/runs/{id}": {
        get: {
          summary: "Run state: counters, quarantine, budgets left (own runs for agents, any for operators)",
          security: agent,
          parameters: idParam("run id"),
          responses: {
            "200": { description: "Run state", ...json("RunStateResponse") },
            ...errors(...AUTH, "ERR_SERVER_RUN_NOT_FOUND"),
          },
        },
      },
      "/v1/approvals": {
        get: {
          summary: "Pending step-up approvals and deferred actions (operators)",
          security: operator,
          responses: {
            "200": { description: "Pending items", ...json("ApprovalListResponse") },
            ...errors(...AUTH),
          },
        },
      },
      "/v1/approvals/{id}": {
        post: {
          summary: "Approve, deny or modify a pending item (operators); the blocked call resumes",
          security: operator,
          parameters: idParam("approval id (the decision id)"),
          requestBody: { required: true, ...json("ApprovalDecisionBody") },
          responses: {
            "200": { description: "Decided", ...json("ApprovalDecideResponse") },
            ...errors(
              ...AUTH,
              ...BODY,
              "ERR_APPROVAL_NOT_FOUND",
              "ERR_APPROVAL_FORBIDDEN",
              "ERR_APPROVAL_INVALID",
            ),
          },
        },
      },
      "/v1/journal": {
        get: {
          summary: "Journal entries, filtered (operators)",
          security: operator,
          parameters: queryParameters(),
          responses: {
            "200": { description: "Entries", ...json("JournalListResponse") },
            ...errors(...AUTH, "ERR_SERVER_REQUEST_INVALID", "ERR_SERVER_JOURNAL_UNAVAILABLE"),
          },
        },
      },
      "/v1/journal/head": {
        get: {
          summary: "The journal head, signed (keep it elsewhere to detect truncation later)",
          security: operator,
          responses: {
            "200": { description: "Head", ...json("JournalHeadResponse") },
            ...errors(...AUTH, "ERR_SERVER_JOURNAL_UNAVAILABLE"),
          },
        },
      },
      "/v1/journal/verify": {
        post: {
          summary: "Verify the whole chain (optionally against a signed head)",
          security: operator,
          requestBody: { required: false, ...json("VerifyBody") },
          responses: {
            "200": { description: "Verification report (ok true or false)", ...json("VerifyResponse") },
            ...errors(...AUTH, ...BODY, "ERR_SERVER_JOURNAL_UNAVAILABLE"),
          },
        },
      },
      "/health": {
        get: {
          summary: "Liveness",
          responses: { "200": { description: "Alive", ...json("HealthResponse") } },
        },
      },
      "/ready": {
        get: {
          summary: "Readiness: the journal answers and the server is not shutting down",
          responses: {
            "200": { description: "Ready", ...json("HealthResponse") },
            ...errors("ERR_SERVER_SHUTTING_DOWN", "ERR_SERVER_JOURNAL_UNAVAILABLE"),
          },
        },
      },
      "/metrics": {
        get: {
          summary: "Prometheus metrics (operator credential unless metrics.public)",
          security: operator,
          responses: {
            "200": { description: "Prometheus text format 0.0.4", content: { "text/plain": {} } },
            ...errors(...AUTH),
          },
        },
      },
      "/v1/openapi.json": {
        get: { summary: "This document", responses: { "200": { description: "OpenAPI 3.1" } } },
      },
    },
  };
}
