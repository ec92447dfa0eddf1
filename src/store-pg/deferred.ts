// The deferred actions shared by every replica (docs/distributed.md, "Step-up across
// replicas"). A deferred call (OATS §7.6) is held on the replica that decided it, by its
// DeferQueue (in-order release within a run, the bounds, the timeout), and the held item is
// also a row of `deferred`, so an operator on any replica lists it and answers it:
//   release = the verdict is checked on the answering replica (`checkRelease`: the approver
//             role, not the principal itself, a justification) and claimed by one statement,
//             `UPDATE … SET verdict WHERE verdict IS NULL AND expires_at > now`, which
//             NOTIFYs `warden_deferred` at COMMIT: one verdict per item, whichever replicas
//             answer at once;
//   apply   = the holder LISTENs; on the notification (or, when notifications are lost, its
//             poll every `pollMs`) it reads the verdict, checks it again itself and resolves
//             the item in its DeferQueue, whose Gate journals the resolution there, once.
// An item whose row could not be stored is cancelled (the Gate denies it: fail closed); a row
// is deleted once its item has its answer (or is cancelled), so it cannot be answered twice or
// late, even by a replica whose clock is behind; a dead replica's rows expire.
import type pg from "pg";
import { z } from "zod";
import {
  checkRelease,
  DEFER_NOT_FOUND,
  type DecideResult,
  type DeferQueue,
  type DeferredItem,
  type DeferredQueue,
  type DeferShare,
  type DeferVerdict,
} from "../gate/index.js";
import { storeError } from "./connect.js";
import type { PgListener } from "./watch.js";

export const DEFER_CHANNEL = "warden_deferred";

/** How often a replica deletes expired rows (those of replicas that died holding them). */
const PRUNE_MS = 60_000;
/** The most rows one listing returns. */
const LIST_LIMIT = 1000;

export interface PgDeferOptions {
  node: string;
  /** This replica's own queue: the holds, their order, bounds and timeouts. */
  local: DeferQueue;
  /** Catch-up period when notifications are lost (default 1 s). */
  pollMs?: number;
  clock?: () => number;
}

const StoredVerdict = z.strictObject({
  outcome: z.enum(["allow", "deny"]),
  releaser: z.strictObject({ id: z.string().min(1), roles: z.array(z.string()) }),
  note: z.string(),
});

const StoredItem = z.strictObject({
  id: z.string(),
  runId: z.string(),
  principalId: z.string().optional(),
  decisionId: z.string(),
  summary: z.strictObject({ toolClass: z.string(), action: z.string(), tool: z.string().optional() }),
  createdAt: z.string(),
  expiresAt: z.string(),
});

function parseItem(text: string): DeferredItem {
  return StoredItem.parse(JSON.parse(text)) as DeferredItem;
}

export class PgDeferQueue implements DeferShare {
  readonly #pool: pg.Pool;
  readonly #o: PgDeferOptions;
  readonly #clock: () => number;
  /** Held items whose row is being stored (resolves true once it is). */
  readonly #rows = new Map<string, Promise<boolean>>();
  /** Held items whose row is stored: the ones a notification may concern. */
  readonly #mine = new Set<string>();
  readonly #poll: NodeJS.Timeout;
  #listener: PgListener | undefined;
  #pruned = 0;

  /** Shares `options.local`: every item it holds from now on is also a row. */
  constructor(pool: pg.Pool, options: PgDeferOptions) {
    this.#pool = pool;
    this.#o = options;
    this.#clock = options.clock ?? Date.now;
    options.local.share(this);
    this.#poll = setInterval(() => void this.#catchUp(), options.pollMs ?? 1000);
    this.#poll.unref();
  }

