// The journal writer. append() validates, masks and canonicalizes the body at
// once (so bad input is rejected before it queues), then queues it; queued
// appends are committed together (group commit) in one store transaction, in
// which each entry is chained to the head read inside that transaction, hashed and
// signed. An append resolves after its transaction is durable.
import { sign as nodeSign } from "node:crypto";
import { canonicalJson, JournalError, TRACE_ID_PATTERN, WardenError } from "../contracts/index.js";
import { type KeyPair, keyTypeOf } from "../crypto/index.js";
import { CryptoPool } from "./crypto-pool.js";
import {
  EVENT_TYPE_PATTERN,
  entryHash,
  GENESIS_HASH,
  type JournalEntry,
  type JournalHead,
  RUN_ID_PATTERN,
  type SealedEntry,
  signedText,
} from "./entry.js";
import { defaultEventTypes, type EventTypeRegistry, KEY_ROTATED } from "./event-types.js";
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
  /** Largest number of appends committed in one transaction (default 512). */
  maxBatch?: number;
  /**
   * Worker threads that sign batches in parallel (default 0: sign on this thread).
   * The batch is chained against the head read before signing and committed only
   * if that is still the head inside the write transaction; if another writer got
   * there first, the batch is re-chained and signed inside the transaction.
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
  rotateTo?: KeyPair;
  resolve: (e: JournalEntry) => void;
  reject: (err: unknown) => void;
}

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
  #signer: KeyPair;
  readonly #pool: CryptoPool | null;
  #queue: Pending[] = [];
  #draining: Promise<void> | null = null;
  #closed = false;

  /** Use openJournal(), which checks the signer against the stored chain. */
  constructor(options: OpenJournalOptions) {
    assertSigner(options.signer);
    this.store = options.store;
    this.#signer = options.signer;
    this.#registry = options.registry ?? defaultEventTypes;
    this.#allowUnknown = options.allowUnknownTypes ?? false;
    this.#maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 512));
    this.#now = options.now ?? (() => new Date());
    this.#onRedaction = options.onRedaction;
    const workers = Math.floor(options.signingWorkers ?? 0);
    this.#pool = workers > 0 ? new CryptoPool(workers) : null;
    this.#pool?.setSigner(this.#signer.privateKey);
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
    // A private, plain-data copy: the caller's object is never mutated or retained.
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(canonicalJson(input.body)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof WardenError) {
        throw new JournalError("ERR_JOURNAL_BODY_INVALID", `body is not canonical JSON: ${err.message}`, {
          cause: err,
        });
      }
      throw err;
    }
    if (hasProtoKey(body))
      throw new JournalError("ERR_JOURNAL_BODY_INVALID", "body holds a __proto__ member");
    const clear = this.#registry.check(type, body, true);
    if (!clear.ok) throw new JournalError("ERR_JOURNAL_BODY_INVALID", clear.message, { details: { type } });

    if (input.sensitive !== undefined && input.sensitive.length > 0) applySensitive(body, input.sensitive);
    const masked = redactCredentials(body);
    if (masked.redactions.length > 0) {
      body = masked.value;
      this.#onRedaction?.(type, masked.redactions);
    }
    if (input.sensitive?.length || masked.redactions.length > 0) {
      // What is stored must still be a valid body, or the verifier would reject it.
      const stored = this.#registry.check(type, body, true);
      if (!stored.ok) {
        throw new JournalError(
          input.sensitive?.length ? "ERR_JOURNAL_SENSITIVE_PATH" : "ERR_JOURNAL_BODY_INVALID",
          `after ${input.sensitive?.length ? "sensitive references" : "credential masking"} ${stored.message}`,
          { details: { type } },
        );
      }
    }
    return { type, run_id, trace_id, body, bodyJson: canonicalJson(body) };
  }

  #enqueue(p: Omit<Pending, "resolve" | "reject">): Promise<JournalEntry> {
    if (this.#closed) return Promise.reject(new JournalError("ERR_JOURNAL_CLOSED", "the journal is closed"));
    return new Promise<JournalEntry>((resolve, reject) => {
      this.#queue.push({ ...p, resolve, reject });
      if (this.#draining === null) {
        // setImmediate, not a microtask: appends issued in the same turn join the batch.
        this.#draining = new Promise<void>((done) => setImmediate(() => this.#drain().finally(done)));
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#maxBatch);
        let signerAfter = this.#signer;
        try {
          const pre = await this.#presign(batch);
          const entries = await this.store.appendBatch((last) => {
            if (pre !== null && (last?.hash ?? null) === pre.after) {
              signerAfter = pre.signer;
              return pre.sealed;
            }
            const chained = this.#chain(last, batch);
            signerAfter = chained.signer;
            return chained.items.map((c) => c.seal(nodeSign(null, c.message, c.key.privateKey)));
          });
          if (signerAfter !== this.#signer) {
            this.#signer = signerAfter;
            this.#pool?.setSigner(signerAfter.privateKey);
          }
          batch.forEach((p, i) => {
            p.resolve(entries[i]!);
          });
        } catch (err) {
          for (const p of batch) p.reject(err);
        }
      }
    } finally {
      this.#draining = null;
    }
  }

  /** With signing workers: chain on the current head and sign in parallel, before taking the write lock. */
  async #presign(
    batch: Pending[],
  ): Promise<{ sealed: SealedEntry[]; signer: KeyPair; after: string | null } | null> {
    if (this.#pool === null || batch.some((p) => p.rotateTo !== undefined)) return null;
    const last = await this.store.last();
    const chained = this.#chain(last, batch);
    const sigs = await this.#pool.sign(chained.items.map((c) => c.message));
    return {
      sealed: chained.items.map((c, i) => c.seal(sigs[i]!)),
      signer: chained.signer,
      after: last?.hash ?? null,
    };
  }

  /** Links a batch to `last`: seq, prev_hash, hash and the bytes to sign, each with its signing key. */
  #chain(
    last: JournalEntry | null,
    batch: Pending[],
  ): { items: { message: Buffer; key: KeyPair; seal: (sig: Buffer) => SealedEntry }[]; signer: KeyPair } {
    const expected = nextKeyId(last);
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
    const items: { message: Buffer; key: KeyPair; seal: (sig: Buffer) => SealedEntry }[] = [];
    for (const p of batch) {
      let { body, bodyJson } = p;
      if (p.rotateTo !== undefined) {
        body = {
          previous_key_id: signer.keyId,
          new_key_id: p.rotateTo.keyId,
          new_public_key: p.rotateTo.publicKey.export({ format: "jwk" }),
        };
        bodyJson = canonicalJson(body);
      }
      const fields = {
        seq: ++seq,
        time,
        type: p.type,
        run_id: p.run_id,
        trace_id: p.trace_id,
        prev_hash: prev,
        key_id: signer.keyId,
      };
      const hash = entryHash(fields, bodyJson);
      const message = Buffer.from(signedText({ ...fields, hash }, bodyJson), "utf8");
      const b = body;
      const bj = bodyJson;
      items.push({
        message,
        key: signer,
        seal: (sig) => ({
          entry: { ...fields, body: b, hash, signature: sig.toString("base64url") },
          bodyJson: bj,
        }),
      });
      prev = hash;
      if (p.rotateTo !== undefined) signer = p.rotateTo;
    }
    return { items, signer };
  }
}

function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (v !== null && typeof v === "object") {
    return Object.entries(v).some(([k, x]) => k === "__proto__" || hasProtoKey(x));
  }
  return false;
}

/** Opens a journal on a store, refusing a signer that is not the chain's current key. */
export async function openJournal(options: OpenJournalOptions): Promise<Journal> {
  const journal = new Journal(options);
  const expected = nextKeyId(await options.store.last());
  if (expected !== null && expected !== options.signer.keyId) {
    throw new JournalError(
      "ERR_JOURNAL_KEY_MISMATCH",
      `the chain is signed by key ${expected}, not by the given key ${options.signer.keyId}`,
      { details: { expected, actual: options.signer.keyId } },
    );
  }
  return journal;
}
