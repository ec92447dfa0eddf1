// The deployment's trust table as a decision reads it: in memory (policy and the risk score
// read a principal's score without I/O), reloaded from the trust store row by row. With a
// node-local store only this runtime writes it, so reloading after its own changes is
// enough. In distributed mode the store is shared (PgTrustStore) and another replica may
// change a row: the shared store's watcher calls `reload` for every row written anywhere,
// and `resync` after its listener (re)connects and now and then. Every row that differs
// from the cached one is handed to `onChange` (apae.ts: a fall below the revocation floor,
// a quarantine entered or ended), marked `own` when this replica reloads after its own
// write; the handler is idempotent, so seeing its own change twice (its NOTIFY and its
// reload) is harmless. Every read is serialized, so a slow older read never overwrites a
// newer one: the cache only moves forward.
import type { Principals } from "../context/index.js";
import { isoTime } from "../contracts/index.js";
import type { TrustRow, TrustStore } from "../trust/index.js";

/** One row as this replica saw it before and as the store holds it now. */
export interface TableChange {
  before: TrustRow | undefined;
  after: TrustRow;
  /** Reloaded by this replica after its own write (its emissions are handled by the caller). */
  own: boolean;
}

function same(a: TrustRow | undefined, b: TrustRow): boolean {
  if (a === undefined) return false;
  for (const k of Object.keys(b) as (keyof TrustRow)[]) if (a[k] !== b[k]) return false;
  return true;
}

export class TrustTable {
  readonly #store: TrustStore;
  readonly #self: string;
  readonly #rows = new Map<string, TrustRow>();
  readonly #onChange: (c: TableChange) => Promise<void>;
  readonly #onError: (err: unknown) => void;
  #tail: Promise<void> = Promise.resolve();
  #resyncing = false;

  constructor(
    store: TrustStore,
    self: string,
    o: { onChange: (c: TableChange) => Promise<void>; onError: (err: unknown) => void },
  ) {
    this.#store = store;
    this.#self = self;
    this.#onChange = o.onChange;
    this.#onError = o.onError;
  }

  /** Loads every row of the deployment's table (at start; a failure stops the start). */
  async load(): Promise<void> {
    for (const r of await this.#store.list(this.#self)) this.#rows.set(r.subject, r);
  }

  get(subject: string): TrustRow | undefined {
    return this.#rows.get(subject);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(work);
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Rereads one row; `own`: after this replica's own write. */
  reload(truster: string, subject: string, own = false): Promise<void> {
    if (truster !== this.#self) return Promise.resolve();
    return this.#serial(async () => {
      const row = await this.#store.get(truster, subject);
      if (row !== undefined) await this.#adopt(row, own);
    });
  }

  /** Rereads the whole deployment table (a poll, or after the listener reconnected). */
  resync(): Promise<void> {
    if (this.#resyncing) return this.#tail;
    this.#resyncing = true;
    return this.#serial(async () => {
      try {
        for (const row of await this.#store.list(this.#self)) await this.#adopt(row, false);
      } finally {
        this.#resyncing = false;
      }
    });
  }

  async #adopt(row: TrustRow, own: boolean): Promise<void> {
    const before = this.#rows.get(row.subject);
    if (same(before, row)) return;
    this.#rows.set(row.subject, row);
    await this.#onChange({ before, after: row, own }).catch(this.#onError);
  }
}

const ZERO_COUNTERS = {
  proposed: 0,
  allowed: 0,
  denied: 0,
  deferred: 0,
  executed: 0,
  stepUps: 0,
  modified: 0,
} as const;

/** The trust tables every replica shares, and how this replica hears of their changes. */
export interface SharedTrust {
  store: TrustStore;
  watch(o: {
    onRow: (truster: string, subject: string) => void;
    onResync: () => void;
  }): Promise<{ close(): Promise<void> }>;
}

/** A revocation as the runtime's hooks take it (apae.ts TrustRevocation). */
export interface TableRevocation {
  subject: string;
  score: number;
  threshold: number;
  reason: string;
  at: number;
}

export interface TableActions {
  revocationFloor: number;
  principals: Pick<Principals, "quarantineOf" | "quarantine" | "lift">;
  /** Runs the revocation hooks (a fall below the floor this replica did not emit itself). */
  revoke(r: TableRevocation): Promise<void>;
  now(): number;
  /**
   * Releases a principal whose trust quarantine another replica ended (verified adoption of
   * a signed lift, or an expiry the shared state confirms); default: lift it here.
   */
  release?(subject: string): Promise<void>;
}

/**
 * What a changed row means here, whoever changed it (idempotent): a quarantine entered
 * under the floor (the row's quarantine count went up; a peer's quarantine notice does not
 * raise it and, as on the replica that received it, holds only new delegations) quarantines
 * the principal (first trigger wins, so this replica's own, richer trigger set by its caller
 * stands); a trust quarantine ended lifts the principal quarantine it
 * caused (never one a rule or an operator set); a fall below the revocation floor that
 * another replica decided runs this replica's revocation hooks (its tokens and delegated
 * chains issued up to now are void: over-revoking, never under).
 */
export async function actOnChange(c: TableChange, a: TableActions): Promise<void> {
  const { before, after } = c;
  const subject = after.subject;
  const floorQuarantine =
    after.status === "quarantined" && after.quarantineCount > (before?.quarantineCount ?? 0);
  if (floorQuarantine && a.principals.quarantineOf(subject) === undefined) {
    a.principals.quarantine(subject, "", {
      type: "trust_score",
      reason: "trust score below the quarantine floor",
      counters: { ...ZERO_COUNTERS },
      matchedEvents: [],
      at: isoTime(after.anchor),
    });
  }
  // This replica's own transitions are lifted by the code that made them (the expiry tick,
  // the signed early lift, after journaling it); another replica's are lifted here.
  if (
    !c.own &&
    before?.status === "quarantined" &&
    after.status === "active" &&
    a.principals.quarantineOf(subject)?.type === "trust_score"
  ) {
    await (a.release ? a.release(subject) : a.principals.lift(subject));
  }
  const was = before?.score ?? Number.POSITIVE_INFINITY;
  if (!c.own && was >= a.revocationFloor && after.score < a.revocationFloor) {
    const reason = "below the revocation floor (seen in the shared trust table)";
    await a.revoke({ subject, score: after.score, threshold: a.revocationFloor, reason, at: a.now() });
  }
}
