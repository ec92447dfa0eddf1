// Approvals (operators): the pending step-ups and deferred actions, and the verdict on
// one. Approvers see the structured action only (views.ts): never the model's rationale
// nor the original request, which can carry instructions aimed at the approver. With
// approver keys configured, a step-up verdict carries the approver's own signature; a
// deferred action is released or denied by an approver other than its principal (unsigned).
import type { FastifyInstance } from "fastify";
import { type ApprovalVerdict, checkRelease } from "../../gate/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import {
  ApprovalDecideResponse,
  ApprovalDecisionBody,
  ApprovalIdParam,
  ApprovalListResponse,
} from "../schemas.js";
import type { RouteContext } from "./context.js";
import { deferredView, stepUpView } from "./views.js";

export const APPROVAL_LIST = {
  method: "GET",
  url: "/v1/approvals",
  access: "operator",
  summary: "Pending step-up approvals and deferred actions (operators): the structured action only",
  response: { name: "ApprovalListResponse", schema: ApprovalListResponse },
  description: "Pending items",
  errors: [...AUTH_ERRORS, "ERR_RUNTIME_STORE_UNAVAILABLE"],
} as const satisfies RouteSpec;

export const APPROVAL_DECIDE = {
  method: "POST",
  url: "/v1/approvals/:id",
  access: "operator",
  summary: "Approve, deny or modify a pending item (operators); the blocked call resumes",
  params: ApprovalIdParam,
  body: { name: "ApprovalDecisionBody", schema: ApprovalDecisionBody, required: true },
  response: { name: "ApprovalDecideResponse", schema: ApprovalDecideResponse },
  description: "Decided",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_APPROVAL_NOT_FOUND",
    "ERR_APPROVAL_FORBIDDEN",
    "ERR_APPROVAL_INVALID",
    "ERR_APPROVAL_UNSIGNED",
    "ERR_APPROVAL_SIGNATURE_INVALID",
    "ERR_APPROVAL_WRONG_DECISION",
    "ERR_APPROVAL_REPLAYED",
    "ERR_APPROVAL_ALREADY_DECIDED",
    "ERR_RUNTIME_STORE_UNAVAILABLE",
  ],
} as const satisfies RouteSpec;

type Decided = Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }>;

export function approvalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { approvalQueue, deferredQueue } = ctx.runtime;

  // Step-ups and deferred actions of every replica in distributed mode (src/store-pg
  // approvals.ts, deferred.ts).
  mount(app, APPROVAL_LIST, async () => ({
    pending: [
      ...(await approvalQueue.list()).map(stepUpView),
      ...(await deferredQueue.list()).map(deferredView),
    ],
  }));

  mount(app, APPROVAL_DECIDE, async (req, _reply, { params, body }) => {
    const who = identityOf(req);
    const { id } = params;
    const approver = { id: who.id, roles: [...who.roles] };
    // A deferred action held here or, in distributed mode, on another replica.
    const deferred = await deferredQueue.find(id);
    if (deferred !== undefined) {
      const allowed = checkRelease(deferred, approver, body.justification);
      if (!allowed.ok) throw new ApiError(allowed.code, allowed.message);
      if (body.outcome === "modify")
        throw new ApiError("ERR_APPROVAL_INVALID", "a deferred action cannot be modified");
      const r = await deferredQueue.release(id, {
        outcome: body.outcome === "approve" ? "allow" : "deny",
        releaser: approver,
        note: body.justification,
      });
      if (!r.ok) throw new ApiError(r.code, r.message);
      return { ok: true, id, outcome: body.outcome };
    }
    const s = body.signature;
    const signed =
      s === undefined
        ? {}
        : { signed: { decisionId: s.decisionId, keyId: s.keyId, signature: s.sig, time: s.time } };
    const verdict: Decided =
      body.outcome === "modify"
        ? {
            outcome: "modify",
            approver,
            justification: body.justification,
            parameters: body.parameters ?? {},
            ...signed,
          }
        : { outcome: body.outcome, approver, justification: body.justification, ...signed };
    // A step-up waiting here or, in distributed mode, on another replica (NOT_FOUND: neither).
    const r = await approvalQueue.decide(id, verdict);
    if (!r.ok) throw new ApiError(r.code, r.message);
    return { ok: true, id, outcome: body.outcome };
  });
}
