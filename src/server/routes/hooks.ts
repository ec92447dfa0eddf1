// The AARTS remote transport (issue 20, docs/hooks.md "HTTP"): an agent host posts its
// version check and then its hook events to the sidecar and gets verdicts back.
//   POST /v1/hooks/handshake  {"aarts_version": "1"} → {compatible, engine_id, engine_version}
//   POST /v1/hooks/events     one AARTS event        → a verdict
// Only an agent credential whose principal has the `host` role may call them. Each such
// principal gets its own engine over the sidecar's runtime (created on its first call),
// so the handshake is per credential and host sessions of one principal are invisible to
// another; every event is evaluated as the authenticated principal, whatever host_id or
// session_id it names, in runs the runtime starts for that principal. Before a compatible
// handshake every event is refused (409 ERR_HOOK_HANDSHAKE_REQUIRED); a malformed event is
// a coded 400. Both are journaled by the engine first, like every verdict. Timeouts and
// engine faults are answered by the engine's failure policy (fail-closed deny) with 200.
import type { FastifyInstance } from "fastify";
import {
  createEngine,
  type Engine,
  HookEventSchema,
  VerdictSchema,
  VersionCheckRequestSchema,
  VersionCheckResponseSchema,
} from "../../hooks/index.js";
import { PinStore } from "../../tools/index.js";
import type { Identity } from "../auth.js";
import { identityOf } from "../auth-plugin.js";
import { refuseLocalSourcePins } from "../config.js";
import { ApiError, type ApiErrorCode } from "../errors.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, type RouteSpec } from "../route.js";
import type { RouteContext } from "./context.js";
import { EngineRegistry } from "./hooks-engines.js";

/** The role a principal needs to submit hook events (gate.principals[].roles). */
export const HOST_ROLE = "host";

/** Engine failure codes the HTTP answer carries as an error instead of a verdict. */
const REFUSALS: Readonly<Record<string, ApiErrorCode>> = {
  ERR_HOOK_HANDSHAKE_REQUIRED: "ERR_HOOK_HANDSHAKE_REQUIRED",
  ERR_HOOK_EVENT_INVALID: "ERR_HOOK_EVENT_INVALID",
  ERR_HOOK_POINT_UNKNOWN: "ERR_HOOK_POINT_UNKNOWN",
};

export const HOOK_HANDSHAKE = {
  method: "POST",
  url: "/v1/hooks/handshake",
  access: "agent",
  summary: "AARTS version check (§4.2) for the authenticated host; required before events",
  body: { name: "HookVersionCheck", schema: VersionCheckRequestSchema, required: true },
  response: { name: "HookVersionCheckResponse", schema: VersionCheckResponseSchema },
  description: "Whether this engine speaks the host's AARTS version (compatible: false refuses events)",
  errors: [...AUTH_ERRORS, ...BODY_ERRORS, "ERR_HOOK_ENGINE_LIMIT"],
} as const satisfies RouteSpec;

export const HOOK_EVENTS = {
  method: "POST",
  url: "/v1/hooks/events",
  access: "agent",
  summary: "Evaluate one AARTS hook event as the authenticated host; answers the verdict",
  body: { name: "HookEvent", schema: HookEventSchema, required: true },
  response: { name: "HookVerdict", schema: VerdictSchema },
  description: "The verdict (journaled before it is answered)",
  errors: [
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    "ERR_HOOK_HANDSHAKE_REQUIRED",
    "ERR_HOOK_EVENT_INVALID",
    "ERR_HOOK_POINT_UNKNOWN",
    "ERR_HOOK_ENGINE_LIMIT",
  ],
} as const satisfies RouteSpec;

export const HOOK_ROUTES = [HOOK_HANDSHAKE, HOOK_EVENTS] as const;

function requireHost(who: Identity): void {
  if (!who.roles.includes(HOST_ROLE)) {
    throw new ApiError("ERR_AUTH_FORBIDDEN", `hook events need a principal with the '${HOST_ROLE}' role`);
  }
}

export function hookRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // One engine per host principal over the one sidecar runtime, at most hooks.maxEngines.
  const h = ctx.runtime.loaded.config.hooks;
  // One pin store for every host's engine: pins of one host protect the others. Distributed
  // mode: every engine's pins are the table every replica shares (a pins file is refused).
  const shared = ctx.runtime.composed.hookSourcePins !== undefined;
  if (shared) refuseLocalSourcePins(h.sourcePins);
  const sourcePins = h.sourcePins !== undefined ? PinStore.open(h.sourcePins) : PinStore.inMemory();
  const engines = new EngineRegistry({
    max: h.maxEngines,
    create: (principal) =>
      createEngine({
        runtime: ctx.runtime.composed,
        transport: "http",
        principal,
        ...(shared ? {} : { sourcePins }),
        ...(h.sourceTrust !== undefined ? { sourceTrust: h.sourceTrust } : {}),
      }),
  });
  const engineFor = (principal: string): Promise<Engine> => engines.get(principal);
  app.addHook("onClose", () => engines.close());

  mount(app, HOOK_HANDSHAKE, async (req, _reply, { body }) => {
    const who = identityOf(req);
    requireHost(who);
    return (await engineFor(who.id)).versionCheck(body);
  });

  // The event is handed to the engine as sent (parse: false): it parses, journals and
  // answers a malformed one itself, so a refusal is recorded like any verdict.
  mount(
    app,
    HOOK_EVENTS,
    async (req, _reply, { body }) => {
      const who = identityOf(req);
      requireHost(who);
      const verdict = await (await engineFor(who.id)).handle(body);
      const code = (verdict as { error_code?: unknown }).error_code;
      const refusal = typeof code === "string" ? REFUSALS[code] : undefined;
      if (refusal !== undefined) throw new ApiError(refusal, verdict.reasons?.[0] ?? refusal);
      return verdict;
    },
    { parse: false },
  );
}
