// Capability grants: POST /v1/runs/:id/capabilities issues a capability token for an open
// run, bound to the run's principal, and journals the grant before answering. Only an
// operator with the `approver` role may grant: a capability is an authority a rule can
// require (`match: { capability: true }`), i.e. an approval given in advance, so an agent
// that could mint its own (even for its own run) would defeat every such rule, and a
// read-only operator (an auditor) holds no such authority. The token is in the answer and
// nowhere else (the journal keeps the grant's id and terms).
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { isoTime } from "../../contracts/index.js";
import { CapabilityScope, Constraints } from "../../identity/capabilities/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import { RunIdParam } from "../schemas.js";
import type { RouteContext } from "./context.js";

const Name = CapabilityScope.options[1].shape.toolClass;

/** Durations: milliseconds as a number, or "30s", "5m", "1h". */
const Ttl = z.union([
  z.number().int().positive(),
  z
    .string()
    .regex(/^\d{1,6}(s|m|h)$/, 'a duration like "30s" or "5m"')
    .transform(
      (s) => Number(s.slice(0, -1)) * { s: 1000, m: 60_000, h: 3_600_000 }[s.slice(-1) as "s" | "m" | "h"],
    ),
]);

export const CapabilityGrantBody = z
  .strictObject({
    /** One contract by name, or a tool class (and action): not both. */
    tool: Name.optional(),
    toolClass: Name.optional(),
    action: Name.optional(),
    constraints: Constraints.optional(),
    maxUses: z.number().int().min(1).max(1_000_000),
    /** Lifetime (default 5 minutes, at most 24 hours). */
    ttl: Ttl.optional(),
  })
  .refine((b) => (b.tool !== undefined) !== (b.toolClass !== undefined), {
    message: "name either tool, or toolClass (and action)",
  })
  .refine((b) => b.action === undefined || b.toolClass !== undefined, {
    message: "action needs toolClass",
    path: ["action"],
  });

export const CapabilityGrantResponse = z.strictObject({
  id: z.string(),
  /** The bearer token to present as `capability` with the run's calls. */
  token: z.string(),
  runId: z.string(),
  principalId: z.string(),
  scope: CapabilityScope,
  constraints: Constraints,
  maxUses: z.number().int(),
  expiresAt: z.string(),
});

/** The operator role that may grant capabilities. */
export const GRANTOR_ROLE = "approver";

export const CAPABILITY_GRANT = {
  method: "POST",
  url: "/v1/runs/:id/capabilities",
  access: "operator",
  summary: "Grant a capability token for an open run (operators with the approver role; journaled)",
  params: RunIdParam,
  body: { name: "CapabilityGrantBody", schema: CapabilityGrantBody, required: true },
  response: { name: "CapabilityGrantResponse", schema: CapabilityGrantResponse },
  status: 201,
  description: "The token and its terms",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_SERVER_RUN_NOT_FOUND",
    "ERR_CAPABILITY_GRANT_INVALID",
    "ERR_RUN_ELSEWHERE",
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
} as const satisfies RouteSpec;

export function capabilityRoutes(app: FastifyInstance, ctx: RouteContext): void {
  mount(app, CAPABILITY_GRANT, async (req, reply, { params, body }) => {
    const who = identityOf(req);
    if (!who.roles.includes(GRANTOR_ROLE))
      throw new ApiError("ERR_AUTH_FORBIDDEN", `granting capabilities needs the ${GRANTOR_ROLE} role`);
    // Distributed mode: granted by the run's owner (421 names it), or here once adopted.
    await ctx.runtime.ensureRunAny(params.id);
    if (ctx.runtime.sessions.get(params.id) === undefined)
      throw new ApiError("ERR_SERVER_RUN_NOT_FOUND", "no such run");
    const issued = await ctx.runtime.grant(
      params.id,
      {
        ...(body.tool !== undefined ? { tool: body.tool } : {}),
        ...(body.toolClass !== undefined ? { toolClass: body.toolClass } : {}),
        ...(body.action !== undefined ? { action: body.action } : {}),
        ...(body.constraints !== undefined ? { constraints: body.constraints } : {}),
        maxUses: body.maxUses,
        ...(body.ttl !== undefined ? { ttlMs: body.ttl } : {}),
      },
      who.id,
    );
    void reply.code(201);
    return {
      id: issued.id,
      token: issued.token,
      runId: issued.runId,
      principalId: issued.principalId,
      scope: issued.scope,
      constraints: issued.constraints,
      maxUses: issued.maxUses,
      expiresAt: isoTime(issued.expiresAt),
    };
  });
}
