// Every active quarantine and the approver-signed lift of a principal quarantine (issue 37):
//   GET  /v1/quarantines        an operator with the approver or auditor role: principal
//                               quarantines (behavioural rule, denial threshold, output
//                               screening, manual, trust score) and APAE trust rows
//   POST /v1/quarantines/lift   an operator with the approver role presents a record of scope
//                               warden:principal_quarantine_lift signed by one of that
//                               approver's own keys; journaled before it takes effect
// An agent credential is refused before any of this (operator access); a trust quarantine is
// lifted with POST /v1/apae/lift.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { QuarantineEntrySchema } from "../../runtime/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import { LIFT_ERRORS } from "./apae.js";
import type { RouteContext } from "./context.js";

const ListResponse = z.object({ quarantines: z.array(QuarantineEntrySchema) });
const LiftBody = z.strictObject({
  lift: z.record(z.string(), z.unknown()),
  signature: z.string().max(512).optional(),
});
const LiftResponse = z.object({
  principalId: z.string(),
  quarantineId: z.string(),
  trigger: z.string(),
  approver: z.string(),
  journalSeq: z.number().int(),
});

export const QUARANTINE_LIST = {
  method: "GET",
  url: "/v1/quarantines",
  access: "operator",
  summary: "Every active quarantine: principal quarantines of every kind and APAE trust rows",
  response: { name: "QuarantineList", schema: ListResponse },
  description:
    "kind, principal, run, reason, set at, rule and matched calls, and the lift scope that ends it",
  errors: [...AUTH_ERRORS, "ERR_RUNTIME_STORE_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const QUARANTINE_LIFT = {
  method: "POST",
  url: "/v1/quarantines/lift",
  access: "operator",
  summary: "An approver's signed lift of a principal quarantine (scope warden:principal_quarantine_lift)",
  body: { name: "QuarantineLiftBody", schema: LiftBody, required: true },
  response: { name: "QuarantineLiftResponse", schema: LiftResponse },
  description: "The principal's quarantine ends on every replica; journaled first",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, ...LIFT_ERRORS, "ERR_RUNTIME_STORE_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const QUARANTINE_ROUTES = [QUARANTINE_LIST, QUARANTINE_LIFT] as const;

export function quarantineRoutes(app: FastifyInstance, ctx: RouteContext): void {
  mount(app, QUARANTINE_LIST, async (req) => {
    const who = identityOf(req);
    if (!who.roles.some((r) => r === "approver" || r === "auditor"))
      throw new ApiError("ERR_AUTH_FORBIDDEN", "the quarantine list needs the approver or auditor role");
    return { quarantines: await ctx.runtime.composed.quarantines.list() };
  });

  mount(app, QUARANTINE_LIFT, async (req, _reply, { body }) => {
    const who = identityOf(req);
    if (!who.roles.includes("approver"))
      throw new ApiError("ERR_APPROVAL_FORBIDDEN", "a quarantine lift needs the approver role");
    // Only the presenting approver's own keys count: a record is not a bearer token.
    const r = await ctx.runtime.composed.quarantines.lift(body, who.id);
    if (!r.ok) throw new ApiError(r.code, r.message);
    const { ok: _ok, seq, ...rest } = r;
    return { ...rest, journalSeq: seq };
  });
}
