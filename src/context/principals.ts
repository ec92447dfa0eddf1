// Principal-level protective state. Quarantine belongs to the agent, not to a run: a run
// id is cheap, so state kept per run is shed by starting another. A quarantine entered in
// any run of a principal covers all its runs, present and future, and is written to a
// `PrincipalStateStore` so it survives restarts (the integrator wires a journal/SQLite
// store; a PostgreSQL store shares it across replicas). Only an operator lifts it.
import { ContextError } from "../contracts/index.js";
import type { QuarantineTrigger } from "./chain.js";
import type { MaybePromise } from "./ledger.js";

/** What is persisted per principal. */
export interface PrincipalRecord {
  principalId: string;
  quarantine?: QuarantineTrigger & { runId: string };
  /**
   * The evidence a lift carries (an approver's signed early-lift record, src/runtime
   * apae-lift.ts): other replicas verify it before lifting their cached quarantine.
   */
  lift?: unknown;
}

/**
 * Persistence of principal state. Methods may be async (a database); the context keeps a
 * write-through cache, so a quarantine takes effect in memory before `save` resolves.
 */
export interface PrincipalStateStore {
  load(principalId: string): MaybePromise<PrincipalRecord | undefined>;
  save(record: PrincipalRecord): MaybePromise<void>;
  /** The records that hold a quarantine (at most `limit`), for the operators' listing. */
  listQuarantined?(limit: number): MaybePromise<PrincipalRecord[]>;
}

/** At most this many quarantines are listed at once. */
export const MAX_LISTED_QUARANTINES = 1000;

/** The in-process store: state survives a store reset, not a process restart. */
export class MemoryPrincipalStateStore implements PrincipalStateStore {
  readonly #records = new Map<string, PrincipalRecord>();

  load(principalId: string): PrincipalRecord | undefined {
    const r = this.#records.get(principalId);
    return r === undefined ? undefined : structuredClone(r);
  }

  save(record: PrincipalRecord): void {
    this.#records.set(record.principalId, structuredClone(record));
  }

  listQuarantined(limit: number): PrincipalRecord[] {
    return [...this.#records.values()]
      .filter((r) => r.quarantine !== undefined)
      .slice(0, limit)
      .map((r) => structuredClone(r));
  }
}

export interface PrincipalsOptions {
  store?: PrincipalStateStore;
  /** Called when persisting fails; the in-memory quarantine stays in force (fail closed). */
  onError?: (err: unknown, principalId: string) => void;
}

/** Write-through cache of principal records in front of a PrincipalStateStore. */
export class Principals {
  readonly #store: PrincipalStateStore;
  readonly #onError: (err: unknown, principalId: string) => void;
  readonly #cache = new Map<string, PrincipalRecord>();
  readonly #pending = new Set<Promise<void>>();

  constructor(opts: PrincipalsOptions = {}) {
    this.#store = opts.store ?? new MemoryPrincipalStateStore();
    this.#onError = opts.onError ?? (() => undefined);
  }

  /** Reads a principal's persisted state into the cache (before its runs are served). */
  async load(principalId: string): Promise<void> {
    const rec = await this.#store.load(principalId);
    const known = this.#cache.get(principalId);
    // A quarantine is never lifted by reading: the cache keeps one the store lacks.
    if (rec?.quarantine !== undefined && known?.quarantine === undefined)
      this.#cache.set(principalId, { principalId, quarantine: rec.quarantine });
  }

  quarantineOf(principalId: string): (QuarantineTrigger & { runId: string }) | undefined {
    return this.#cache.get(principalId)?.quarantine;
  }

  /**
   * Every quarantined principal: the store's records (every replica's in distributed mode)
   * and this cache's (one whose save is still pending or failed stays listed), by principal.
   */
  async listQuarantined(limit = MAX_LISTED_QUARANTINES): Promise<PrincipalRecord[]> {
    const out = new Map<string, PrincipalRecord>();
    for (const r of this.#cache.values()) if (r.quarantine !== undefined) out.set(r.principalId, r);
    for (const r of (await this.#store.listQuarantined?.(limit)) ?? [])
      if (!out.has(r.principalId)) out.set(r.principalId, r);
    return [...out.values()].slice(0, limit).map((r) => structuredClone(r));
  }

  /** Quarantines the principal (first trigger wins) and persists it. */
  quarantine(principalId: string, runId: string, trigger: QuarantineTrigger): void {
    if (this.#cache.get(principalId)?.quarantine !== undefined) return;
    const record: PrincipalRecord = { principalId, quarantine: { ...trigger, runId } };
    this.#cache.set(principalId, record);
    let saving: Promise<void>;
    try {
      saving = Promise.resolve(this.#store.save(record));
    } catch (err) {
      saving = Promise.reject(err);
    }
    const tracked = saving.catch((err: unknown) => this.#onError(err, principalId));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }

  /** Resolves once every quarantine so far is persisted (or reported to onError). */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  /** Whether a save is still in progress (`flush` would wait for it). */
  get saving(): boolean {
    return this.#pending.size > 0;
  }

  /**
   * Drops this replica's cached quarantine without writing: for a lift another replica saved,
   * which the caller has verified (src/runtime apae-lift.ts). Never called on a read alone.
   */
  forget(principalId: string): void {
    this.#cache.delete(principalId);
  }

  /** Lifts a principal's quarantine: an operator action, never an agent's (`evidence`: what authorised it). */
  async lift(principalId: string, evidence?: unknown): Promise<void> {
    if (principalId.length === 0) throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "empty principal");
    this.#cache.delete(principalId);
    await this.#store.save(evidence === undefined ? { principalId } : { principalId, lift: evidence });
  }
}
