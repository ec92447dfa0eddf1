// Sealing: how a batch of appends becomes chained, signed entries. Chaining (seq,
// prev_hash, hash) is the same for every sealer; a Sealer decides what the hash is
// accompanied by and how the chained batch is signed:
//   - entrySealer: one Ed25519 signature per entry over its canonical text
//     (signedText), made here or, by the journal's signing workers, ahead of time;
//   - batchSealer: one Ed25519 signature per batch over the Merkle root of its entry
//     hashes (merkle.ts); each entry carries it with its inclusion proof.
// A new sealer implements the interface below and is accepted by the verifier only
// if its signature format is (docs/journal.md, "Extension points").
import { sign as nodeSign } from "node:crypto";
import { canonicalJson, JournalError, type Sha256Hash } from "../contracts/index.js";
import type { KeyPair } from "../crypto/index.js";
import {
  entryHash,
  GENESIS_HASH,
  hashAndSignedText,
  type JournalEntry,
  type JournalHead,
  type SealedEntry,
} from "./entry.js";
import { KEY_ROTATED } from "./event-types.js";
import { BATCH_SIGNATURE_PREFIX, batchMessage, batchTree, MAX_BATCH_SIZE } from "./merkle.js";

/** An append ready to be chained: validated body and its canonical text. */
export interface Unchained {
  type: string;
  run_id: string | null;
  trace_id: string | null;
  body: Record<string, unknown>;
  bodyJson: string;
  /** Key rotation: the key that signs every entry after this one. */
  rotateTo?: KeyPair | undefined;
}

/** What chaining needs of a head: its seq, its hash and the key that must sign next. */
export interface Tip {
  seq: number;
  hash: Sha256Hash;
  nextKey: string;
}

/** A batch linked to a head, signatures still empty. */
export interface Chained {
  sealed: SealedEntry[];
  /** The text each entry's signature covers (per-entry sealers; "" otherwise). */
  texts: string[];
  /** The key that signs each entry. */
  keys: KeyPair[];
  /** The key that signs after the batch. */
  signer: KeyPair;
  tip: Tip;
}

export interface Sealer {
  /** The signatureMode name ("entry", "batch"). */
  readonly mode: string;
  /** Whether each entry is signed over its own text (then Chained.texts is filled). */
  readonly perEntry: boolean;
  /** Largest batch one seal may cover (a verifier bounds batch signatures). */
  readonly maxBatch: number;
  /** Sets the signature of every entry of a chained batch; returns its entries. */
  seal(chained: Chained): SealedEntry[];
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

export const tipOf = (last: JournalEntry | null): Tip | null =>
  last === null ? null : { seq: last.seq, hash: last.hash, nextKey: nextKeyId(last)! };

export interface ChainParams {
  /** The key signing the first entry (the journal's current key). */
  signer: KeyPair;
  perEntry: boolean;
  /** The entries' time (one per batch). */
  time: string;
}

/**
 * Links a batch to `last`: seq, prev_hash and hash of each entry, the text each is
 * signed over (per-entry sealers) and the key that signs it. Signatures are left
 * empty. A rotation's body names the outgoing key, so it is built here.
 */
export function chain(last: Tip | null, batch: readonly Unchained[], p: ChainParams): Chained {
  const expected = last?.nextKey ?? null;
  let signer = p.signer;
  if (expected !== null && expected !== signer.keyId) {
    throw new JournalError(
      "ERR_JOURNAL_KEY_MISMATCH",
      `the chain is signed by key ${expected}, this journal holds key ${signer.keyId}`,
      { details: { expected, actual: signer.keyId } },
    );
  }
  let seq = last?.seq ?? 0;
  let prev = last?.hash ?? GENESIS_HASH;
  const n = batch.length;
  const sealed = new Array<SealedEntry>(n);
  const texts = new Array<string>(n);
  const keys = new Array<KeyPair>(n);
  for (let i = 0; i < n; i++) {
    const u = batch[i]!;
    let { body, bodyJson } = u;
    if (u.rotateTo !== undefined) {
      body = {
        previous_key_id: signer.keyId,
        new_key_id: u.rotateTo.keyId,
        new_public_key: u.rotateTo.publicKey.export({ format: "jwk" }),
      };
      bodyJson = canonicalJson(body);
    }
    const entry: JournalEntry = {
      seq: ++seq,
      time: p.time,
      type: u.type,
      run_id: u.run_id,
      trace_id: u.trace_id,
      prev_hash: prev,
      key_id: signer.keyId,
      body,
      hash: prev,
      signature: "",
    };
    if (p.perEntry) {
      const t = hashAndSignedText(entry, bodyJson);
      entry.hash = t.hash;
      texts[i] = t.signed;
    } else {
      entry.hash = entryHash(entry, bodyJson);
      texts[i] = "";
    }
    keys[i] = signer;
    sealed[i] = { entry, bodyJson };
    prev = entry.hash;
    if (u.rotateTo !== undefined) signer = u.rotateTo;
  }
  return { sealed, texts, keys, signer, tip: { seq, hash: prev, nextKey: signer.keyId } };
}

/** One Ed25519 signature per entry, over the entry's canonical text without `signature`. */
export const entrySealer: Sealer = {
  mode: "entry",
  perEntry: true,
  maxBatch: Number.MAX_SAFE_INTEGER,
  seal({ sealed, texts, keys }: Chained): SealedEntry[] {
    for (let i = 0; i < sealed.length; i++) {
      sealed[i]!.entry.signature = nodeSign(
        null,
        Buffer.from(texts[i]!, "utf8"),
        keys[i]!.privateKey,
      ).toString("base64url");
    }
    return sealed;
  },
};

/**
 * One signature per key over the Merkle root of the batch — a rotation entry closes
 * its batch (it is signed by the outgoing key, what follows by the new one) — and
 * each entry gets that signature with its inclusion proof.
 */
export const batchSealer: Sealer = {
  mode: "batch",
  perEntry: false,
  maxBatch: MAX_BATCH_SIZE,
  seal({ sealed, keys }: Chained): SealedEntry[] {
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
      const { root, pathTexts } = batchTree(part.map((s) => s.entry.hash));
      const signature = nodeSign(
        null,
        Buffer.from(batchMessage(key.keyId, firstSeq, part.length, root), "utf8"),
        key.privateKey,
      ).toString("base64url");
      // formatBatchSignature's text, with each path written once by batchTree.
      const head = `${BATCH_SIGNATURE_PREFIX}${firstSeq}.${part.length}.${signature}`;
      part.forEach((s, i) => {
        s.entry.signature = head + pathTexts[i]!;
      });
      start = end;
    }
    return sealed;
  },
};

/** The sealer of a signatureMode option; anything else is refused. */
export function sealerOf(mode: unknown): Sealer {
  if (mode === undefined || mode === "entry") return entrySealer;
  if (mode === "batch") return batchSealer;
  throw new JournalError("ERR_JOURNAL_ENTRY_INVALID", 'signatureMode must be "entry" or "batch"');
}
