// The journal: the public face of appending. append() checks the input and makes
// its body fit to seal at once (append-input.ts), so bad input is rejected before
// it queues; the writer (group-commit.ts) commits queued appends together, chained
// and sealed by a Sealer (sealer.ts), in one store transaction each. An append
// resolves after its transaction is durable (the store's durability setting).
import { JournalError } from "../contracts/index.js";
import { type KeyPair, keyTypeOf } from "../crypto/index.js";
import { type AppendInput, type BuiltAppend, type InputRules, prepareAppend } from "./append-input.js";
import type { JournalEntry, JournalHead } from "./entry.js";
import { defaultEventTypes, type EventTypeRegistry, KEY_ROTATED, TAIL_CUT } from "./event-types.js";
import { GroupCommit } from "./group-commit.js";
import type { Redaction } from "./redact.js";
import { headOf, nextKeyId, type Sealer, sealerOf, tipOf } from "./sealer.js";
import type { JournalStore } from "./store.js";

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
  /** A Sealer of one's own instead of signatureMode's (docs/journal.md, "Extension points"). */
  sealer?: Sealer;
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

function assertSigner(pair: KeyPair): void {
  if (pair.privateKey.type !== "private" || keyTypeOf(pair.privateKey) !== "ed25519") {
    throw new JournalError("ERR_JOURNAL_KEY_TYPE", "journal entries are signed with an Ed25519 private key");
  }
}

export class Journal {
  readonly store: JournalStore;
  readonly #rules: InputRules;
  readonly #writer: GroupCommit;
  #closed = false;

  /** Use openJournal(), which checks the signer against the stored chain. */
  private constructor(options: OpenJournalOptions, last: JournalEntry | null) {
    assertSigner(options.signer);
    const sealer = options.sealer ?? sealerOf(options.signatureMode);
    this.store = options.store;
    this.#rules = {
      registry: options.registry ?? defaultEventTypes,
      allowUnknown: options.allowUnknownTypes ?? false,
      onRedaction: options.onRedaction,
    };
    this.#writer = new GroupCommit({
      store: options.store,
      sealer,
      signer: options.signer,
      // A batch signature covers one Merkle tree, whose size a verifier bounds.
      maxBatch: Math.min(sealer.maxBatch, Math.max(1, Math.floor(options.maxBatch ?? 512))),
      workers: Math.floor(options.signingWorkers ?? 0),
      now: options.now ?? (() => new Date()),
      // The first prediction of the head; the transaction checks it like any other.
      tip: tipOf(last),
    });
  }

  /** See openJournal(). */
  static async open(options: OpenJournalOptions): Promise<Journal> {
    assertSigner(options.signer);
    const last = await options.store.last();
    const expected = nextKeyId(last);
    if (expected !== null && expected !== options.signer.keyId) {
      throw new JournalError(
        "ERR_JOURNAL_KEY_MISMATCH",
        `the chain is signed by key ${expected}, not by the given key ${options.signer.keyId}`,
        { details: { expected, actual: options.signer.keyId } },
      );
    }
    const journal = new Journal(options, last);
    // Torn tails the store cut (segment store) are journaled; those cut on open before this returns.
    const cuts: Promise<unknown>[] = [];
    options.store.onTailCut?.((cut) => {
      const p = journal.appendBuilt({ type: TAIL_CUT, run_id: null, trace_id: null, body: { ...cut } });
      cuts.push(p.catch(() => undefined));
    });
    await Promise.all(cuts);
    return journal;
  }

  /** The key id signing the next entry. */
  get keyId(): string {
    return this.#writer.signer.keyId;
  }

  /** Validates, masks and queues an entry; resolves with it once it is durable. */
  append(input: AppendInput): Promise<JournalEntry> {
    return this.#append(input, false);
  }

  /**
   * append() for a built-in event type the runtime builds itself: the body's type is
   * its schema's, checked by the compiler, so it is not parsed by zod again on this
   * path (ids, JSON shape, sensitive members and masking are handled as by append();
   * the verifier checks every body it reads back).
   */
  appendBuilt(input: BuiltAppend): Promise<JournalEntry> {
    return this.#append(input as AppendInput, true);
  }

  /**
   * Appends a key rotation entry signed by the current key, naming `next`; every
   * later entry is signed by `next`. A verifier that trusts the current key learns
   * the new one from this signed entry.
   */
  rotateKey(next: KeyPair): Promise<JournalEntry> {
    try {
      assertSigner(next);
      this.#open();
    } catch (err) {
      return Promise.reject(err);
    }
    // The body names the outgoing key, which is only known when the entry is
    // chained (an earlier queued rotation may change it), so it is built then.
    return this.#writer.enqueue({
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
    await this.#writer.close();
  }

  #open(): void {
    if (this.#closed) throw new JournalError("ERR_JOURNAL_CLOSED", "the journal is closed");
  }

  #append(input: AppendInput, typed: boolean): Promise<JournalEntry> {
    try {
      this.#open();
      return this.#writer.enqueue(prepareAppend(input, this.#rules, typed));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/** Opens a journal on a store, refusing a signer that is not the chain's current key. */
export function openJournal(options: OpenJournalOptions): Promise<Journal> {
  return Journal.open(options);
}

export { headOf, nextKeyId };
