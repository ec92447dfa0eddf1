// APAE between sidecars (docs/trust.md, In the sidecar): a peer's signed ECTs arrive at
// POST /v1/apae/notify (trust assertions and quarantine broadcasts; no bearer credential,
// the ES256 signature by the configured peer key is the authentication); an operator
// sends this deployment's view of an agent to a peer (POST /v1/apae/assertions) and reads
// the trust table (GET /v1/apae/trust/:subject). The unauthenticated notify route is rate
// limited per source address with bounded memory (apae-limit.ts), before any verification.
// An approver ends a quarantine early with a signed record (POST /v1/apae/lift): an operator
// credential with the approver role, and a record signed by one of that approver's own keys.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { RuntimeApae } from "../../runtime/index.js";
import { identityOf } from "../auth-plugin.js";
import { ApiError, type ApiErrorCode, ERROR_STATUS } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import { IdString } from "../schemas.js";
import { SourceLimiter } from "./apae-limit.js";
import type { RouteContext } from "./context.js";

const NotifyBody = z.strictObject({
  ect: z
    .string()
    .min(1)
    .max(16 * 1024),
});
const NotifyResponse = z.object({ accepted: z.literal(true), act: z.string(), subject: z.string() });
const AssertBody = z.strictObject({ subject: IdString, peer: IdString });
const AssertResponse = z.object({ peer: z.string(), jti: z.string(), status: z.number().int().nullable() });
const SubjectParam = z.strictObject({ subject: IdString });
const TrustViewResponse = z.object({
  subject: z.string(),
  score: z.number(),
  interactions: z.number().int(),
  confidence: z.string(),
  status: z.string(),
  quarantineUntil: z.string().nullable(),
  quarantineCount: z.number().int(),
});

const LiftBody = z.strictObject({
  lift: z.record(z.string(), z.unknown()),
  signature: z.string().max(512).optional(),
});
const LiftResponse = z.object({
  subject: z.string(),
  quarantineCount: z.number().int(),
  approver: z.string(),
  principalLifted: z.boolean(),
  principalHeld: z.string().nullable(),
  journalSeq: z.number().int(),
});

/** A signed quarantine lift's refusals (the trust lift's and the principal lift's: routes/quarantines.ts). */
export const LIFT_ERRORS = [
  "ERR_APPROVAL_FORBIDDEN",
  "ERR_TRUST_LIFT_INVALID",
  "ERR_TRUST_LIFT_UNSIGNED",
  "ERR_TRUST_LIFT_SCOPE",
  "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
  "ERR_TRUST_LIFT_SIGNATURE_INVALID",
  "ERR_TRUST_LIFT_STALE",
  "ERR_TRUST_NOT_QUARANTINED",
] as const;

export const APAE_LIFT = {
  method: "POST",
  url: "/v1/apae/lift",
  access: "operator",
  summary: "An approver's signed early quarantine lift (HITL override, scope apae:quarantine_lift)",
  body: { name: "ApaeLiftBody", schema: LiftBody, required: true },
  response: { name: "ApaeLiftResponse", schema: LiftResponse },
  description: "The trust quarantine and the principal quarantine it caused are lifted, journaled first",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, ...LIFT_ERRORS, "ERR_SERVER_NOT_FOUND"],
} as const satisfies RouteSpec;

const PEER_ERRORS = [
  "ERR_TRUST_ECT_MALFORMED",
  "ERR_TRUST_ECT_UNSIGNED",
  "ERR_TRUST_ECT_KEY_UNKNOWN",
  "ERR_TRUST_ECT_SIGNATURE_INVALID",
  "ERR_TRUST_ECT_EXPIRED",
  "ERR_TRUST_ASSERTION_INVALID",
  "ERR_TRUST_ASSERTION_HOPS",
  "ERR_TRUST_ECT_DUPLICATE",
] as const;

