// The journal's writer: group commit, and (entry signatures with signing workers)
// signing ahead of the commit. Queued appends are committed together in one store
// transaction, which reads the head inside its write lock and refuses any entry
// that does not extend it; an append resolves after its transaction is durable.
//
// Signing is the dominant cost, and a signature covers the hash, never the other
// way round: hashes chain sequentially and cheaply, signatures are independent.
// With signing workers, appends are therefore chained in chunks on the predicted
// head (the tail of what is in flight) as soon as they queue, and signed on the
// workers while the main thread validates more appends and commits earlier chunks.
// A chunk is committed only if the head read in the transaction is the one it was
// chained on; if another writer got there first, the batch is re-chained and
// sealed inside the transaction, and every later chunk is chained again.
//
// Without workers (or with a sealer other than per-entry Ed25519) the batch is
// chained and sealed inside its transaction: in batch mode that is one Merkle
// root signature per transaction, cheaper than handing the batch to a thread.
import { isoTime } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import { CryptoPool } from "./crypto-pool.js";
import type { JournalEntry, SealedEntry } from "./entry.js";
import { type Chained, chain, entrySealer, type Sealer, type Tip, tipOf, type Unchained } from "./sealer.js";
import type { JournalStore } from "./store.js";

interface Pending extends Unchained {
  resolve: (e: JournalEntry) => void;
  reject: (err: unknown) => void;
}

/** Appends handed to the signing workers together (about 2.5 ms of signing). */
const CHUNK = 64;
/** Below this, with nothing in flight, a batch is signed inside its transaction. */
const SMALL_BATCH = 16;
/**
 * Event-loop turns a commit waits while each turn brings more appends (no timer: a
 * lone append, or a burst that stopped growing, commits on the next turn). Requests
 * that arrive over a few turns — a sidecar's connections — share one fsync.
 */
const GATHER_TURNS = 8;

/** Chunk of appends chained on a predicted head, signed by the workers. */
interface Chunk {
  items: Pending[];
  /** Hash of the entry the chunk is chained after (null: the empty journal). */
  after: string | null;
  /** The entries with their signatures, once the workers are done (null if signing failed). */
  sealed: SealedEntry[] | null;
  /** Signing is over (sealed or failed). */
  done: boolean;
  /** Settles when signing is over; never rejects. */
  ready: Promise<void>;
}

export interface GroupCommitOptions {
  store: JournalStore;
  sealer: Sealer;
  signer: KeyPair;
  maxBatch: number;
  /** Worker threads signing ahead of the commit (per-entry Ed25519 sealing only). */
  workers: number;
  now: () => Date;
  /** The head the first batch is predicted to extend. */
  tip: Tip | null;
}

export class GroupCommit {
  readonly #store: JournalStore;
  readonly #sealer: Sealer;
  readonly #maxBatch: number;
  readonly #chunkSize: number;
  readonly #now: () => Date;
  readonly #pool: CryptoPool | null;
  #signer: KeyPair;
  /** Appends not chained yet, in order; they follow every chunk. */
  #queue: Pending[] = [];
  /** Appends chained on a predicted head and being signed by the workers, in order. */
  #chunks: Chunk[] = [];
  #chunked = 0;
  /** The head the next chunk is chained on: the tail of #chunks, or the last head committed; undefined when unknown. */
  #tip: Tip | null | undefined;
  /** Queued rotations: nothing after one is chained before it commits (its key signs what follows). */
  #rotations = 0;
  #draining: Promise<void> | null = null;

  constructor(o: GroupCommitOptions) {
    this.#store = o.store;
    this.#sealer = o.sealer;
    this.#signer = o.signer;
    this.#maxBatch = o.maxBatch;
    this.#chunkSize = Math.min(CHUNK, o.maxBatch);
    this.#now = o.now;
    this.#tip = o.tip;
    // The workers sign Ed25519 over each entry's text: only the per-entry sealer does that.
    this.#pool = o.sealer === entrySealer && o.workers > 0 ? new CryptoPool(o.workers) : null;
    this.#pool?.setSigner(o.signer.privateKey);
  }

