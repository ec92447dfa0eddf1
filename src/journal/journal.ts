// The journal writer. append() validates, masks and canonicalizes the body at
// once (so bad input is rejected before it queues), then queues it; queued
// appends are committed together (group commit) in one store transaction, which
// reads the head inside its write lock and refuses any entry that does not extend
// it. An append resolves after its transaction is durable.
//
// Signing is the dominant cost, and a signature covers the hash, never the other
// way round: hashes chain sequentially and cheaply, signatures are independent.
// With signing workers, appends are therefore chained in chunks on the predicted
// head (the tail of what is in flight) as soon as they queue, and signed on the
// workers while this thread validates more appends and commits earlier chunks.
// A chunk is committed only if the head read in the transaction is the one it was
// chained on; if another writer got there first, the batch is re-chained and
// signed inside the transaction, and every later chunk is chained again.
//
// In batch signature mode there is one signature per transaction instead: the
// batch is chained inside the transaction, a Merkle tree is built over its entry
// hashes and its root signed on this thread (merkle.ts); each entry carries that
// signature and its inclusion proof. No workers are needed: one signature per
// batch costs less than handing the batch to a thread.
import { sign as nodeSign } from "node:crypto";
import { canonicalJson, JournalError, type Sha256Hash, TRACE_ID_PATTERN } from "../contracts/index.js";
import { type KeyPair, keyTypeOf } from "../crypto/index.js";
import { CryptoPool } from "./crypto-pool.js";
import {
  EVENT_TYPE_PATTERN,
  entryHash,
  GENESIS_HASH,
  hashAndSignedText,
  type JournalEntry,
  type JournalHead,
  RUN_ID_PATTERN,
  type SealedEntry,
} from "./entry.js";
import { defaultEventTypes, type EventTypeRegistry, KEY_ROTATED } from "./event-types.js";
import { batchMessage, buildTree, formatBatchSignature, MAX_BATCH_SIZE } from "./merkle.js";
import { CREDENTIAL_HINT, prepareBody } from "./prepare.js";
import { type Redaction, redactCredentials } from "./redact.js";
import { applySensitive, type SensitiveMark } from "./sensitive.js";
import type { JournalStore } from "./store.js";

export interface AppendInput {
  type: string;
  run_id?: string | null;
  trace_id?: string | null;
  body: Record<string, unknown>;
  /** Members to keep out of the entry, replaced by their hash and a reference. */
  sensitive?: readonly SensitiveMark[];
}

export interface OpenJournalOptions {
  store: JournalStore;
  /** The Ed25519 key that signs new entries; must be the chain's current key. */
  signer: KeyPair;
  /** Body schemas (default: the process-wide registry with the built-in types). */
  registry?: EventTypeRegistry;
  /** Accept types the registry does not know (their bodies must still be JSON objects). Default false. */
  allowUnknownTypes?: boolean;
  /** Largest number of appends committed in one transaction (default 512; at most 4096 in batch mode). */
  maxBatch?: number;
  /**
   * How entries are signed. "entry" (default): one Ed25519 signature per entry.
   * "batch": one Ed25519 signature per committed batch over the Merkle root of its
   * entry hashes; each entry carries it with its inclusion proof and stays
   * verifiable on its own (docs/journal.md §1). The verifier accepts both, also
   * mixed in one chain, so a journal may switch modes between opens.
   */
  signatureMode?: "entry" | "batch";
  /**
   * Entry mode only (batch mode signs once per batch on this thread and starts no
   * workers). Worker threads that sign in parallel (default 0: sign on this thread). Appends
   * are chained on the predicted head and signed while earlier ones commit; a
   * batch is committed only if its predicted head is still the head inside the
   * write transaction, otherwise it is re-chained and signed inside it.
   */
  signingWorkers?: number;
  /** Clock for entry times (tests). */
  now?: () => Date;
  /** Called with the places credentials were masked in an appended body. */
  onRedaction?: (type: string, redactions: Redaction[]) => void;
}