export const APAE_NOTIFY = {
  method: "POST",
  url: "/v1/apae/notify",
  access: "none",
  summary: "A peer's signed ECT: apae:trust_assertion or apae:quarantine (broadcast)",
  body: { name: "ApaeNotifyBody", schema: NotifyBody, required: true },
  response: { name: "ApaeNotifyResponse", schema: NotifyResponse },
  description: "Verified and applied to this deployment's trust table",
  errors: [...BODY_ERRORS, ...PEER_ERRORS, "ERR_SERVER_RATE_LIMITED", "ERR_SERVER_NOT_FOUND"],
} as const satisfies RouteSpec;

export const APAE_ASSERT = {
  method: "POST",
  url: "/v1/apae/assertions",
  access: "operator",
  summary: "Send this deployment's signed view of an agent to a configured peer",
  body: { name: "ApaeAssertBody", schema: AssertBody, required: true },
  response: { name: "ApaeAssertResponse", schema: AssertResponse },
  description: "The assertion's jti and the peer's HTTP status (null when unreachable)",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, "ERR_TRUST_ASSERTION_INVALID", "ERR_SERVER_NOT_FOUND"],
} as const satisfies RouteSpec;

const AnchorResponse = z.object({
  domain: z.string(),
  trust_anchor_type: z.string(),
  trust_anchor_uri: z.string(),
  contact: z.string().optional(),
});
const DelegateBody = z.strictObject({ to: IdString, domain: z.string().min(1).max(253) });
const DelegateResponse = z.object({
  ect: z.string(),
  jti: z.string(),
  score: z.number(),
  agreement: z.string(),
});

export const APAE_TRUST_ANCHOR = {
  method: "GET",
  url: "/.well-known/apae/trust-anchor",
  access: "none",
  summary: "This deployment's APAE trust anchor document",
  response: { name: "ApaeTrustAnchor", schema: AnchorResponse },
  description: "domain, trust_anchor_type, trust_anchor_uri, contact",
  errors: ["ERR_SERVER_NOT_FOUND"],
} as const satisfies RouteSpec;

export const APAE_DELEGATE = {
  method: "POST",
  url: "/v1/apae/delegations",
  access: "agent",
  summary: "A cross-domain delegation by the authenticated agent (needs a bilateral agreement)",
  body: { name: "ApaeDelegateBody", schema: DelegateBody, required: true },
  response: { name: "ApaeDelegateResponse", schema: DelegateResponse },
  description: "The signed apae:cross_domain_assertion and the delegatee's cross-domain score",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_TRUST_DOMAIN_NO_AGREEMENT",
    "ERR_TRUST_DOMAIN_ASSURANCE",
    "ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE",
    "ERR_TRUST_QUARANTINED",
    "ERR_SERVER_NOT_FOUND",
  ],
} as const satisfies RouteSpec;

export const APAE_TRUST = {
  method: "GET",
  url: "/v1/apae/trust/:subject",
  access: "operator",
  summary: "This deployment's trust in an agent (score, confidence, quarantine)",
  params: SubjectParam,
  response: { name: "ApaeTrustView", schema: TrustViewResponse },
  description: "The trust table's row as it stands now",
  errors: [...AUTH_ERRORS, "ERR_SERVER_REQUEST_INVALID", "ERR_SERVER_NOT_FOUND"],
} as const satisfies RouteSpec;

/**
 * APAE §Quarantine Protocol: a quarantined agent accepts no new delegations (runs,
 * cross-domain delegations): 503 with Retry-After = the seconds until its quarantine ends.
 * Runs already open drain under the principal's quarantine (src/context); operator routes
 * are unaffected.
 */