  /** The key signing the next entry. */
  get signer(): KeyPair {
    return this.#signer;
  }

  /** Queues a prepared append; resolves with its entry once it is durable. */
  enqueue(u: Unchained): Promise<JournalEntry> {
    return new Promise<JournalEntry>((resolve, reject) => {
      this.#queue.push({ ...u, resolve, reject });
      if (u.rotateTo !== undefined) this.#rotations++;
      // Hand full chunks to the signing workers right away, so they sign while this
      // thread is still validating the rest of a burst.
      if (this.#queue.length >= this.#chunkSize) this.#speculate(this.#chunkSize);
      if (this.#draining === null) {
        // setImmediate, not a microtask: appends issued in the same turn join the batch.
        this.#draining = new Promise<void>((done) =>
          this.#gather(0, this.#queue.length, () => void this.#drain().finally(done)),
        );
      }
    });
  }

  /** Starts the drain once a turn passes without new appends (or after GATHER_TURNS, or a full batch). */
  #gather(turns: number, seen: number, start: () => void): void {
    setImmediate(() => {
      const n = this.#queue.length;
      if (n > seen && n < this.#maxBatch && turns < GATHER_TURNS) this.#gather(turns + 1, n, start);
      else start();
    });
  }

  /** Waits until every queued append is settled, then stops the workers. */
  async close(): Promise<void> {
    while (this.#draining !== null) await this.#draining;
    await this.#pool?.close();
  }

  #chain(tip: Tip | null, items: readonly Unchained[]): Chained {
    return chain(tip, items, {
      signer: this.#signer,
      perEntry: this.#sealer.perEntry,
      time: isoTime(this.#now()),
    });
  }

  /**
   * Chains queued appends (full chunks, or any remainder when `min` is 1) on the
   * predicted head — the tail of the chunks already in flight, or the last head
   * committed — and sends them to the signing workers. The prediction is only a
   * guess: #commit uses a chunk only if the head read inside the write transaction
   * is the one it was chained on.
   */
  #speculate(min: number): void {
    const pool = this.#pool;
    if (pool === null) return;
    while (
      this.#rotations === 0 &&
      this.#tip !== undefined &&
      this.#queue.length >= min &&
      this.#chunked < 2 * this.#maxBatch
    ) {
      const tip = this.#tip;
      // The chain wants another key: leave it to the transaction, which refuses it.
      if (tip !== null && tip.nextKey !== this.#signer.keyId) return;
      const items = this.#queue.splice(0, this.#chunkSize);
      let chained: Chained;
      try {
        chained = this.#chain(tip, items);
      } catch {
        // (A clock that returns an invalid date.) Left to the transaction, which
        // chains the same appends and rejects them with the error.
        this.#queue = items.concat(this.#queue);
        return;
      }
      const chunk: Chunk = {
        items,
        after: tip?.hash ?? null,
        sealed: null,
        done: false,
        ready: Promise.resolve(),
      };
      chunk.ready = pool.signTexts(chained.texts).then(
        (sigs) => {
          chained.sealed.forEach((s, i) => {
            s.entry.signature = sigs[i]!;
          });
          chunk.sealed = chained.sealed;
          chunk.done = true;
        },
        () => {
          // Left unsealed: the transaction re-chains and signs it on this thread.
          chunk.done = true;
        },
      );
      this.#chunks.push(chunk);
      this.#chunked += items.length;
      this.#tip = chained.tip;
    }
  }

  /** Puts every chunk in flight back in front of the queue (its predicted head was wrong). */
  #unchain(): void {
    if (this.#chunks.length === 0) return;
    this.#queue = this.#chunks.flatMap((c) => c.items).concat(this.#queue);
    this.#chunks = [];
    this.#chunked = 0;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#chunks.length > 0 || this.#queue.length > 0) {
        // A lone append is signed inside its transaction: a worker round trip would only add latency.
        if (this.#pool !== null && (this.#chunks.length > 0 || this.#queue.length >= SMALL_BATCH)) {
          if (this.#tip === undefined && this.#rotations === 0) {
            try {
              this.#tip = tipOf(await this.#store.last());
            } catch {
              // Unknown head: the queue is chained inside the transaction, which reads it.
            }
          }
          this.#speculate(1);
        }
        if (this.#chunks.length === 0) {
          await this.#commit(this.#queue.splice(0, this.#maxBatch), null);
        } else {
          await this.#commitSigned();
        }
      }
    } finally {
      this.#draining = null;
    }
  }

  /**
   * Group commit of signed chunks: waits until a full batch is signed or nothing
   * more is being signed. Each transaction costs an fsync on this thread, and
   * committing chunk by chunk as they come in makes the fsyncs, not the
   * signatures, the limit; a batch waits at most for one batch's worth of signing.
   */
  async #commitSigned(): Promise<void> {
    let take: number;
    let n: number;
    for (;;) {
      take = 0;
      n = 0;
      for (; take < this.#chunks.length; take++) {
        const c = this.#chunks[take]!;
        if (!c.done || n + c.items.length > this.#maxBatch) break;
        n += c.items.length;
      }
      const next = this.#chunks[take];
      if (next === undefined || next.done) break;
      this.#speculate(1);
      await next.ready;
    }
    const group = this.#chunks.splice(0, take);
    this.#chunked -= n;
    const first = group[0]!;
    const sealed = group.every((c) => c.sealed !== null) ? group.flatMap((c) => c.sealed!) : null;
    await this.#commit(
      group.length === 1 ? first.items : group.flatMap((c) => c.items),
      sealed === null ? null : { after: first.after, sealed },
    );
  }

  /**
   * Commits one batch in one store transaction. `pre` (signed by the workers) is
   * used only if its predicted head is the head read inside the transaction;
   * otherwise the batch is chained to that head and sealed there, on this thread.
   */
  async #commit(
    batch: Pending[],
    pre: { after: string | null; sealed: SealedEntry[] } | null,
  ): Promise<void> {
    let signerAfter = this.#signer;
    let rechained = false;
    let retry: Pending[] = [];
    // Nothing may be chained on a guess while a batch is chained inside the transaction.
    if (pre === null) this.#tip = undefined;
    try {
      const entries = await this.#store.appendBatch((last) => {
        if (pre !== null && (last?.hash ?? null) === pre.after) return pre.sealed;
        rechained = true;
        const chained = this.#chain(tipOf(last), batch);
        signerAfter = chained.signer;
        return this.#sealer.seal(chained);
      });
      if (signerAfter !== this.#signer) {
        this.#signer = signerAfter;
        this.#pool?.setSigner(signerAfter.privateKey);
      }
      if (rechained) {
        // Chunks chained after this batch assumed another head.
        this.#unchain();
        this.#tip = tipOf(entries.at(-1) ?? null);
      }
      batch.forEach((p, i) => {
        p.resolve(entries[i]!);
      });
    } catch (err) {
      this.#unchain();
      this.#tip = undefined;
      retry = survivorsOf(err, batch);
      for (const p of batch) if (!retry.includes(p)) p.reject(err);
    } finally {
      for (const p of batch) if (p.rotateTo !== undefined && !retry.includes(p)) this.#rotations--;
    }
    // A fenced batch (ERR_JOURNAL_FENCED, distributed mode) stored nothing: only the entries of
    // the runs this replica lost fail; the others are chained again and committed without them.
    if (retry.length > 0) await this.#commit(retry, null);
  }
}

/** The appends of a fenced batch that act for runs still this replica's (none for any other failure). */
function survivorsOf(err: unknown, batch: readonly Pending[]): Pending[] {
  const runs = (err as { code?: unknown; details?: { runs?: unknown } } | null)?.details?.runs;
  if ((err as { code?: unknown } | null)?.code !== "ERR_JOURNAL_FENCED" || !Array.isArray(runs)) return [];
  const lost = new Set(runs);
  const keep = batch.filter((p) => p.run_id === null || !lost.has(p.run_id));
  // Nothing of the batch named a lost run: retrying it would be fenced again.
  return keep.length === batch.length ? [] : keep;
}
