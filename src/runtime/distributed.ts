// Distributed mode's wiring at the composition root (docs/distributed.md): the approval
// queue and the deferred actions in PostgreSQL over this replica's own queues, and the rate ledger that counts a
// principal's calls per minute across replicas. Runs across replicas: shared-runs.ts.
import { type ContextConfig, MemoryBudgetLedger } from "../context/index.js";
import type { PrincipalId } from "../contracts/index.js";
import type { DeferQueue, InProcessApprovals } from "../gate/index.js";
import {
  APPROVAL_CHANNEL,
  CONSOLE_KEY_CHANNEL,
  DEFER_CHANNEL,
  FleetRateLedger,
  PgApprovalQueue,
  PgDeferQueue,
  type PgListener,
  type PgNode,
  type SharedQueueOptions,
} from "../store-pg/index.js";
import type { RuntimeConfig } from "./config.js";

interface SharedQueue {
  listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void>;
  close(): Promise<void>;
}

/** A queue in PostgreSQL over this replica's own, listening on `channel` (closed if it cannot). */
async function shared<L, Q extends SharedQueue>(
  node: PgNode | undefined,
  channel: string,
  options: Omit<SharedQueueOptions<L>, "node">,
  make: (pool: PgNode["pool"], options: SharedQueueOptions<L>) => Q,
): Promise<Q | undefined> {
  if (node === undefined) return undefined;
  const poll = node.approvalPollMs !== undefined ? { pollMs: node.approvalPollMs } : {};
  const q = make(node.pool, { ...options, node: node.node, ...poll });
  try {
    await q.listen((onPayload) => node.listen(channel, onPayload));
  } catch (err) {
    await q.close();
    throw err;
  }
  return q;
}

/** Distributed mode: the approval queue in PostgreSQL, over this replica's own queue. */
export function sharedApprovals(node: PgNode | undefined, local: InProcessApprovals, clock: () => number) {
  return shared(node, APPROVAL_CHANNEL, { local, clock }, (pool, o) => new PgApprovalQueue(pool, o));
}

/** Distributed mode: the deferred actions in PostgreSQL, over this replica's DeferQueue. */
export function sharedDeferrals(node: PgNode | undefined, local: DeferQueue, clock: () => number) {
  return shared(node, DEFER_CHANNEL, { local, clock }, (pool, o) => new PgDeferQueue(pool, o));
}

/** Distributed mode: the console's browser keys in PostgreSQL, and their change notifications. */
export function sharedConsoleKeys(node: PgNode | undefined) {
  if (node === undefined) return undefined;
  return {
    rows: node.consoleKeys,
    pollMs: node.approvalPollMs,
    async listen(onChange: () => void): Promise<void> {
      await node.listen(CONSOLE_KEY_CHANNEL, () => onChange());
    },
  };
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
