// All runs of one Gate. Runs are created by the runtime (`startRun`) with a server-chosen,
// unguessable id bound to the authenticated principal; `run(runId, principalId)` serves
// only the owner and answers ERR_RUN_UNKNOWN alike for unknown, ended, evicted and foreign
// runs (so one principal cannot probe another's run ids). Protective state outlives runs:
// quarantine lives with the principal (Principals, persisted), rate-limit slots with the
// principal in the ledger, and taint with the principal too (carry.ts, `taint.carry:
// principal`, the default): a new run starts with the taint of the principal's runs active
// within the window; `parentRun` names a run whose taint is carried in under either mode.
// Memory is bounded: open runs per principal and in all, idle eviction (reported through
// `onEvict` for the journal), and a bounded memory of retired runs.

import { ContextError, GateRequest, type TaintLabel, uuidv4 } from "../contracts/index.js";
import type { BudgetLimits } from "./budgets.js";
import { type Inheritance, type PrincipalTaintStore, TaintCarry } from "./carry.js";
import { type ContextConfig, type ContextConfigInput, parseContextConfig } from "./config.js";
import { type BudgetLedger, MemoryBudgetLedger, type SyncBudgetLedger } from "./ledger.js";
import { type PrincipalStateStore, Principals } from "./principals.js";
import { Session } from "./session.js";

export interface EvictedRun {
  runId: string;
  principalId: string;
  /** When the run was last active (ms since the epoch). */
  lastActive: number;
  at: number;
}

export interface SessionStoreOptions {
  /** Milliseconds since the epoch; injectable for tests. Default Date.now. */
  clock?: () => number;
  /** Where principal quarantine is persisted. Default: in memory. */
  principalStore?: PrincipalStateStore;
  /** The budget ledger. Default: in memory, with `limits.reservationTtlMs`. */
  ledger?: SyncBudgetLedger;
  /** Told of every evicted run, so the Gate can journal it. */
  onEvict?: (run: EvictedRun) => void;
  /** Told when persisting principal state fails (the in-memory state stays in force). */
  onError?: (err: unknown, principalId: string) => void;
  /** Where taint carried at the principal is persisted (`taint.carry: principal`). Default: in memory. */
  taintStore?: PrincipalTaintStore;
}

export interface StartRunOptions {
  /** A run of the same principal whose taint the new run carries in. */
  parentRun?: string;
  originalRequest?: string;
  now?: number;
  /**
   * A delegation from another principal's run (src/messaging, OATS §10.4): its taint and
   * data classifications are carried in, and `parentRun` in the facts names that run.
   * Only the runtime sets this, from a message the communication gate delivered.
   */
  delegation?: { fromRun: string; taint: readonly TaintLabel[]; classifications: readonly string[] };
  /** This run's OATS §9.2 budgets; each can only lower the configured one (src/context/budgets.ts). */
  budgets?: Partial<BudgetLimits>;
  /**
   * Start without the taint carried at the principal: an operator's act (an operator-only
   * route sets it, never an agent's request). A named `parentRun` still carries its taint.
   */
  clean?: boolean;
}

/** A run adopted from another replica, its state rebuilt from the journal (SessionStore.adopt). */
export interface AdoptedRun {
  runId: string;
  principalId: string;
  parentRun?: string | undefined;
  taint: readonly TaintLabel[];
  /** Calls that may have run: counted against the run's tool-call budget. */
  admitted: number;
}

interface Retired {
  principalId: string;
  taint: TaintLabel[];
}

interface Open {
  session: Session;
  lastActive: number;
}

export class SessionStore {
  readonly config: ContextConfig;
  readonly principals: Principals;
  readonly #ledger: SyncBudgetLedger;
  readonly #clock: () => number;
  readonly #onEvict: (run: EvictedRun) => void;
  /** Open runs in order of last activity, oldest first (a touch re-inserts). */
  readonly #open = new Map<string, Open>();
  readonly #perPrincipal = new Map<string, number>();
  /** Ended and evicted runs: never served again; their owner and taint serve parentRun. */
  readonly #retired = new Map<string, Retired>();
  /** Taint at the principal; undefined with `taint.carry: explicit`. */
  readonly carry: TaintCarry | undefined;

  constructor(config: ContextConfigInput | ContextConfig = {}, opts: SessionStoreOptions = {}) {
    this.config = parseContextConfig(config);
    this.#clock = opts.clock ?? Date.now;
    this.#onEvict = opts.onEvict ?? (() => undefined);
    this.#ledger = opts.ledger ?? new MemoryBudgetLedger({ ttlMs: this.config.limits.reservationTtlMs });
    this.principals = new Principals({
      ...(opts.principalStore !== undefined ? { store: opts.principalStore } : {}),
      ...(opts.onError !== undefined ? { onError: opts.onError } : {}),
    });
    this.carry =
      this.config.taint.carry === "principal"
        ? new TaintCarry({
            store: opts.taintStore,
            windowMs: this.config.taint.carryWindowMs,
            onError: opts.onError,
          })
        : undefined;
  }

