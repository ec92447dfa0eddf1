// The runs registry shared by every replica (docs/distributed.md, "Runs across replicas"):
// each run's principal binding and owner node, held by a lease the owner renews. A run
// is served by its owner only; another replica answers ERR_RUN_ELSEWHERE (HTTP 421,
// details: the owner) while the lease is live, and adopts the run once it expired (the
// owner died or lost the database): one transaction locks the run's row, takes the lease
// (`epoch` + 1) and rebuilds the run's protective state from the run's journal entries
// (taint seen, calls admitted), fail closed: every decision that may have run counts
// against the budget. A foreign principal's, an ended or an unknown run id are one answer
// ("unknown"), so run ids cannot be probed on any replica.
//
// The owner stops serving before its lease can expire anywhere: it serves only while its
// last renewal (taken at t0 on its own clock) is younger than `leaseMs - marginMs`, and
// another replica adopts only when `lease_until = t0 + leaseMs` is past on its clock. Safe
// while the replicas' clocks agree within `marginMs` (run NTP).
import type pg from "pg";
import { mergeTaint } from "../context/index.js";
import { GATE_DECISION, GATE_RESULT, RuntimeError, TaintLabel } from "../contracts/index.js";
import { storeError } from "./connect.js";

export interface RunRegistryOptions {
  /** This replica's name (the journal's `node`). */
  node: string;
  /** How long a renewal keeps a run this replica's. Default 20 s. */
  leaseMs?: number;
  /** Clock disagreement tolerated between replicas; the owner stops serving this much early. Default 5 s. */
  marginMs?: number;
  clock?: () => number;
}

/** What an adopting replica rebuilds from the run's journal entries. */
export interface RebuiltRun {
  runId: string;
  principalId: string;
  parentRun: string | undefined;
  /** Every taint label the run's decisions and results recorded. */
  taint: TaintLabel[];
  /** Decisions that may have run (allow, modify, step_up, defer): counted against the budget. */
  admitted: number;
  /** Denied decisions of the run. */
  denied: number;
}

export type RunLocation =
  | { kind: "unknown" }
  | { kind: "elsewhere"; node: string }
  | { kind: "adopted"; run: RebuiltRun; previousNode: string };

/** The runs a journal batch acts for, with the epoch this replica holds each at (journal-append.ts). */
export interface RunFence {
  node: string;
  runs: string[];
  epochs: number[];
}

/** A run this replica lost: its epoch here never matches a row again (epochs start at 1). */
const LOST = 0;

interface RunRow {
  principal_id: string;
  node: string;
  lease_until: string;
  ended: boolean;
  parent_run: string | null;
  epoch: number;
}

const MAY_HAVE_RUN = new Set(["allow", "modify", "step_up", "defer"]);

export class PgRunRegistry {
  readonly #pool: pg.Pool;
  readonly node: string;
  readonly leaseMs: number;
  readonly marginMs: number;
  readonly #clock: () => number;
  /** When this replica's last successful renewal started (its own clock); 0: never. */
  #renewedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /**
   * The ownership epoch this replica holds each of its runs at (registered: 1; adopted: the
   * epoch its adoption wrote; lost: 0). Every journal batch that acts for one of these runs
   * is fenced with it: it commits only if the run's row still names this node at that epoch.
   */
  readonly #epochs = new Map<string, number>();

  constructor(pool: pg.Pool, options: RunRegistryOptions) {
    this.#pool = pool;
    this.node = options.node;
    this.leaseMs = options.leaseMs ?? 20_000;
    this.marginMs = options.marginMs ?? 5_000;
    this.#clock = options.clock ?? Date.now;
    if (!(this.leaseMs > 0) || !(this.marginMs >= 0) || this.marginMs * 2 >= this.leaseMs)
      throw new RangeError("run lease: leaseMs > 0 and 0 <= marginMs < leaseMs / 2");
  }

  /** Whether this replica's leases are fresh enough to serve its runs now. */
  leaseFresh(now = this.#clock()): boolean {
    return now - this.#renewedAt < this.leaseMs - this.marginMs;
  }

  /** Records a new run as this replica's. */
  async register(runId: string, principalId: string, parentRun?: string): Promise<void> {
    const now = this.#clock();
    try {
      await this.#pool.query(
        "INSERT INTO runs (run_id, principal_id, node, lease_until, parent_run, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        [runId, principalId, this.node, now + this.leaseMs, parentRun ?? null, now],
      );
    } catch (err) {
      throw storeError("run registry", err);
    }
    this.#epochs.set(runId, 1);
    if (this.#renewedAt === 0) this.#renewedAt = now;
  }

  /**
   * Renews the lease of this replica's open runs; resolves with the ids it still owns
   * (a run missing from the answer was adopted elsewhere or ended: drop it).
   */
  async renew(runIds: readonly string[]): Promise<Set<string>> {
    const t0 = this.#clock();
    try {
      const r = await this.#pool.query<{ run_id: string }>(
        "UPDATE runs SET lease_until = $3 WHERE node = $1 AND run_id = ANY($2::text[]) AND NOT ended RETURNING run_id",
        [this.node, runIds, t0 + this.leaseMs],
      );
      this.#renewedAt = Math.max(this.#renewedAt, t0);
      const kept = new Set(r.rows.map((row) => row.run_id));
      for (const id of runIds) if (!kept.has(id) && this.#epochs.has(id)) this.#epochs.set(id, LOST);
      return kept;
    } catch (err) {
      throw storeError("run registry", err);
    }
  }

