// Runs across replicas (distributed mode, docs/distributed.md): the runtime's side of the
// shared runs registry (src/store-pg runs.ts). A run started here is registered with its
// principal and this replica as owner (a run the registry did not take is ended at once:
// fail closed); the owner renews the leases of its open runs and drops a run another
// replica adopted. Before a call names a run, `ensure` makes sure this replica may serve
// it: its own open run (while its leases are fresh: a replica that cannot renew stops
// serving before any other may adopt), ERR_RUN_ELSEWHERE (421, details: the owner) for a
// run another live replica owns, or the run adopted with its taint and admitted calls
// rebuilt from the journal when the owner's lease expired; then, for a principal with a
// rate limit, the call's rate slot is taken fleet-wide (src/store-pg fleet-rate.ts).
// Without `store` nothing changes.
import type { Session, SessionStore, StartRunOptions } from "../context/index.js";
import { ContextError, RuntimeError } from "../contracts/index.js";
import type { Journal } from "../journal/index.js";
import type { FleetRateLedger, PgRunRegistry } from "../store-pg/index.js";
import { RUN_ADOPTED_EVENT } from "./events.js";
import { journalInheritance } from "./run-taint.js";

export interface SharedRuns {
  /** Starts a run here and registers it (registry failure: the run is ended, the error thrown). */
  start(principalId: string, options: StartRunOptions | undefined): Promise<Session>;
  /**
   * Makes the run servable here (and takes the call's fleet-wide rate slot) or throws
   * ERR_RUN_ELSEWHERE / ERR_RUNTIME_STORE_UNAVAILABLE.
   */
  ensure(runId: string, principalId: string): Promise<void>;
  /**
   * `ensure` for an operator's route, which names a run without its principal: the run's
   * principal is looked up here or in the registry (nothing happens for an unknown run).
   */
  ensureAny(runId: string): Promise<void>;
  /** A run this replica evicted or ended: no replica serves or adopts it again. */
  gone(runId: string): void;
  stop(): void;
}

export interface SharedRunParts {
  registry: PgRunRegistry | undefined;
  sessions: SessionStore;
  journal: Pick<Journal, "append">;
  /** The rate slots other replicas took, read before each call of a rate-limited principal. */
  fleet: FleetRateLedger | undefined;
  clock: () => number;
}

export function sharedRuns(parts: SharedRunParts): SharedRuns {
  const { registry, sessions, journal, fleet, clock } = parts;
  if (registry === undefined) {
    return {
      async start(principalId, options) {
        const session = await sessions.startRun(principalId, options);
        await journalInheritance(journal, sessions, session);
        return session;
      },
      ensure: async () => undefined,
      ensureAny: async () => undefined,
      gone: () => undefined,
      stop: () => undefined,
    };
  }
  // The runs this replica registered or adopted: only they are renewed, so a run whose
  // registration is still in flight is never mistaken for one adopted elsewhere.
  const owned = new Set<string>();
  registry.start(
    () => sessions.openRunIds().filter((id) => owned.has(id)),
    (runId) => {
      owned.delete(runId);
      sessions.end(runId);
    },
  );
  return {
    async start(principalId, options) {
      const session = await sessions.startRun(principalId, options);
      try {
        await registry.register(session.runId, principalId, options?.parentRun);
        owned.add(session.runId);
      } catch (err) {
        sessions.end(session.runId);
        throw err;
      }
      await journalInheritance(journal, sessions, session);
      return session;
    },
    async ensure(runId, principalId) {
      await ensureRun(registry, { sessions, journal, owned }, runId, principalId);
      await fleet?.admit(principalId, clock());
    },
    async ensureAny(runId) {
      const principalId = sessions.get(runId)?.principalId ?? (await registry.principalOf(runId));
      if (principalId !== undefined)
        await ensureRun(registry, { sessions, journal, owned }, runId, principalId);
    },
    gone(runId) {
      owned.delete(runId);
      void registry.end(runId).catch(() => undefined);
    },
    stop: () => registry.stop(),
  };
}

/**
 * Renews this replica's leases at once (their periodic renewal is late): false when the
 * database does not answer; a run adopted elsewhere meanwhile is dropped here.
 */
async function renewNow(
  registry: PgRunRegistry,
  p: { sessions: SessionStore; owned: Set<string> },
): Promise<boolean> {
  const ids = p.sessions.openRunIds().filter((id) => p.owned.has(id));
  const kept = await registry.renew(ids).catch(() => undefined);
  if (kept === undefined) return false;
  for (const id of ids)
    if (!kept.has(id)) {
      p.owned.delete(id);
      p.sessions.end(id);
    }
  return true;
}

async function ensureRun(
  registry: PgRunRegistry,
  p: { sessions: SessionStore; journal: Pick<Journal, "append">; owned: Set<string> },
  runId: string,
  principalId: string,
): Promise<void> {
  const local = p.sessions.get(runId);
  // Another principal's: SessionStore.run answers ERR_RUN_UNKNOWN.
  if (local !== undefined && local.principalId !== principalId) return;
  if (local !== undefined && (registry.leaseFresh() || (await renewNow(registry, p)))) {
    if (p.sessions.get(runId) !== undefined) return;
  } else if (local !== undefined) {
    throw new RuntimeError(
      "ERR_RUNTIME_STORE_UNAVAILABLE",
      "this replica could not renew its run leases: it serves its runs again once it can",
    );
  }
  const where = await registry.locate(runId, principalId);
  if (where.kind === "elsewhere")
    throw new ContextError("ERR_RUN_ELSEWHERE", "the run is served by another replica", {
      details: { node: where.node },
    });
  if (where.kind !== "adopted" || p.sessions.get(runId) !== undefined) return;
  const r = where.run;
  // The principal's persisted state (quarantine) is in force before the adopted run serves.
  await p.sessions.principals.load(principalId);
  if (p.sessions.get(runId) !== undefined) return;
  try {
    p.sessions.adopt({
      runId,
      principalId,
      parentRun: r.parentRun,
      taint: r.taint,
      admitted: r.admitted,
    });
  } catch {
    return; // ended here before, or adopted meanwhile by a concurrent call: SessionStore.run decides
  }
  p.owned.add(runId);
  try {
    await p.journal.append({
      type: RUN_ADOPTED_EVENT,
      run_id: runId,
      body: {
        run_id: runId,
        principal_id: principalId,
        from_node: where.previousNode,
        node: registry.node,
        admitted: r.admitted,
        denied: r.denied,
        taint_labels: r.taint.length,
      },
    });
  } catch (err) {
    p.owned.delete(runId);
    p.sessions.end(runId); // an adoption the journal did not take is not served
    throw err;
  }
}