export function refuseTrustQuarantined(ctx: RouteContext, principal: string): void {
  const apae = ctx.runtime.apae;
  const v = apae?.viewOf(principal);
  if (apae === undefined || v?.status !== "quarantined" || v.quarantineUntil === null) return;
  const seconds = Math.max(1, Math.ceil((v.quarantineUntil - apae.engine.now()) / 1000));
  throw new ApiError(
    "ERR_TRUST_QUARANTINED",
    "the agent is in trust quarantine; no new delegations until it ends",
    {
      details: { quarantineUntil: new Date(v.quarantineUntil).toISOString() },
      headers: { "retry-after": String(seconds) },
    },
  );
}

function apaeOf(ctx: RouteContext, peers: boolean): RuntimeApae {
  const apae = ctx.runtime.apae;
  if (apae === undefined || (peers && apae.peers === undefined)) {
    throw new ApiError("ERR_SERVER_NOT_FOUND", peers ? "APAE peers are not configured" : "APAE is off");
  }
  return apae;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function apaeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const limiter = new SourceLimiter(ctx.runtime.apae?.notifyLimit ?? {});
  mount(app, APAE_NOTIFY, async (req, _reply, { body }) => {
    const apae = apaeOf(ctx, true);
    const wait = limiter.take(req.ip);
    if (wait > 0) {
      throw new ApiError("ERR_SERVER_RATE_LIMITED", "too many APAE notifications from this source", {
        headers: { "retry-after": String(Math.ceil(wait / 1000)) },
      });
    }
    const r = await apae.receive(body.ect);
    if (!r.ok) {
      const code = (
        Object.hasOwn(ERROR_STATUS, r.code) ? r.code : "ERR_TRUST_ASSERTION_INVALID"
      ) as ApiErrorCode;
      throw new ApiError(code, r.message);
    }
    return { accepted: true as const, act: r.act, subject: r.change.view.subject };
  });

  mount(app, APAE_ASSERT, async (_req, _reply, { body }) => {
    const apae = apaeOf(ctx, true);
    if (!apae.peers?.peerIds().includes(body.peer)) {
      throw new ApiError("ERR_TRUST_ASSERTION_INVALID", `${body.peer} is not a configured peer`);
    }
    return apae.assertTo(body.subject, body.peer);
  });

  mount(app, APAE_TRUST_ANCHOR, async () => {
    const anchor = ctx.runtime.apae?.domains?.self;
    if (anchor === undefined) throw new ApiError("ERR_SERVER_NOT_FOUND", "no trust domain configured");
    return anchor;
  });

  mount(app, APAE_DELEGATE, async (req, _reply, { body }) => {
    const who = identityOf(req);
    const apae = apaeOf(ctx, false);
    refuseTrustQuarantined(ctx, who.id);
    const r = await apae.delegate(who.id, body.to, body.domain);
    if (!r.ok) {
      const code = (
        Object.hasOwn(ERROR_STATUS, r.code) ? r.code : "ERR_TRUST_DOMAIN_NO_AGREEMENT"
      ) as ApiErrorCode;
      throw new ApiError(code, r.message);
    }
    return { ect: r.token, jti: r.jti, score: r.score, agreement: r.agreement };
  });

  mount(app, APAE_LIFT, async (req, _reply, { body }) => {
    const who = identityOf(req);
    if (!who.roles.includes("approver"))
      throw new ApiError("ERR_APPROVAL_FORBIDDEN", "an early lift needs the approver role");
    // Only a key configured for this approver counts: a record is not a bearer token.
    const r = await apaeOf(ctx, false).lift(body, { by: who.id });
    if (!r.ok) throw new ApiError(r.code, r.message);
    const { ok: _ok, seq, ...rest } = r;
    return { ...rest, journalSeq: seq };
  });

  mount(app, APAE_TRUST, async (_req, _reply, { params }) => {
    const v = apaeOf(ctx, false).viewOf(params.subject);
    return {
      subject: v.subject,
      score: v.score,
      interactions: v.interactions,
      confidence: v.confidence,
      status: v.status,
      quarantineUntil: iso(v.quarantineUntil),
      quarantineCount: v.quarantineCount,
    };
  });
}