interface Pending {
  type: string;
  run_id: string | null;
  trace_id: string | null;
  body: Record<string, unknown>;
  bodyJson: string;
  /** Key rotation: the key that signs every entry after this one. */
  rotateTo?: KeyPair | undefined;
  resolve: (e: JournalEntry) => void;
  reject: (err: unknown) => void;
}

/** Appends handed to the signing workers together (about 2.5 ms of signing). */
const CHUNK = 64;
/** Below this, with nothing in flight, a batch is signed inside its transaction. */
const SMALL_BATCH = 16;

/** What chaining needs of a head: its seq, its hash and the key that must sign next. */
interface Tip {
  seq: number;
  hash: Sha256Hash;
  nextKey: string;
}

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

interface Chained {
  sealed: SealedEntry[];
  /** The text each entry's signature covers (entry mode; empty strings in batch mode). */
  texts: string[];
  keys: KeyPair[];
  /** The key that signs after the batch. */
  signer: KeyPair;
  tip: Tip;
}

const tipOf = (last: JournalEntry | null): Tip | null =>
  last === null ? null : { seq: last.seq, hash: last.hash, nextKey: nextKeyId(last)! };

/** The key that must sign the entry after `last`: its own, or the one it rotated to. */
export function nextKeyId(last: JournalEntry | null): string | null {
  if (last === null) return null;
  if (last.type === KEY_ROTATED && typeof last.body.new_key_id === "string") return last.body.new_key_id;
  return last.key_id;
}

export function headOf(e: JournalEntry): JournalHead {
  return { seq: e.seq, hash: e.hash, time: e.time, key_id: e.key_id };
}

