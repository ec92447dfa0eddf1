// Hand-built journals for the batch signature tests: entries chained and signed the
// way the journal does it, or the way an attacker holding (or not holding) a key
// would, without going through a store.
import { sign } from "node:crypto";
import { canonicalJson } from "../../src/contracts/index.js";
import type { KeyPair } from "../../src/crypto/index.js";
import {
  batchMessage,
  buildTree,
  entryHash,
  formatBatchSignature,
  GENESIS_HASH,
  type JournalEntry,
  parseBatchSignature,
  sealEntry,
} from "../../src/journal/index.js";
import { KEY, RUN, TRACE } from "./helpers.js";

export const TIME = "2026-01-02T03:04:05.678Z";

/** Entries chained after (seq, hash), hashed but not signed (signature ""). */
export function chain(
  bodies: readonly { type?: string; body: Record<string, unknown>; key?: KeyPair }[],
  after: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH },
  key: KeyPair = KEY,
): JournalEntry[] {
  let prev = after.hash as JournalEntry["hash"];
  return bodies.map((b, i) => {
    const e: JournalEntry = {
      seq: after.seq + i + 1,
      time: TIME,
      type: b.type ?? "ObservationsCollected",
      run_id: RUN,
      trace_id: TRACE,
      body: b.body,
      prev_hash: prev,
      key_id: (b.key ?? key).keyId,
      hash: prev,
      signature: "",
    };
    e.hash = entryHash(e, canonicalJson(e.body));
    prev = e.hash;
    return e;
  });
}

/** Signs `entries` (consecutive) as one batch, as the journal does; mutates and returns them. */
export function signBatch(entries: JournalEntry[], key: KeyPair = KEY): JournalEntry[] {
  const firstSeq = entries[0]!.seq;
  const { root, paths } = buildTree(entries.map((e) => e.hash));
  const signature = sign(
    null,
    Buffer.from(batchMessage(key.keyId, firstSeq, entries.length, root)),
    key.privateKey,
  ).toString("base64url");
  entries.forEach((e, i) => {
    e.signature = formatBatchSignature({ firstSeq, size: entries.length, signature, path: paths[i]! });
  });
  return entries;
}

/** Signs each entry on its own (entry mode). */
export function signEach(entries: JournalEntry[], key: KeyPair = KEY): JournalEntry[] {
  for (const e of entries) {
    e.signature = sealEntry(e, e.body, canonicalJson(e.body), key.privateKey).entry.signature;
  }
  return entries;
}

/** `n` small ObservationsCollected bodies. */
export const bodies = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ body: { observation_count: from + i } }));

/** The parts of a batch signature text, for rewriting one of them. */
export function partsOf(signature: string) {
  const b = parseBatchSignature(signature);
  if (b === null) throw new Error("not a batch signature");
  return b;
}
