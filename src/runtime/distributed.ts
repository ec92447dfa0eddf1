// Distributed mode's wiring at the composition root (docs/distributed.md): the approval
// queue and the deferred actions in PostgreSQL over this replica's own queues, and the rate ledger that counts a
// principal's calls per minute across replicas. Runs across replicas: shared-runs.ts.
import { type ContextConfig, MemoryBudgetLedger } from "../context/index.js";
import type { PrincipalId } from "../contracts/index.js";
import type { DeferQueue, InProcessApprovals } from "../gate/index.js";
import {
  APPROVAL_CHANNEL,
  DEFER_CHANNEL,
  FleetRateLedger,
  PgApprovalQueue,
  PgDeferQueue,
  type PgNode,
} from "../store-pg/index.js";
import type { RuntimeConfig } from "./config.js";

/** Distributed mode: the approval queue in PostgreSQL, over this replica's own queue. */
export async function sharedApprovals(
  node: PgNode | undefined,
  local: InProcessApprovals,
  clock: () => number,
): Promise<PgApprovalQueue | undefined> {
  if (node === undefined) return undefined;
  const q = new PgApprovalQueue(node.pool, {
    node: node.node,
    local,
    clock,
    ...(node.approvalPollMs !== undefined ? { pollMs: node.approvalPollMs } : {}),
  });
  await q.listen((onPayload) => node.listen(APPROVAL_CHANNEL, onPayload));
  return q;
}

/** Distributed mode: the deferred actions in PostgreSQL, over this replica's DeferQueue. */
export async function sharedDeferrals(
  node: PgNode | undefined,
  local: DeferQueue,
  clock: () => number,
): Promise<PgDeferQueue | undefined> {
  if (node === undefined) return undefined;
  const q = new PgDeferQueue(node.pool, {
    node: node.node,
    local,
    clock,
    ...(node.approvalPollMs !== undefined ? { pollMs: node.approvalPollMs } : {}),
  });
  try {
    await q.listen((onPayload) => node.listen(DEFER_CHANNEL, onPayload));
  } catch (err) {
    await q.close();
    throw err;
  }
  return q;
}

/**
 * Distributed mode: the principal's calls per minute counted across replicas (src/store-pg
 * fleet-rate.ts) for the principals that have a rate limit; the budgets stay in memory,
 * exact, because a run is decided by its owner only.
 */
export function fleetRate(config: RuntimeConfig, context: ContextConfig, node: PgNode | undefined) {
  if (node === undefined) return undefined;
  const principals = config.gate.principals;
  const r = context.rateLimits;
  // The Session's own order: the principal's override, then the context's per-principal
  // limit, then its default (src/context session.ts #rateLimit).
  const limitOf = (id: string): number | undefined =>
    (typeof principals === "function" ? principals(id as PrincipalId) : principals[id])?.maxCallsPerMinute ??
    r.perPrincipal[id] ??
    r.maxCallsPerMinute;
  const inner = new MemoryBudgetLedger({ ttlMs: context.limits.reservationTtlMs });
  return new FleetRateLedger(inner, node.pool, { node: node.node, limitOf });
}