  /** Renews every `leaseMs / 4` until `stop()`; `onLost` gets each run another replica took. */
  start(openRuns: () => string[], onLost: (runId: string) => void): void {
    if (this.#timer !== undefined) return;
    const tick = async () => {
      const ids = openRuns();
      const kept = await this.renew(ids).catch(() => undefined);
      if (kept === undefined) return; // stale leases stop this replica serving (leaseFresh)
      for (const id of ids) if (!kept.has(id)) onLost(id);
    };
    this.#timer = setInterval(() => void tick(), Math.max(50, Math.floor(this.leaseMs / 4)));
    this.#timer.unref();
    void tick();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * The fence of a journal batch: the runs among `runIds` this replica registered or adopted,
   * each with its epoch here (a lost run's never matches). Undefined when none is one.
   */
  fence(runIds: Iterable<string>): RunFence | undefined {
    const runs: string[] = [];
    const epochs: number[] = [];
    for (const id of new Set(runIds)) {
      const epoch = this.#epochs.get(id);
      if (epoch === undefined) continue;
      runs.push(id);
      epochs.push(epoch);
    }
    return runs.length === 0 ? undefined : { node: this.node, runs, epochs };
  }

  /** Runs a fenced append found taken by another replica: never journaled for here again. */
  lost(runIds: Iterable<string>): void {
    for (const id of runIds) if (this.#epochs.has(id)) this.#epochs.set(id, LOST);
  }

  /** Marks a run ended: no replica serves or adopts it again. */
  async end(runId: string): Promise<void> {
    try {
      await this.#pool.query("UPDATE runs SET ended = true WHERE run_id = $1 AND node = $2", [
        runId,
        this.node,
      ]);
      this.#epochs.delete(runId); // an ended run is adopted nowhere: its later entries need no fence
    } catch (err) {
      throw storeError("run registry", err);
    }
  }

  /** The principal an open (not ended) run is bound to, or undefined (operators' routes locate runs by id). */
  async principalOf(runId: string): Promise<string | undefined> {
    try {
      const r = await this.#pool.query<{ principal_id: string }>(
        "SELECT principal_id FROM runs WHERE run_id = $1 AND NOT ended",
        [runId],
      );
      return r.rows[0]?.principal_id;
    } catch (err) {
      throw storeError("run registry", err);
    }
  }

  /**
   * Where a run this replica does not hold lives, for this principal; adopts it when its
   * owner's lease expired (or the owner is this replica, restarted). No row lock is held
   * across a round trip: the row is read, then taken by ONE conditional UPDATE (the epoch
   * read must still be the row's: of two adopters one wins), and the run's journal entries
   * are read after that COMMIT. A fenced append of the previous owner either committed
   * before the UPDATE (it held the row FOR SHARE; the rebuild sees it) or can never commit.
   */
  async locate(runId: string, principalId: string): Promise<RunLocation> {
    try {
      const r = await this.#pool.query<RunRow>(
        "SELECT principal_id, node, lease_until, ended, parent_run, epoch FROM runs WHERE run_id = $1",
        [runId],
      );
      const row = r.rows[0];
      if (row === undefined || row.ended || row.principal_id !== principalId) return { kind: "unknown" };
      const now = this.#clock();
      if (row.node !== this.node && Number(row.lease_until) >= now)
        return { kind: "elsewhere", node: row.node };
      const id = { runId, principalId, parentRun: row.parent_run ?? undefined };
      await rebuild(this.#pool, id); // an unreadable entry refuses before the run is taken
      const taken = await this.#pool.query<{ epoch: number }>(
        "UPDATE runs SET node = $2, lease_until = $3, epoch = epoch + 1 WHERE run_id = $1 AND epoch = $4 AND NOT ended RETURNING epoch",
        [runId, this.node, now + this.leaseMs, row.epoch],
      );
      const epoch = taken.rows[0]?.epoch;
      if (epoch === undefined) return this.locate(runId, principalId); // another replica took it first
      this.#epochs.set(runId, epoch);
      const run = await rebuild(this.#pool, id);
      return { kind: "adopted", run, previousNode: row.node };
    } catch (err) {
      throw storeError("run registry", err);
    }
  }
}

/** The run's protective state from its journal entries (fail closed: an unreadable entry refuses). */
async function rebuild(
  c: pg.Pool | pg.ClientBase,
  id: { runId: string; principalId: string; parentRun: string | undefined },
): Promise<RebuiltRun> {
  const r = await c.query<{ type: string; body: string }>(
    "SELECT type, body FROM journal_entries WHERE run_id = $1 AND type = ANY($2::text[]) ORDER BY time, chain, seq",
    [id.runId, [GATE_DECISION, GATE_RESULT]],
  );
  const taints: TaintLabel[][] = [];
  let admitted = 0;
  let denied = 0;
  for (const row of r.rows) {
    const body = parseBody(row.body, id.runId);
    taints.push(body.taint);
    if (row.type !== GATE_DECISION) continue;
    if (typeof body.decision === "string" && MAY_HAVE_RUN.has(body.decision)) admitted++;
    else denied++;
  }
  return { ...id, taint: mergeTaint(...taints), admitted, denied };
}

function parseBody(text: string, runId: string): { taint: TaintLabel[]; decision?: unknown } {
  try {
    const body = JSON.parse(text) as { taint?: unknown; decision?: unknown };
    return { taint: TaintLabel.array().parse(body.taint ?? []), decision: body.decision };
  } catch (err) {
    throw new RuntimeError("ERR_RUNTIME_STATE_CORRUPT", `a journal entry of run ${runId} is unreadable`, {
      cause: err,
    });
  }
}
