// Bounded inboxes: allowed messages wait here for their recipient, per recipient and in
// all bounded (a slot is reserved before the journal write, so concurrent sends cannot
// overfill it). Taking a message starts the recipient's run for it with the sender run's
// taint and classifications carried in (SessionStore.startRun `delegation`), and the new
// run's delegation depth is remembered so messages it sends in turn are one deeper.
// Fair shares (issue 37): one sender holds at most `maxPerSender` waiting messages in all
// inboxes and `maxPerSenderPerRecipient` in one, so a hostile sender can neither fill the
// shared pool nor a recipient's inbox against every other sender.
import type { SessionStore } from "../context/index.js";
import type { CrossAgentContext } from "./events.js";
import type { InboxStore } from "./inbox-store.js";
import type { SealedMessage } from "./wire.js";

export interface InboxOptions {
  /** Messages waiting for one recipient (default 256). */
  maxPerRecipient?: number;
  /** Messages waiting in all (default 10,000). */
  maxTotal?: number;
  /** Messages one sender has waiting in all inboxes (default: an eighth of maxTotal). */
  maxPerSender?: number;
  /** Messages one sender has waiting for one recipient (default: a quarter of maxPerRecipient). */
  maxPerSenderPerRecipient?: number;
  /** Where waiting messages persist (absent: memory only, lost on a restart). */
  store?: InboxStore;
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

const pairKey = (sender: string, recipient: string) => `${sender}\u0000${recipient}`;

export class Inbox {
  readonly #sessions: SessionStore;
  readonly #queues = new Map<string, Item[]>();
  readonly #reserved = new Map<string, number>();
  /** Delegation depth of the runs started for messages (pruned to open runs). */
  readonly #depths = new Map<string, number>();
  #total = 0;
  readonly #maxPer: number;
  readonly #maxTotal: number;
  readonly #maxPerSender: number;
  readonly #maxPerPair: number;
  /** Waiting or reserved messages per sender, and per sender→recipient pair. */
  readonly #bySender = new Map<string, number>();
  readonly #store: InboxStore | undefined;

  constructor(sessions: SessionStore, o: InboxOptions = {}) {
    this.#sessions = sessions;
    this.#maxPer = o.maxPerRecipient ?? 256;
    this.#maxTotal = o.maxTotal ?? 10_000;
    this.#maxPerSender = o.maxPerSender ?? Math.max(1, Math.ceil(this.#maxTotal / 8));
    this.#maxPerPair = o.maxPerSenderPerRecipient ?? Math.max(1, Math.ceil(this.#maxPer / 4));
    this.#store = o.store;
  }

  /** Loads the messages the store holds (at start, before anything is served). */
  async restore(): Promise<void> {
    for (const item of (await this.#store?.load()) ?? []) {
      const h = item.message.header;
      this.#total++;
      this.#count(h.sender, 1);
      this.#count(pairKey(h.sender, item.recipient), 1);
      const q = this.#queues.get(item.recipient);
      const stored = { message: item.message, context: item.context, seq: item.seq };
      if (q === undefined) this.#queues.set(item.recipient, [stored]);
      else q.push(stored);
    }
  }

  size(recipient: string): number {
    return this.#queues.get(recipient)?.length ?? 0;
  }

  /**
   * Takes a slot for `recipient` from `sender`: "full" when its inbox (or all inboxes) are
   * full, "share" when the sender holds its share (of all inboxes, or of this one).
   */
  reserve(recipient: string, sender: string): "ok" | "full" | "share" {
    const mine = this.size(recipient) + (this.#reserved.get(recipient) ?? 0);
    const pair = pairKey(sender, recipient);
    if (
      (this.#bySender.get(sender) ?? 0) >= this.#maxPerSender ||
      (this.#bySender.get(pair) ?? 0) >= this.#maxPerPair
    )
      return "share";
    if (mine >= this.#maxPer || this.#total >= this.#maxTotal) return "full";
    this.#reserved.set(recipient, (this.#reserved.get(recipient) ?? 0) + 1);
    this.#total++;
    this.#count(sender, 1);
    this.#count(pair, 1);
    return "ok";
  }

  #count(key: string, by: number): void {
    const n = (this.#bySender.get(key) ?? 0) + by;
    if (n > 0) this.#bySender.set(key, n);
    else this.#bySender.delete(key);
  }

  release(recipient: string, sender: string): void {
    this.#count(sender, -1);
    this.#count(pairKey(sender, recipient), -1);
    const n = (this.#reserved.get(recipient) ?? 1) - 1;
    if (n > 0) this.#reserved.set(recipient, n);
    else this.#reserved.delete(recipient);
    this.#total--;
  }

  /** Fills a reserved slot, once the store holds the message (a store failure rejects: release it). */
  async deliver(item: Item): Promise<void> {
    const to = item.message.header.recipient;
    await this.#store?.add({ recipient: to, message: item.message, context: item.context, seq: item.seq });
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
      // Its run has started: the message no longer waits. A delete the store refuses is not
      // retried: after a restart that message would be handed out (and a run started) again.
      await Promise.resolve(this.#store?.remove(recipient, item.message.header.message_id)).catch(
        () => undefined,
      );
      this.#total--;
      this.#count(item.message.header.sender, -1);
      this.#count(pairKey(item.message.header.sender, recipient), -1);
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
