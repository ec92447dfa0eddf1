// The auth plugin: every route declares its access class (route.ts), and the hook for
// that class is attached when the route is added, so a request does not look its
// route's options up. The identity comes from the credential only (never the body);
// the rate limit is per credential and applies before any parsing or decision.
import { performance } from "node:perf_hooks";
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from "fastify";
import type { AgentPinIdentities } from "./agentpin-auth.js";
import { agentPinToken } from "./agentpin-auth.js";
import type { Authenticator, Identity } from "./auth.js";
import { ApiError } from "./errors.js";
import type { Access } from "./route.js";

declare module "fastify" {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    identity?: Identity;
  }
}

/**
 * Per-credential token bucket: `perMinute` requests, refilled continuously. Keyed by the
 * Authenticator's identity object, which is one frozen object per configured credential.
 * A request over the rate whose token comes within `delayMs` reserves it and is paced
 * (held until then) instead of refused: a client that sends again as soon as it is
 * answered then waits instead of spinning on 429s, which would cost every other
 * principal CPU. The reservations are the bucket's debt, so at most
 * `delayMs × perMinute / 60 000` requests of one credential are held at once.
 */
export class RateLimiter {
  readonly #buckets = new Map<Identity, { tokens: number; at: number }>();
  constructor(
    readonly perMinute: number,
    readonly now: () => number = () => performance.now(),
    readonly delayMs = 0,
  ) {}

  /** Milliseconds to wait, or 0 when the request may proceed (never paced). */
  take(key: Identity): number {
    const r = this.reserve(key, 0);
    return "retryAfterMs" in r ? r.retryAfterMs : 0;
  }

  /** The request may proceed after `delay` ms (its token reserved), or is refused. */
  reserve(key: Identity, delayMs = this.delayMs): { delay: number } | { retryAfterMs: number } {
    const t = this.now();
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.perMinute, at: t };
      this.#buckets.set(key, b);
    }
    b.tokens = Math.min(this.perMinute, b.tokens + ((t - b.at) * this.perMinute) / 60_000);
    b.at = t;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { delay: 0 };
    }
    const wait = Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute);
    if (wait > delayMs) return { retryAfterMs: wait };
    b.tokens -= 1;
    return { delay: wait };
  }
}

export interface AuthPluginOptions {
  auth: Authenticator;
  /** `Authorization: AgentPin <jwt>` credentials (config identity.agentpin); absent: refused. */
  agentpin?: AgentPinIdentities | undefined;
  limiter: RateLimiter;
  /** Whether /metrics is served without a credential. */
  metricsPublic: boolean;
}

const header = (req: FastifyRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(",") : v;
};

/** The authenticated identity of a request on an authenticated route. */
export function identityOf(req: FastifyRequest): Identity {
  const who = req.identity;
  if (who === undefined) throw new ApiError("ERR_AUTH_MISSING", "a bearer token is required");
  return who;
}

function authHook(access: Access, o: AuthPluginOptions): onRequestHookHandler {
  const needs = access === "metrics" ? (o.metricsPublic ? "none" : "operator") : access;
  return (req, _reply, done) => {
    if (needs === "none") {
      done();
      return;
    }
    const pin = agentPinToken(header(req, "authorization"));
    if (pin !== undefined) {
      if (o.agentpin === undefined) {
        done(new ApiError("ERR_AUTH_INVALID", "AgentPin credentials are not configured"));
        return;
      }
      o.agentpin.authenticate(pin).then(
        (r) =>
          r.ok
            ? admitIdentity(req, r.identity, needs, o, done)
            : done("error" in r ? r.error : new ApiError(r.code, r.message)),
        () => done(new ApiError("ERR_SERVER_INTERNAL", "credential verification failed")),
      );
      return;
    }
    const r = o.auth.authenticate(header(req, "authorization"), header(req, "x-api-key"));
    if (!r.ok) {
      done(new ApiError(r.code, r.message, { headers: { "www-authenticate": 'Bearer realm="warden"' } }));
      return;
    }
    admitIdentity(req, r.identity, needs, o, done);
  };
}

/** The route's access class and the rate limit, for an authenticated identity. */
function admitIdentity(
  req: FastifyRequest,
  who: Identity,
  needs: Access | "none",
  o: AuthPluginOptions,
  done: (err?: Error) => void,
): void {
  if ((needs === "agent" && who.kind !== "agent") || (needs === "operator" && who.kind !== "operator")) {
    const message =
      needs === "agent" ? "this route needs an agent credential" : "this route needs an operator credential";
    done(new ApiError("ERR_AUTH_FORBIDDEN", message));
    return;
  }
  const r = o.limiter.reserve(who);
  if ("retryAfterMs" in r) {
    done(
      new ApiError("ERR_SERVER_RATE_LIMITED", "rate limit exceeded", {
        headers: { "retry-after": String(Math.ceil(r.retryAfterMs / 1000)) },
      }),
    );
    return;
  }
  req.identity = who;
  if (r.delay === 0) done();
  else setTimeout(done, r.delay);
}

/** Installs the auth hooks on the root instance (call before any route is registered). */
export function authPlugin(app: FastifyInstance, o: AuthPluginOptions): void {
  // Every route states its access class; a route that does not is a programming error.
  app.addHook("onRoute", (r) => {
    const access = (r.config as { access?: Access } | undefined)?.access;
    if (access === undefined) throw new Error(`route ${r.url} does not declare its access`);
    if (access === "none") return;
    const own = r.onRequest === undefined ? [] : [r.onRequest].flat();
    r.onRequest = [authHook(access, o), ...own];
  });
}
