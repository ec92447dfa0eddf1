// Operations: liveness, readiness (the journal answers), Prometheus metrics, and the
// OpenAPI document generated from the route declarations (openapi.ts).
import type { FastifyInstance } from "fastify";
import { AUTH_ERRORS, mount, type RouteSpec } from "../route.js";
import { HealthResponse } from "../schemas.js";
import type { RouteContext } from "./context.js";
import { journalFault } from "./journal.js";

export const HEALTH = {
  method: "GET",
  url: "/health",
  access: "none",
  summary: "Liveness",
  response: { name: "HealthResponse", schema: HealthResponse },
  description: "Alive",
  errors: [],
} as const satisfies RouteSpec;

export const READY = {
  method: "GET",
  url: "/ready",
  access: "none",
  summary: "Readiness: the journal answers and the server is not shutting down",
  response: { name: "HealthResponse", schema: HealthResponse },
  description: "Ready",
  errors: ["ERR_SERVER_SHUTTING_DOWN", "ERR_SERVER_JOURNAL_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const METRICS = {
  method: "GET",
  url: "/metrics",
  access: "metrics",
  summary: "Prometheus metrics (operator credential unless metrics.public)",
  response: { mediaType: "text/plain" },
  description: "Prometheus text format 0.0.4",
  errors: AUTH_ERRORS,
} as const satisfies RouteSpec;

export const OPENAPI = {
  method: "GET",
  url: "/v1/openapi.json",
  access: "none",
  summary: "This document",
  response: { mediaType: "application/json" },
  description: "OpenAPI 3.1",
  errors: [],
} as const satisfies RouteSpec;

export function opsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const rt = ctx.runtime;
  let openapi: Record<string, unknown> | undefined;

  mount(app, HEALTH, async () => ({ status: "ok" }));

  mount(app, READY, async () => {
    await rt.store.count().catch(journalFault);
    return { status: "ready" };
  });

  mount(app, METRICS, async (_req, reply) => {
    const names = rt.contracts?.names() ?? [];
    const text = ctx.metrics.render({
      approvalsPending: () => rt.approvals.pending().length,
      deferredPending: () => rt.gate.deferQueue.size,
      inFlight: () => ctx.state.inFlight,
      fairQueue: () => ({ active: ctx.fair.active, queued: ctx.fair.queued }),
      breakers: () => names.map((tool) => ({ tool, state: rt.breakers.for(tool).state })),
    });
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });

  mount(app, OPENAPI, async () => {
    openapi ??= ctx.openApi();
    return openapi;
  });
}
