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
import { type SharedQueueOptions, VerdictRows } from "./verdict-rows.js";
import type { PgListener } from "./watch.js";

export const DEFER_CHANNEL = "warden_deferred";

/** `local`: this replica's own queue (the holds, their order, bounds and timeouts). */
export type PgDeferOptions = SharedQueueOptions<DeferQueue>;

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
  readonly #o: PgDeferOptions;
  readonly #rows: VerdictRows<DeferredItem>;

  /** Shares `options.local`: every item it holds from now on is also a row. */
  constructor(pool: pg.Pool, options: PgDeferOptions) {
    this.#o = options;
    options.local.share(this); // first: a queue already shared throws before any timer starts
    this.#rows = new VerdictRows(pool, {
      table: "deferred",
      column: "item",
      channel: DEFER_CHANNEL,
      what: "deferred queue",
      node: options.node,
      parse: parseItem,
      apply: (id, verdict) => this.#apply(id, verdict),
      pollMs: options.pollMs,
      clock: options.clock ?? Date.now,
    });
  }

  /** Connects the notifications (the poll covers their absence). */
  listen(open: (onPayload: (id: string) => void) => Promise<PgListener>): Promise<void> {
    return this.#rows.listen(open);
  }

  /** DeferShare: the held item's row (a rejection cancels the hold). */
  stored(item: DeferredItem, timeoutMs: number): Promise<void> {
    return this.#rows.stored(item, item, timeoutMs);
  }

  /** DeferShare: the hold ended here; its row goes (once stored, if it ever was). */
  ended(id: string): void {
    this.#rows.ended(id);
  }

  /** Every replica's held items (this replica's own first, as its DeferQueue lists them). */
  list(): Promise<DeferredItem[]> {
    return this.#rows.list(new Map(this.#o.local.list().map((d) => [d.id, d])));
  }

  async find(id: string): Promise<DeferredItem | undefined> {
    return this.#o.local.list().find((d) => d.id === id) ?? (await this.#rows.load(id));
  }

  /** A verdict given on this replica for an item held on any replica. */
  async release(id: string, verdict: DeferVerdict): Promise<DecideResult> {
    const item = await this.find(id);
    if (item === undefined) return DEFER_NOT_FOUND;
    const checked = checkRelease(item, verdict.releaser, verdict.note);
    if (!checked.ok) return checked;
    if (!(await this.#rows.claim(id, verdict, verdict.releaser.id))) return DEFER_NOT_FOUND;
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

  close(): Promise<void> {
    return this.#rows.close();
  }

  #resolve(id: string, v: DeferVerdict): void {
    this.#o.local.resolve(id, { outcome: v.outcome, by: v.releaser.id, note: v.note });
  }

  /** Applies the verdict another replica stored for an item held here (checked again here). */
  #apply(id: string, text: string): void {
    const item = this.#o.local.list().find((d) => d.id === id);
    if (item === undefined) return;
    let verdict: DeferVerdict;
    try {
      verdict = StoredVerdict.parse(JSON.parse(text));
    } catch {
      return; // unreadable: never releases anything (the hold times out: deny)
    }
    if (checkRelease(item, verdict.releaser, verdict.note).ok) this.#resolve(id, verdict);
  }
}
