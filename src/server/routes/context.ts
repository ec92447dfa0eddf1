// What the route modules share: the runtime, the metrics, the edge state and the
// shutdown signal. Built once by the server assembly (server.ts).
import type { FastifyReply } from "fastify";
import type { EdgeState } from "../edge.js";
import type { SidecarMetrics } from "../metrics.js";
import type { SidecarRuntime } from "../runtime.js";

export interface RouteContext {
  readonly runtime: SidecarRuntime;
  readonly metrics: SidecarMetrics;
  readonly state: EdgeState;
  /** Aborts when the shutdown grace period ends. */
  readonly shutdown: AbortSignal;
  /** The OpenAPI document (built from the route declarations on first use). */
  readonly openApi: () => Record<string, unknown>;
}

/** Aborts when the client goes away or the shutdown grace period ends. */
export function callSignal(ctx: RouteContext, reply: FastifyReply): AbortSignal {
  const client = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) client.abort(new Error("client disconnected"));
  });
  return AbortSignal.any([client.signal, ctx.shutdown]);
}
