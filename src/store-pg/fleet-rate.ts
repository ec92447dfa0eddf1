// A principal's rate limit across replicas (docs/distributed.md, consistency model). The
// session store decides synchronously on its in-memory ledger (a budget of N is exact
// because reserve runs before any await); a principal's calls per minute, though, are
// spread over every replica its runs live on. So before a rate-limited principal's call is
// decided, `admit` (awaited at the edge) takes its slot in PostgreSQL in one statement
// (a function of migration 8): lock the principal's `principal_rate` row, count the slots of the last minute on every
// replica, and insert this call's slot (with this node) only when under the limit. The
// count of the other replicas' slots (or, when the limit is reached, the limit itself) is
// then what this ledger adds to the in-memory count, so the Gate's synchronous check
// refuses exactly what the fleet-wide count refused, and the refusal is journaled as any
// `rate_limited` denial. Linearizable per principal (the row lock), for calls through the
// HTTP edge; an in-process call that skips `admit` counts this replica's slots only.
import type pg from "pg";
import type {
  Reservation,
  ReserveOutcome,
  ReserveRequest,
  RunUsage,
  Settlement,
  SyncBudgetLedger,
} from "../context/index.js";
import { storeError } from "./connect.js";

const WINDOW_MS = 60_000;

export class FleetRateLedger implements SyncBudgetLedger {
  readonly #inner: SyncBudgetLedger;
  readonly #pool: pg.Pool;
  readonly #node: string;
  /** Other replicas' slot times per principal, as last read (pruned to the window on read). */
  readonly #remote = new Map<string, number[]>();
  /** The principal's calls per minute (undefined: unlimited, nothing shared). */
  readonly #limitOf: (principalId: string) => number | undefined;

  constructor(
    inner: SyncBudgetLedger,
    pool: pg.Pool,
    options: { node: string; limitOf: (principalId: string) => number | undefined },
  ) {
    this.#inner = inner;
    this.#pool = pool;
    this.#node = options.node;
    this.#limitOf = options.limitOf;
  }

  /** Takes the call's slot fleet-wide, or records that the principal's limit is reached. */
  async admit(principalId: string, now: number): Promise<void> {
    const limit = this.#limitOf(principalId);
    if (limit === undefined) return;
    try {
      // ONE statement (migration 8's warden_rate_admit): the principal's row is locked only
      // while it runs on the server, never across a client round trip (a paused replica
      // cannot stall the fleet's calls for this principal).
      const r = await this.#pool.query<{ admitted: boolean; others: string[] | null }>(
        "SELECT admitted, others FROM warden_rate_admit($1, $2, $3, $4, $5)",
        [principalId, now, WINDOW_MS, limit, this.#node],
      );
      const row = r.rows[0];
      const others =
        row === undefined || !row.admitted
          ? Array.from({ length: limit }, () => now)
          : (row.others ?? []).map((at) => Number(at));
      this.#remote.set(principalId, others);
    } catch (err) {
      throw storeError("rate slots", err);
    }
  }

  #remoteCount(principalId: string, now: number): number {
    const times = this.#remote.get(principalId);
    if (times === undefined) return 0;
    const live = times.filter((t) => t > now - WINDOW_MS);
    if (live.length === 0) this.#remote.delete(principalId);
    else this.#remote.set(principalId, live);
    return live.length;
  }

  reserve(req: ReserveRequest): ReserveOutcome {
    if (req.ratePerMinute === undefined) return this.#inner.reserve(req);
    const remote = this.#remoteCount(req.principalId, req.now);
    return this.#inner.reserve({ ...req, ratePerMinute: Math.max(0, req.ratePerMinute - remote) });
  }

  commit(reservation: Reservation, now?: number): Settlement {
    return this.#inner.commit(reservation, now);
  }

  release(reservation: Reservation, now?: number): Settlement {
    return this.#inner.release(reservation, now);
  }

  renew(reservation: Reservation, now: number): Reservation | undefined {
    return this.#inner.renew(reservation, now);
  }

  usage(runId: string, now?: number): RunUsage {
    return this.#inner.usage(runId, now);
  }

  rateUsed(principalId: string, now: number): number {
    return this.#inner.rateUsed(principalId, now) + this.#remoteCount(principalId, now);
  }

  forgetRun(runId: string): void {
    this.#inner.forgetRun(runId);
  }
}