  /** Connects the notifications (the poll covers their absence). */
  async listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void> {
    this.#listener = await open((id) => {
      if (this.#mine.has(id)) void this.#apply([id]).catch(() => undefined);
    });
  }

  /** DeferShare: the held item's row (a rejection cancels the hold). */
  stored(item: DeferredItem, timeoutMs: number): Promise<void> {
    const insert = this.#insert(item, timeoutMs);
    this.#rows.set(
      item.id,
      insert.then(
        () => {
          if (this.#rows.has(item.id)) this.#mine.add(item.id);
          return true;
        },
        () => false,
      ),
    );
    return insert;
  }

  /** DeferShare: the hold ended here; its row goes (once stored, if it ever was). */
  ended(id: string): void {
    const stored = this.#rows.get(id);
    this.#rows.delete(id);
    this.#mine.delete(id);
    void stored
      ?.then((ok) => (ok ? this.#pool.query("DELETE FROM deferred WHERE id = $1", [id]) : undefined))
      .catch(() => undefined);
  }

  /** Every replica's held items (this replica's own first, as its DeferQueue lists them). */
  async list(): Promise<DeferredItem[]> {
    const out = new Map(this.#o.local.list().map((d) => [d.id, d]));
    try {
      const r = await this.#pool.query<{ id: string; item: string }>(
        `SELECT id, item FROM deferred WHERE verdict IS NULL AND expires_at > $1 ORDER BY expires_at LIMIT ${LIST_LIMIT}`,
        [this.#clock()],
      );
      for (const row of r.rows) if (!out.has(row.id)) out.set(row.id, parseItem(row.item));
    } catch (err) {
      throw storeError("deferred queue", err);
    }
    return [...out.values()];
  }

  async find(id: string): Promise<DeferredItem | undefined> {
    return this.#o.local.list().find((d) => d.id === id) ?? (await this.#load(id));
  }

  /** A verdict given on this replica for an item held on any replica. */
  async release(id: string, verdict: DeferVerdict): Promise<DecideResult> {
    const item = await this.find(id);
    if (item === undefined) return DEFER_NOT_FOUND;
    const checked = checkRelease(item, verdict.releaser, verdict.note);
    if (!checked.ok) return checked;
    if (!(await this.#claim(id, verdict))) return DEFER_NOT_FOUND;
    // Held here: applied at once (the notification finds it resolved). Elsewhere: its holder applies it.
    if (this.#o.local.list().some((d) => d.id === id)) this.#resolve(id, verdict);
    return { ok: true };
  }

  /** The operators' queue: every replica's items, answered from here. */
  queue(): DeferredQueue {
    return {
      list: () => this.list(),
      find: (id) => this.find(id),
      release: (id, verdict) => this.release(id, verdict),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#poll);
    await this.#listener?.close();
  }

  async #insert(item: DeferredItem, timeoutMs: number): Promise<void> {
    await this.#pool.query(
      "INSERT INTO deferred (id, decision_id, run_id, principal_id, node, item, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [
        item.id,
        item.decisionId,
        item.runId,
        item.principalId ?? null,
        this.#o.node,
        JSON.stringify(item),
        this.#clock() + timeoutMs,
      ],
    );
  }

  async #load(id: string): Promise<DeferredItem | undefined> {
    try {
      const r = await this.#pool.query<{ item: string }>(
        "SELECT item FROM deferred WHERE id = $1 AND verdict IS NULL AND expires_at > $2",
        [id, this.#clock()],
      );
      const text = r.rows[0]?.item;
      return text === undefined ? undefined : parseItem(text);
    } catch (err) {
      throw storeError("deferred queue", err);
    }
  }

  /** The one verdict of an item: true when this call stored it. */
  async #claim(id: string, verdict: DeferVerdict): Promise<boolean> {
    try {
      const r = await this.#pool.query(
        "WITH claimed AS (UPDATE deferred SET verdict = $2, decided_by = $3, decided_at = $4 " +
          "WHERE id = $1 AND verdict IS NULL AND expires_at > $4 RETURNING id) " +
          `SELECT pg_notify('${DEFER_CHANNEL}', id) FROM claimed`,
        [id, JSON.stringify(verdict), verdict.releaser.id, this.#clock()],
      );
      return r.rowCount === 1;
    } catch (err) {
      throw storeError("deferred queue", err);
    }
  }

  #resolve(id: string, v: DeferVerdict): void {
    this.#o.local.resolve(id, { outcome: v.outcome, by: v.releaser.id, note: v.note });
  }

  /** Applies the verdicts other replicas stored for items held here (each checked again here). */
  async #apply(ids: string[]): Promise<void> {
    const r = await this.#pool.query<{ id: string; verdict: string }>(
      "SELECT id, verdict FROM deferred WHERE id = ANY($1::text[]) AND verdict IS NOT NULL",
      [ids],
    );
    for (const row of r.rows) {
      const item = this.#o.local.list().find((d) => d.id === row.id);
      if (item === undefined || !this.#mine.has(row.id)) continue;
      let verdict: DeferVerdict;
      try {
        verdict = StoredVerdict.parse(JSON.parse(row.verdict));
      } catch {
        continue; // unreadable: never releases anything (the hold times out: deny)
      }
      if (checkRelease(item, verdict.releaser, verdict.note).ok) this.#resolve(row.id, verdict);
    }
  }

  async #catchUp(): Promise<void> {
    const now = this.#clock();
    if (now - this.#pruned >= PRUNE_MS) {
      this.#pruned = now;
      // Rows of replicas that died holding them: past their expiry nobody can answer them.
      await this.#pool.query("DELETE FROM deferred WHERE expires_at <= $1", [now]).catch(() => undefined);
    }
    if (this.#mine.size === 0) return;
    await this.#apply([...this.#mine]).catch(() => undefined);
  }
}