function assertSigner(pair: KeyPair): void {
  if (pair.privateKey.type !== "private" || keyTypeOf(pair.privateKey) !== "ed25519") {
    throw new JournalError("ERR_JOURNAL_KEY_TYPE", "journal entries are signed with an Ed25519 private key");
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

export class Journal {
  readonly store: JournalStore;
  readonly #registry: EventTypeRegistry;
  readonly #allowUnknown: boolean;
  readonly #maxBatch: number;
  readonly #now: () => Date;
  readonly #onRedaction: OpenJournalOptions["onRedaction"];
  readonly #batchMode: boolean;
  #signer: KeyPair;
  readonly #pool: CryptoPool | null;
  readonly #chunkSize: number;
  /** Prepared appends not chained yet, in order; they follow every chunk. */
  #queue: Pending[] = [];
  /** Appends chained on a predicted head and being signed by the workers, in order. */
  #chunks: Chunk[] = [];
  #chunked = 0;
  /** The head the next chunk is chained on: the tail of #chunks, or the last head committed; undefined when unknown. */
  #tip: Tip | null | undefined = undefined;
  /** Queued rotations: nothing after one is chained before it commits (its key signs what follows). */
  #rotations = 0;
  #draining: Promise<void> | null = null;
  #closed = false;

  /** Use openJournal(), which checks the signer against the stored chain. */
  constructor(options: OpenJournalOptions) {
    assertSigner(options.signer);
    const mode = options.signatureMode ?? "entry";
    if (mode !== "entry" && mode !== "batch") {
      throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", 'signatureMode must be "entry" or "batch"');
    }
    this.#batchMode = mode === "batch";
    this.store = options.store;
    this.#signer = options.signer;
    this.#registry = options.registry ?? defaultEventTypes;
    this.#allowUnknown = options.allowUnknownTypes ?? false;
    // A batch is one Merkle tree, whose size a verifier bounds.
    this.#maxBatch = Math.min(
      this.#batchMode ? MAX_BATCH_SIZE : Number.MAX_SAFE_INTEGER,
      Math.max(1, Math.floor(options.maxBatch ?? 512)),
    );
    this.#chunkSize = Math.min(CHUNK, this.#maxBatch);
    this.#now = options.now ?? (() => new Date());
    this.#onRedaction = options.onRedaction;
    const workers = this.#batchMode ? 0 : Math.floor(options.signingWorkers ?? 0);
    this.#pool = workers > 0 ? new CryptoPool(workers) : null;
    this.#pool?.setSigner(this.#signer.privateKey);
  }

  /** See openJournal(). */
  static async open(options: OpenJournalOptions): Promise<Journal> {
    const last = await options.store.last();
    const expected = nextKeyId(last);
    if (expected !== null && expected !== options.signer.keyId) {
      throw new JournalError(
        "ERR_JOURNAL_KEY_MISMATCH",
        `the chain is signed by key ${expected}, not by the given key ${options.signer.keyId}`,
        { details: { expected, actual: options.signer.keyId } },
      );
    }
    const journal = new Journal(options);
    // The first prediction of the head; the transaction checks it like any other.
    journal.#tip = tipOf(last);
    return journal;
  }

  /** The key id signing the next entry. */
  get keyId(): string {
    return this.#signer.keyId;
  }

  /** Validates, masks and queues an entry; resolves with it once it is durable. */
  append(input: AppendInput): Promise<JournalEntry> {
    try {
      const prepared = this.#prepare(input);
      return this.#enqueue(prepared);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Appends a key rotation entry signed by the current key, naming `next`; every
   * later entry is signed by `next`. A verifier that trusts the current key learns
   * the new one from this signed entry.
   */
  rotateKey(next: KeyPair): Promise<JournalEntry> {
    try {
      assertSigner(next);
    } catch (err) {
      return Promise.reject(err);
    }
    // The body names the outgoing key, which is only known when the entry is
    // sealed (an earlier queued rotation may change it), so it is built then.
    return this.#enqueue({
      type: KEY_ROTATED,
      run_id: null,
      trace_id: null,
      body: {},
      bodyJson: "",
      rotateTo: next,
    });
  }

  /** The stored head (reads the store: another process may have appended). */
  async head(): Promise<JournalHead | null> {
    const last = await this.store.last();
    return last === null ? null : headOf(last);
  }

  /** Waits for queued appends, then refuses new ones. Does not close the store. */
  async close(): Promise<void> {
    this.#closed = true;
    while (this.#draining !== null) await this.#draining;
    await this.#pool?.close();
  }

  #prepare(input: AppendInput): Omit<Pending, "resolve" | "reject"> {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal is closed");
    const { type } = input;
    if (typeof type !== "string" || !EVENT_TYPE_PATTERN.test(type)) {
      throw new JournalError("ERR_JOURNAL_TYPE_INVALID", `event type must match ${EVENT_TYPE_PATTERN}`);
    }
    if (type === KEY_ROTATED) {
      throw new JournalError("ERR_JOURNAL_TYPE_INVALID", `${KEY_ROTATED} entries are written by rotateKey()`);
    }
    if (!this.#allowUnknown && !this.#registry.has(type)) {
      throw new JournalError("ERR_JOURNAL_TYPE_UNKNOWN", `event type ${type} is not registered`);
    }
    const run_id = input.run_id ?? null;
    if (run_id !== null && (typeof run_id !== "string" || !RUN_ID_PATTERN.test(run_id))) {
      throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", "run_id must be 1-256 printable ASCII characters");
    }
    const trace_id = input.trace_id ?? null;
    if (trace_id !== null && (typeof trace_id !== "string" || !TRACE_ID_PATTERN.test(trace_id))) {
      throw new JournalError(
        "ERR_JOURNAL_ENTRY_INVALID",
        "trace_id must be a W3C trace-id (32 lowercase hex)",
      );
    }
    if (!isPlainObject(input.body)) {
      throw new JournalError("ERR_JOURNAL_BODY_INVALID", "an entry body must be a JSON object");
    }
    // A private, plain-data copy and its canonical text, in one walk: the caller's
    // object is never mutated or retained.
    let { body, json: bodyJson } = prepareBody(input.body);
    const clear = this.#registry.check(type, body, true);
    if (!clear.ok) throw new JournalError("ERR_JOURNAL_BODY_INVALID", clear.message, { details: { type } });

    const sensitive = input.sensitive !== undefined && input.sensitive.length > 0;
    if (sensitive) applySensitive(body, input.sensitive!);
    let masked = 0;
    // The full scan only when the text could hold a credential (CREDENTIAL_HINT), or
    // when sensitive references (caller-supplied URIs) were added to it.
    if (sensitive || CREDENTIAL_HINT.test(bodyJson)) {
      const m = redactCredentials(body);
      masked = m.redactions.length;
      if (masked > 0) {
        body = m.value;
        this.#onRedaction?.(type, m.redactions);
      }
    }
    if (sensitive || masked > 0) {
      bodyJson = canonicalJson(body);
      // What is stored must still be a valid body, or the verifier would reject it.
      const stored = this.#registry.check(type, body, true);
      if (!stored.ok) {
        throw new JournalError(
          sensitive ? "ERR_JOURNAL_SENSITIVE_PATH" : "ERR_JOURNAL_BODY_INVALID",
          `after ${sensitive ? "sensitive references" : "credential masking"} ${stored.message}`,
          { details: { type } },
        );
      }
    }
    // Unchanged by masking, the copy's canonical text is the one built with it.
    return { type, run_id, trace_id, body, bodyJson };
  }

  #enqueue(p: Omit<Pending, "resolve" | "reject">): Promise<JournalEntry> {
    if (this.#closed) return Promise.reject(new JournalError("ERR_JOURNAL_CLOSED", "the journal is closed"));
    return new Promise<JournalEntry>((resolve, reject) => {
      this.#queue.push({
        type: p.type,
        run_id: p.run_id,
        trace_id: p.trace_id,
        body: p.body,
        bodyJson: p.bodyJson,
        rotateTo: p.rotateTo,
        resolve,
        reject,
      });
      if (p.rotateTo !== undefined) this.#rotations++;
      // Hand full chunks to the signing workers right away, so they sign while this
      // thread is still validating the rest of a burst.
      if (this.#queue.length >= this.#chunkSize) this.#speculate(this.#chunkSize);
      if (this.#draining === null) {
        // setImmediate, not a microtask: appends issued in the same turn join the batch.
        this.#draining = new Promise<void>((done) => setImmediate(() => this.#drain().finally(done)));
      }
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
              this.#tip = tipOf(await this.store.last());
            } catch {
              // Unknown head: the queue is chained inside the transaction, which reads it.
            }
          }
          this.#speculate(1);
        }
        const first = this.#chunks[0];
        if (first === undefined) {
          await this.#commit(this.#queue.splice(0, this.#maxBatch), null);
          continue;
        }
        // Group commit: wait until a full batch is signed or nothing more is being
        // signed. Each transaction costs an fsync on this thread, and committing
        // chunk by chunk as they come in makes the fsyncs, not the signatures,
        // the limit; a batch waits at most for one batch's worth of signing.
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
        const sealed = group.every((c) => c.sealed !== null) ? group.flatMap((c) => c.sealed!) : null;
        await this.#commit(
          group.length === 1 ? first.items : group.flatMap((c) => c.items),
          sealed === null ? null : { after: first.after, sealed },
        );
      }
    } finally {
      this.#draining = null;
    }
  }

  /**
   * Commits one batch in one store transaction. `pre` (signed by the workers) is
   * used only if its predicted head is the head read inside the transaction;
   * otherwise the batch is chained to that head and signed there, on this thread.
   */
  async #commit(
    batch: Pending[],
    pre: { after: string | null; sealed: SealedEntry[] } | null,
  ): Promise<void> {
    let signerAfter = this.#signer;
    let rechained = false;
    // Nothing may be chained on a guess while a batch is chained inside the transaction.
    if (pre === null) this.#tip = undefined;
    try {
      const entries = await this.store.appendBatch((last) => {
        if (pre !== null && (last?.hash ?? null) === pre.after) return pre.sealed;
        rechained = true;
        const chained = this.#chain(tipOf(last), batch);
        signerAfter = chained.signer;
        if (this.#batchMode) return signBatches(chained);
        return chained.sealed.map((s, i) => {
          s.entry.signature = nodeSign(
            null,
            Buffer.from(chained.texts[i]!, "utf8"),
            chained.keys[i]!.privateKey,
          ).toString("base64url");
          return s;
        });
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
      for (const p of batch) p.reject(err);
    } finally {
      for (const p of batch) if (p.rotateTo !== undefined) this.#rotations--;
    }
  }

  /**
   * Links a batch to `last`: seq, prev_hash and hash of each entry, the text each
   * is signed over and the key that signs it. Signatures are left empty.
   */
  #chain(last: Tip | null, batch: Pending[]): Chained {
    const expected = last?.nextKey ?? null;
    let signer = this.#signer;
    if (expected !== null && expected !== signer.keyId) {
      throw new JournalError(
        "ERR_JOURNAL_KEY_MISMATCH",
        `the chain is signed by key ${expected}, this journal holds key ${signer.keyId}`,
        { details: { expected, actual: signer.keyId } },
      );
    }
    let seq = last?.seq ?? 0;
    let prev = last?.hash ?? GENESIS_HASH;
    const time = this.#now().toISOString();
    const n = batch.length;
    const sealed = new Array<SealedEntry>(n);
    const texts = new Array<string>(n);
    const keys = new Array<KeyPair>(n);
    for (let i = 0; i < n; i++) {
      const p = batch[i]!;
      let { body, bodyJson } = p;
      if (p.rotateTo !== undefined) {
        body = {
          previous_key_id: signer.keyId,
          new_key_id: p.rotateTo.keyId,
          new_public_key: p.rotateTo.publicKey.export({ format: "jwk" }),
        };
        bodyJson = canonicalJson(body);
      }
      const entry: JournalEntry = {
        seq: ++seq,
        time,
        type: p.type,
        run_id: p.run_id,
        trace_id: p.trace_id,
        prev_hash: prev,
        key_id: signer.keyId,
        body,
        hash: prev,
        signature: "",
      };
      if (this.#batchMode) {
        entry.hash = entryHash(entry, bodyJson);
        texts[i] = "";
      } else {
        const t = hashAndSignedText(entry, bodyJson);
        entry.hash = t.hash;
        texts[i] = t.signed;
      }
      keys[i] = signer;
      sealed[i] = { entry, bodyJson };
      prev = entry.hash;
      if (p.rotateTo !== undefined) signer = p.rotateTo;
    }
    return { sealed, texts, keys, signer, tip: { seq, hash: prev, nextKey: signer.keyId } };
  }
}

/**
 * Batch mode: signs a chained batch with one signature per key — a rotation entry
 * closes its batch (it is signed by the outgoing key, what follows by the new one)
 * — and gives each entry that signature with its inclusion proof.
 */
function signBatches(chained: Chained): SealedEntry[] {
  const { sealed, keys } = chained;
  let start = 0;
  while (start < sealed.length) {
    const key = keys[start]!;
    let end = start + 1;
    while (
      end < sealed.length &&
      keys[end] === key &&
      sealed[end - 1]!.entry.type !== KEY_ROTATED &&
      end - start < MAX_BATCH_SIZE
    ) {
      end++;
    }
    const part = sealed.slice(start, end);
    const firstSeq = part[0]!.entry.seq;
    const { root, paths } = buildTree(part.map((s) => s.entry.hash));
    const signature = nodeSign(
      null,
      Buffer.from(batchMessage(key.keyId, firstSeq, part.length, root), "utf8"),
      key.privateKey,
    ).toString("base64url");
    part.forEach((s, i) => {
      s.entry.signature = formatBatchSignature({ firstSeq, size: part.length, signature, path: paths[i]! });
    });
    start = end;
  }
  return sealed;
}

/** Opens a journal on a store, refusing a signer that is not the chain's current key. */
export function openJournal(options: OpenJournalOptions): Promise<Journal> {
  return Journal.open(options);
}