  /** The budget ledger shared by the store's runs. */
  get ledger(): BudgetLedger {
    return this.#ledger;
  }

  /** Runs currently open (bounded by `limits.maxOpenRuns`). */
  get openRuns(): number {
    return this.#open.size;
  }

  /** Retired runs remembered (bounded by `limits.retiredRunsRemembered`). */
  get retiredRuns(): number {
    return this.#retired.size;
  }

  /**
   * Starts a run for an authenticated principal: loads its persisted state, enforces the
   * run caps, and returns the session under a fresh server-generated id.
   */
  async startRun(principalId: string, opts: StartRunOptions = {}): Promise<Session> {
    const parsed = GateRequest.pick({ principalId: true, originalRequest: true }).safeParse({
      principalId,
      originalRequest: opts.originalRequest,
    });
    if (!parsed.success)
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "invalid principal or original request");
    await this.principals.load(principalId);
    const now = opts.now ?? this.#clock();
    let inheritedTaint: TaintLabel[] | undefined;
    if (opts.parentRun !== undefined) inheritedTaint = this.#lineage(opts.parentRun, principalId);
    const d = opts.delegation;
    if (d !== undefined) inheritedTaint = [...(inheritedTaint ?? []), ...structuredClone(d.taint)];
    const carried =
      this.carry === undefined || opts.clean === true
        ? undefined
        : await this.carry.inherit(principalId, now, this.#openSessions());
    if (carried !== undefined && carried.labels.length > 0)
      inheritedTaint = [...(inheritedTaint ?? []), ...carried.labels];
    return this.#create(
      {
        runId: uuidv4(),
        principalId,
        originalRequest: opts.originalRequest,
        parentRun: opts.parentRun ?? d?.fromRun,
        ...(d !== undefined ? { inheritedClassifications: [...d.classifications] } : {}),
        ...(opts.budgets !== undefined ? { budgets: opts.budgets } : {}),
        ...(carried !== undefined && carried.from.length > 0 ? { inheritedFrom: carried.from } : {}),
      },
      now,
      inheritedTaint,
    );
  }

  /** What a new run of the principal would carry in now (from this process's knowledge). */
  carriedFor(principalId: string, now?: number): Inheritance | undefined {
    return this.carry?.inheritKnown(principalId, now ?? this.#clock(), this.#openSessions());
  }

  *#openSessions(): Iterable<Session> {
    for (const o of this.#open.values()) yield o.session;
  }

  /** The owner's open run; ERR_RUN_UNKNOWN for unknown, ended, evicted or another principal's. */
  run(runId: string, principalId: string): Session {
    const open = this.#open.get(runId);
    if (open === undefined || open.session.principalId !== principalId) {
      throw new ContextError("ERR_RUN_UNKNOWN", "no such run for this principal");
    }
    return open.session;
  }

  /**
   * Legacy: the session of a caller-named run, opened on first use bound to its principal
   * and original request. Later requests cannot rebind either. Quarantine and rate limits
   * hold across such runs (they live with the principal); budgets and taint do not, so
   * new entry points use startRun.
   */
  open(request: Pick<GateRequest, "runId" | "principalId" | "originalRequest">, now?: number): Session {
    const existing = this.#open.get(request.runId);
    if (existing !== undefined) return existing.session;
    if (this.#retired.has(request.runId)) {
      throw new ContextError("ERR_CONTEXT_SESSION_CLOSED", "the run has ended", {
        details: { runId: request.runId },
      });
    }
    const parsed = GateRequest.pick({ runId: true, principalId: true, originalRequest: true }).safeParse(
      request,
    );
    if (!parsed.success)
      throw new ContextError("ERR_CONTEXT_INPUT_INVALID", "invalid run id, principal or original request");
    const at = now ?? this.#clock();
    // Caller-named runs carry the principal's taint too (what this process knows of it).
    const carried = this.carriedFor(parsed.data.principalId, at);
    return this.#create(
      {
        ...parsed.data,
        ...(carried !== undefined && carried.from.length > 0 ? { inheritedFrom: carried.from } : {}),
      },
      at,
      carried !== undefined && carried.labels.length > 0 ? carried.labels : undefined,
    );
  }

  /**
   * Distributed mode: opens, under its existing id, a run another replica owned and this
   * one adopted (src/store-pg runs.ts), with the protective state rebuilt from the run's
   * journal: its taint carried in, and `admitted` calls counted against its budget before
   * it serves (fail closed). A run this store ended or already holds is refused.
   */
  adopt(run: AdoptedRun, now?: number): Session {
    if (this.#open.has(run.runId) || this.#retired.has(run.runId))
      throw new ContextError("ERR_RUN_UNKNOWN", "no such run for this principal");
    const at = now ?? this.#clock();
    const session = this.#create(
      { runId: run.runId, principalId: run.principalId, parentRun: run.parentRun },
      at,
      structuredClone([...run.taint]),
    );
    const limit = this.config.budgets.toolCalls;
    const count = Math.min(run.admitted, limit ?? run.admitted);
    for (let i = 0; i < count; i++) {
      const held = this.#ledger.reserve({
        runId: run.runId,
        principalId: run.principalId,
        now: at,
        takeRateSlot: false,
      });
      if (held.ok) this.#ledger.commit(held.reservation, at);
    }
    return session;
  }

  /** Ids of the open runs (distributed mode renews their leases). */
  openRunIds(): string[] {
    return [...this.#open.keys()];
  }

  get(runId: string): Session | undefined {
    return this.#open.get(runId)?.session;
  }

  /** Ends a run: its session is dropped and the run id cannot be opened again. */
  end(runId: string): void {
    const open = this.#open.get(runId);
    if (open !== undefined) this.#retire(open.session);
    else this.#remember(runId, { principalId: "", taint: [] });
  }

  /** Evicts runs idle for `limits.idleMs` at `now`; each is reported to onEvict and returned. */
  sweep(now?: number): EvictedRun[] {
    const at = now ?? this.#clock();
    const evicted: EvictedRun[] = [];
    for (const [runId, open] of this.#open) {
      if (at - open.lastActive < this.config.limits.idleMs) break;
      // A run with a call waiting on a human is not idle: keep it, look again later.
      if (this.#ledger.usage(runId, at).held > 0) {
        this.#touch(open.session, at);
        continue;
      }
      this.#retire(open.session);
      const run = { runId, principalId: open.session.principalId, lastActive: open.lastActive, at };
      evicted.push(run);
      this.#onEvict(run);
    }
    return evicted;
  }

  #create(
    init: {
      runId: string;
      principalId: string;
      originalRequest?: string | undefined;
      parentRun?: string | undefined;
      inheritedClassifications?: string[];
      budgets?: Partial<BudgetLimits>;
      inheritedFrom?: string[];
    },
    now: number,
    inheritedTaint: TaintLabel[] | undefined,
  ): Session {
    const limits = this.config.limits;
    this.sweep(now);
    const mine = this.#perPrincipal.get(init.principalId) ?? 0;
    if (mine >= limits.maxOpenRunsPerPrincipal || this.#open.size >= limits.maxOpenRuns) {
      throw new ContextError("ERR_RUN_LIMIT", "too many open runs; end one or wait for idle runs to expire", {
        details: {
          limit: mine >= limits.maxOpenRunsPerPrincipal ? limits.maxOpenRunsPerPrincipal : limits.maxOpenRuns,
        },
      });
    }
    const session = new Session(
      { ...init, now, inheritedTaint },
      {
        config: this.config,
        clock: this.#clock,
        ledger: this.#ledger,
        principals: this.principals,
        onActivity: (s, at) => this.#touch(s, at),
        ...(this.carry !== undefined
          ? { onTaint: (s: Session, at: number) => this.carry?.touch(s, at, true) }
          : {}),
      },
    );
    this.#open.set(init.runId, { session, lastActive: now });
    this.#perPrincipal.set(init.principalId, mine + 1);
    this.carry?.touch(session, now, true);
    return session;
  }

  /** The taint a child run of `parentRun` carries in; the parent must be the principal's own. */
  #lineage(parentRun: string, principalId: string): TaintLabel[] {
    const open = this.#open.get(parentRun);
    if (open !== undefined && open.session.principalId === principalId) return open.session.taintSeen();
    const retired = this.#retired.get(parentRun);
    if (retired !== undefined && retired.principalId === principalId) return structuredClone(retired.taint);
    throw new ContextError("ERR_RUN_UNKNOWN", "no such parent run for this principal");
  }

  #touch(session: Session, at: number): void {
    const open = this.#open.get(session.runId);
    if (open === undefined || open.session !== session) return;
    // Re-inserting moves the run to the end of the activity order: O(1).
    this.#open.delete(session.runId);
    open.lastActive = Math.max(open.lastActive, at);
    this.#open.set(session.runId, open);
    this.carry?.touch(session, at);
  }

  #retire(session: Session): void {
    session.close();
    this.#open.delete(session.runId);
    const n = (this.#perPrincipal.get(session.principalId) ?? 1) - 1;
    if (n <= 0) this.#perPrincipal.delete(session.principalId);
    else this.#perPrincipal.set(session.principalId, n);
    this.#remember(session.runId, { principalId: session.principalId, taint: session.taintSeen() });
    this.#ledger.forgetRun(session.runId);
    this.carry?.retire(session, this.#clock());
  }

  #remember(runId: string, retired: Retired): void {
    this.#retired.set(runId, retired);
    const cap = this.config.limits.retiredRunsRemembered;
    while (this.#retired.size > cap) {
      const oldest = this.#retired.keys().next().value;
      if (oldest === undefined) break;
      this.#retired.delete(oldest);
    }
  }
}

export function createSessionStore(
  config?: ContextConfigInput | ContextConfig,
  opts?: SessionStoreOptions,
): SessionStore {
  return new SessionStore(config, opts);
}
