// Runs: POST /v1/runs creates a run bound to the authenticated principal (the only way
// a run id comes to exist; optionally carrying a parent run's taint), GET /v1/runs/:id
// shows its state. Quarantine, trust and taint (`taint.carry: principal`) live with the
// principal, so a new run does not shed them; POST /v1/runs/clean is an operator's (with
// the approver role) way to start a run without the carried taint, journaled. An agent
// sees only its own runs, an operator any open run.
import type { FastifyInstance } from "fastify";
import type { Session } from "../../context/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import { RunCleanBody, RunCreateBody, RunCreateResponse, RunIdParam, RunStateResponse } from "../schemas.js";
import { refuseTrustQuarantined } from "./apae.js";
import { inTurn, type RouteContext } from "./context.js";

export const RUN_CREATE = {
  method: "POST",
  url: "/v1/runs",
  access: "agent",
  summary: "Start a run for the authenticated principal (optionally inheriting a parent run's taint)",
  body: { name: "RunCreateBody", schema: RunCreateBody, required: false },
  response: { name: "RunCreateResponse", schema: RunCreateResponse },
  status: 201,
  description: "The new run's id (server-chosen, unguessable, bound to the principal)",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_RUN_UNKNOWN",
    "ERR_RUN_ELSEWHERE",
    "ERR_RUN_LIMIT",
    "ERR_SERVER_BUSY",
    "ERR_SERVER_SHUTTING_DOWN",
    "ERR_TRUST_QUARANTINED",
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
} as const satisfies RouteSpec;

/** The operator role that may start a run without the taint carried at the principal. */
export const CLEAN_RUN_ROLE = "approver";

export const RUN_CLEAN_CREATE = {
  method: "POST",
  url: "/v1/runs/clean",
  access: "operator",
  summary: "Start a run of a principal without the taint carried at the principal (approver role; journaled)",
  body: { name: "RunCleanBody", schema: RunCleanBody, required: true },
  response: { name: "RunCreateResponse", schema: RunCreateResponse },
  status: 201,
  description: "The clean run's id, to hand to the principal's agent",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_RUN_LIMIT",
    "ERR_SERVER_SHUTTING_DOWN",
    "ERR_TRUST_QUARANTINED",
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
} as const satisfies RouteSpec;

export const RUN_STATE = {
  method: "GET",
  url: "/v1/runs/:id",
  access: "any",
  summary: "Run state: counters, quarantine, budgets left (own runs for agents, any for operators)",
  params: RunIdParam,
  response: { name: "RunStateResponse", schema: RunStateResponse },
  description: "Run state",
  errors: [
    ...AUTH_ERRORS,
    "ERR_SERVER_REQUEST_INVALID",
    "ERR_SERVER_RUN_NOT_FOUND",
    "ERR_RUN_ELSEWHERE",
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
} as const satisfies RouteSpec;

function runState(session: Session): Record<string, unknown> {
  const f = session.snapshot();
  const budgets: Record<string, { used: number; limit: number; remaining: number }> = {};
  for (const [k, b] of Object.entries(f.budgets)) {
    if (b) budgets[k] = { used: b.used, limit: b.limit, remaining: Math.max(0, b.limit - b.used) };
  }
  return {
    runId: f.runId,
    principalId: session.principalId,
    quarantined: f.quarantined,
    ...(f.quarantineReason !== undefined ? { quarantineReason: f.quarantineReason } : {}),
    counters: f.counters,
    perToolCalls: f.perToolCalls,
    budgets,
    taintSeen: f.taintSeen ?? [],
    ...(f.inheritedTaint !== undefined ? { inheritedTaint: f.inheritedTaint } : {}),
    ...(f.inheritedFrom !== undefined ? { inheritedFrom: f.inheritedFrom } : {}),
    ...(f.provenanceMergedFrom !== undefined ? { provenanceMergedFrom: f.provenanceMergedFrom } : {}),
    dataClassificationsSeen: f.dataClassificationsSeen,
  };
}

export function runRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const sessions = ctx.runtime.gate.sessions;

  mount(app, RUN_CREATE, async (req, reply, { body }) => {
    const who = identityOf(req);
    const parentRun = body.parentRun;
    refuseTrustQuarantined(ctx, who.id);
    // Distributed mode: a child starts where its parent run is served (421 names it; adopted
    // here when its owner is gone), so it inherits the parent's taint.
    if (parentRun !== undefined) await ctx.runtime.ensureRun(parentRun, who.id);
    // The runtime loads the principal's persisted state (quarantine) before the run opens;
    // the start (journaled) is shared work, served in the principal's fair turn.
    const session = await inTurn(ctx, req, reply, () =>
      ctx.runtime.startRun(who.id, {
        ...(parentRun !== undefined ? { parentRun } : {}),
        ...(body.originalRequest !== undefined ? { originalRequest: body.originalRequest } : {}),
      }),
    );
    void reply.code(201);
    return {
      runId: session.runId,
      principalId: session.principalId,
      ...(parentRun !== undefined ? { parentRun } : {}),
    };
  });

  mount(app, RUN_CLEAN_CREATE, async (req, reply, { body }) => {
    const who = identityOf(req);
    if (!who.roles.includes(CLEAN_RUN_ROLE))
      throw new ApiError("ERR_AUTH_FORBIDDEN", `starting a clean run needs the ${CLEAN_RUN_ROLE} role`);
    refuseTrustQuarantined(ctx, body.principalId);
    const session = await ctx.runtime.composed.startCleanRun(body.principalId, who.id);
    void reply.code(201);
    return { runId: session.runId, principalId: session.principalId };
  });

  mount(app, RUN_STATE, async (req, _reply, { params }) => {
    const who = identityOf(req);
    // Distributed mode: served by its owner (421 names it), adopted here when the owner is gone.
    if (who.kind === "agent") await ctx.runtime.ensureRun(params.id, who.id);
    else await ctx.runtime.ensureRunAny(params.id);
    const session = sessions.get(params.id);
    // Another principal's run is indistinguishable from a missing one.
    if (session === undefined || (who.kind === "agent" && session.principalId !== who.id)) {
      throw new ApiError("ERR_SERVER_RUN_NOT_FOUND", "no such run");
    }
    return runState(session);
  });
}
