// Bounded inboxes: allowed messages wait here for their recipient, per recipient and in
// all bounded (a slot is reserved before the journal write, so concurrent sends cannot
// overfill it). Taking a message starts the recipient's run for it with the sender run's
// taint and classifications carried in (SessionStore.startRun `delegation`), and the new
// run's delegation depth is remembered so messages it sends in turn are one deeper.
import type { SessionStore } from "../context/index.js";
import type { CrossAgentContext } from "./events.js";
import type { SealedMessage } from "./wire.js";

export interface InboxOptions {
  /** Messages waiting for one recipient (default 256). */
  maxPerRecipient?: number;
  /** Messages waiting in all (default 10,000). */
  maxTotal?: number;
}

interface Item {
  message: SealedMessage;
  context: CrossAgentContext;
  seq: number;
}

/** A message handed to its recipient, with the run started for it. */
export interface Delivered extends Item {
  runId: string;
}

export class Inbox {
  readonly #sessions: SessionStore;
  readonly #queues = new Map<string, Item[]>();
  readonly #reserved = new Map<string, number>();
  /** Delegation depth of the runs started for messages (pruned to open runs). */
  readonly #depths = new Map<string, number>();
  #total = 0;
  readonly #maxPer: number;
  readonly #maxTotal: number;

  constructor(sessions: SessionStore, o: InboxOptions = {}) {
    this.#sessions = sessions;
    this.#maxPer = o.maxPerRecipient ?? 256;
    this.#maxTotal = o.maxTotal ?? 10_000;
  }

  size(recipient: string): number {
    return this.#queues.get(recipient)?.length ?? 0;
  }

  /** Takes a slot for `recipient`; false when its inbox (or all inboxes) are full. */
  reserve(recipient: string): boolean {
    const mine = this.size(recipient) + (this.#reserved.get(recipient) ?? 0);
    if (mine >= this.#maxPer || this.#total >= this.#maxTotal) return false;
    this.#reserved.set(recipient, (this.#reserved.get(recipient) ?? 0) + 1);
    this.#total++;
    return true;
  }

  release(recipient: string): void {
    const n = (this.#reserved.get(recipient) ?? 1) - 1;
    if (n > 0) this.#reserved.set(recipient, n);
    else this.#reserved.delete(recipient);
    this.#total--;
  }

  /** Fills a reserved slot. */
  deliver(item: Item): void {
    const to = item.message.header.recipient;
    const n = (this.#reserved.get(to) ?? 1) - 1;
    if (n > 0) this.#reserved.set(to, n);
    else this.#reserved.delete(to);
    const q = this.#queues.get(to);
    if (q === undefined) this.#queues.set(to, [item]);
    else q.push(item);
  }

  async take(recipient: string, limit: number): Promise<Delivered[]> {
    const q = this.#queues.get(recipient);
    const out: Delivered[] = [];
    while (q !== undefined && q.length > 0 && out.length < limit) {
      const item = q[0]!;
      const c = item.context;
      // A run the recipient cannot start (its run cap) leaves the message waiting.
      let session: Awaited<ReturnType<SessionStore["startRun"]>>;
      try {
        session = await this.#sessions.startRun(recipient, {
          delegation: { fromRun: c.parent_run, taint: c.taint, classifications: c.classifications },
        });
      } catch (err) {
        if (out.length > 0) break;
        throw err;
      }
      q.shift();
      this.#total--;
      this.#remember(session.runId, c.depth);
      out.push({ ...item, runId: session.runId });
    }
    if (q !== undefined && q.length === 0) this.#queues.delete(recipient);
    return out;
  }

  depthOf(runId: string): number | undefined {
    return this.#depths.get(runId);
  }

  #remember(runId: string, depth: number): void {
    if (this.#depths.size >= this.#maxTotal) {
      for (const id of this.#depths.keys()) if (this.#sessions.get(id) === undefined) this.#depths.delete(id);
    }
    this.#depths.set(runId, depth);
  }
}
