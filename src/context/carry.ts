// Taint at the principal (issue 37 finding 1). A run id is cheap, so taint kept only per
// run is shed by opening another run: with `taint.carry: principal` (the default) a new
// run of a principal starts with the taint every run of that principal held while active
// within `taint.carryWindowMs`, whether or not the caller names a `parentRun`. What is
// carried is written through a `PrincipalTaintStore` (SQLite beside the principal state,
// PostgreSQL in distributed mode) so it survives a restart and reaches every replica.
// One entry per (principal, taint source): the latest label of that source, the run that
// held it and when it was last active — bounded by the number of taint sources, and
// never dropped inside the window. Only an operator starts a run without it (`clean`).
import { RuntimeError, TaintLabel, type TaintSource } from "../contracts/index.js";
import type { MaybePromise } from "./ledger.js";
import { mergeTaint } from "./taint.js";

/** One carried label: the run that held it and when that run was last active with it. */
export interface CarriedTaint {
  runId: string;
  label: TaintLabel;
  /** Milliseconds since the epoch. */
  at: number;
}

/** Where carried taint is persisted. Methods may be async (a database). */
export interface PrincipalTaintStore {
  /** The principal's carried labels last active at or after `since`. */
  load(principalId: string, since: number): MaybePromise<CarriedTaint[]>;
  /** Records labels of one of the principal's runs (one entry per source; a later `at` wins). */
  save(principalId: string, entries: readonly CarriedTaint[]): MaybePromise<void>;
}

/** A stored row (SQLite, PostgreSQL) read back: one that does not parse is a coded fault, never "no taint". */
export function parseCarried(
  principalId: string,
  row: { run_id: unknown; label: unknown; at: unknown },
): CarriedTaint {
  let value: unknown;
  try {
    value = typeof row.label === "string" ? JSON.parse(row.label) : undefined;
  } catch {
    value = undefined;
  }
  const label = TaintLabel.safeParse(value);
  const at = Number(row.at);
  if (!label.success || typeof row.run_id !== "string" || !Number.isFinite(at))
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `carried taint of ${principalId} is unreadable`);
  return { runId: row.run_id, label: label.data, at };
}

/** The in-process store: carried taint survives a store reset, not a process restart. */
export class MemoryPrincipalTaintStore implements PrincipalTaintStore {
  readonly #rows = new Map<string, Map<TaintSource, CarriedTaint>>();

  load(principalId: string, since: number): CarriedTaint[] {
    const rows = this.#rows.get(principalId);
    if (rows === undefined) return [];
    return [...rows.values()].filter((r) => r.at >= since).map((r) => structuredClone(r));
  }

  save(principalId: string, entries: readonly CarriedTaint[]): void {
    let rows = this.#rows.get(principalId);
    if (rows === undefined) {
      rows = new Map();
      this.#rows.set(principalId, rows);
    }
    for (const e of entries) {
      const known = rows.get(e.label.source);
      if (known === undefined || known.at <= e.at) rows.set(e.label.source, structuredClone(e));
    }
  }
}

/** What a new run inherits from its principal: the labels and the runs they came from. */
export interface Inheritance {
  labels: TaintLabel[];
  from: string[];
}

/** A run the carry can read: its principal, id and every label seen so far. */
export interface CarrySource {
  readonly runId: string;
  readonly principalId: string;
  taintSeen(): TaintLabel[];
  /** Whether the run has seen any label (without copying them: asked on every call). */
  readonly tainted: boolean;
}

export interface TaintCarryOptions {
  store?: PrincipalTaintStore | undefined;
  windowMs: number;
  /** Told when persisting fails (the local runs still carry their taint in memory). */
  onError?: ((err: unknown, principalId: string) => void) | undefined;
}

/** Entries of a run's labels, one per source (the first label of each source). */
export function carriedEntries(runId: string, labels: readonly TaintLabel[], at: number): CarriedTaint[] {
  const bySource = new Map<TaintSource, CarriedTaint>();
  for (const label of labels)
    if (!bySource.has(label.source)) bySource.set(label.source, { runId, label: { ...label }, at });
  return [...bySource.values()];
}

export class TaintCarry {
  readonly store: PrincipalTaintStore;
  readonly windowMs: number;
  readonly #onError: (err: unknown, principalId: string) => void;
  /** Per run: when its labels were last written, so activity refreshes them rarely. */
  readonly #written = new Map<string, number>();
  readonly #pending = new Set<Promise<void>>();
  /** Entries this process loaded or wrote, per principal: what a synchronous open carries. */
  readonly #known = new MemoryPrincipalTaintStore();

  constructor(o: TaintCarryOptions) {
    this.store = o.store ?? new MemoryPrincipalTaintStore();
    this.windowMs = o.windowMs;
    this.#onError = o.onError ?? (() => undefined);
  }

  /** The taint a new run of `principalId` starts with: persisted entries and open local runs. */
  async inherit(principalId: string, now: number, open: Iterable<CarrySource>): Promise<Inheritance> {
    const stored = await this.store.load(principalId, now - this.windowMs);
    this.#known.save(principalId, stored);
    return this.inheritKnown(principalId, now, open);
  }

  /** `inherit` from what this process knows (open runs, entries loaded or written): synchronous. */
  inheritKnown(principalId: string, now: number, open: Iterable<CarrySource>): Inheritance {
    const local: CarriedTaint[] = [];
    for (const run of open)
      if (run.principalId === principalId) local.push(...carriedEntries(run.runId, run.taintSeen(), now));
    const all = [...this.#known.load(principalId, now - this.windowMs), ...local];
    return {
      labels: mergeTaint(all.map((e) => e.label)),
      from: [...new Set(all.map((e) => e.runId))],
    };
  }

  /**
   * A run's labels, written when `force`d (a new source in the run, the run retiring) or on
   * activity when the last write is older than a quarter of the window (the run is still
   * active, so what it carries must not age out while it lives).
   */
  touch(run: CarrySource, now: number, force = false): void {
    if (!run.tainted) return; // nothing to carry (and no copy of nothing on every call)
    const known = this.#written.get(run.runId);
    if (!force && known !== undefined && now - known < this.windowMs / 4) return;
    const labels = run.taintSeen();
    if (labels.length === 0) return;
    this.#written.set(run.runId, now);
    const entries = carriedEntries(run.runId, labels, now);
    this.#known.save(run.principalId, entries);
    this.#save(run.principalId, entries);
  }

  /** A retired run: its last activity is written (it ages out with the window); the bookkeeping goes. */
  retire(run: CarrySource, now: number): void {
    this.touch(run, now, true);
    this.#written.delete(run.runId);
  }

  /** Resolves once every write so far is persisted (or reported to onError). */
  async flush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  #save(principalId: string, entries: CarriedTaint[]): void {
    let saving: Promise<void>;
    try {
      saving = Promise.resolve(this.store.save(principalId, entries));
    } catch (err) {
      saving = Promise.reject(err);
    }
    const tracked = saving.catch((err: unknown) => this.#onError(err, principalId));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }
}
