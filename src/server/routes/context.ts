// What the route modules share: the runtime, the metrics, the edge state and the
// shutdown signal. Built once by the server assembly (server.ts).
import type { FastifyReply, FastifyRequest } from "fastify";
import { abortScope } from "../../contracts/index.js";
import type { FairQueue } from "../../runtime/index.js";
import { identityOf } from "../auth-plugin.js";
import type { EdgeState } from "../edge.js";
import { ApiError } from "../errors.js";
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
  /** The fair queue of the shared decision work (limits.maxConcurrent and its bounds). */
  readonly fair: FairQueue;
}

/**
 * Runs a call's shared work (Gate evaluation, journal commit) in its principal's turn: one
 * queue per authenticated principal, served round-robin with equal shares, so a principal
 * flooding requests waits behind its own backlog, not in front of everyone else's call.
 * ERR_SERVER_BUSY (429) when its share of the queue is full or the shared queue shed it.
 */
export async function inTurn<T>(
  ctx: RouteContext,
  req: FastifyRequest,
  reply: FastifyReply,
  work: () => Promise<T>,
  sliceMs?: number,
): Promise<T> {
  // A call served at once needs no abort signal: it is built only if the call has to wait.
  if (ctx.shutdown.aborted)
    throw new ApiError("ERR_SERVER_SHUTTING_DOWN", "the call was cancelled while waiting");
  const r = await ctx.fair.run(identityOf(req).id, work, () => callSignal(ctx, reply), sliceMs);
  if (r.ok) return r.value;
  if (r.reason === "aborted")
    throw new ApiError("ERR_SERVER_SHUTTING_DOWN", "the call was cancelled while waiting");
  throw new ApiError(
    "ERR_SERVER_BUSY",
    r.reason === "principal_full"
      ? "this principal has its share of decisions in flight; retry"
      : "the decision queue is full; retry",
    { headers: { "retry-after": "1" } },
  );
}

/**
 * Aborts when the client goes away or the shutdown grace period ends. The shutdown signal
 * stops following the call when its response closes (abortScope: not AbortSignal.any,
 * which leaves an entry per request with the long-lived shutdown signal).
 */
export function callSignal(ctx: RouteContext, reply: FastifyReply): AbortSignal {
  const scope = abortScope(ctx.shutdown);
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) scope.abort(new Error("client disconnected"));
    scope.release();
  });
  return scope.signal;
}
