// Per-replica chains for the verifyChains tests: real journals (openJournal over in-memory
// SQLite stores) whose entry 1 is a checkpoint naming the chain, with the attacks an
// insider holding the journal key can make on an exported chain (cut, delete, rewrite and
// re-chain, re-sign).
import { canonicalJson } from "../../src/contracts/index.js";
import type { KeyPair } from "../../src/crypto/index.js";
import {
  CHECKPOINT,
  type ChainInput,
  GENESIS_HASH,
  type Journal,
  type JournalEntry,
  openJournal,
  SqliteJournalStore,
  sealEntry,
} from "../../src/journal/index.js";
import { collect, KEY } from "./helpers.js";

export interface Replica {
  store: SqliteJournalStore;
  journal: Journal;
}

/** A fresh journal; entry 1 a checkpoint naming `name` unless `name` is null (a legacy global chain). */
export async function replica(name: string | null, key: KeyPair = KEY, path = ":memory:"): Promise<Replica> {
  const store = SqliteJournalStore.open(path, { durability: "os" });
  const journal = await openJournal({ store, signer: key });
  if (name !== null) await journal.append({ type: CHECKPOINT, body: { chain: name, heads: [] } });
  return { store, journal };
}

export function observe(r: Replica, count: number): Promise<JournalEntry> {
  return r.journal.append({ type: "ObservationsCollected", body: { observation_count: count } });
}

/** Appends a checkpoint in `r` (chain `name`) naming the current heads of `others`. */
export async function checkpoint(
  r: Replica,
  name: string,
  others: Record<string, Replica>,
): Promise<JournalEntry> {
  const heads = [];
  for (const [chain, o] of Object.entries(others)) {
    const h = await o.store.head();
    if (h !== null) heads.push({ chain, seq: h.seq, hash: h.hash });
  }
  return r.journal.append({ type: CHECKPOINT, body: { chain: name, heads } });
}

/** The chain as exported (plain JSON copies, free to tamper with). */
export async function exported(r: Replica): Promise<JournalEntry[]> {
  return (await collect(r.store)).map((e) => JSON.parse(JSON.stringify(e)) as JournalEntry);
}

export const fileInput = (entries: readonly unknown[]): ChainInput => ({ open: () => entries });

/** Re-chains and re-signs entries from index `from` on, as an insider with the key would. */
export function rechain(entries: readonly JournalEntry[], from: number, key: KeyPair = KEY): JournalEntry[] {
  const out = entries.slice(0, from);
  let prev = out.at(-1)?.hash ?? GENESIS_HASH;
  for (const [i, e] of entries.slice(from).entries()) {
    const fields = { ...e, seq: from + i + 1, prev_hash: prev, key_id: key.keyId };
    const sealed = sealEntry(fields, e.body, canonicalJson(e.body), key.privateKey).entry;
    out.push(sealed);
    prev = sealed.hash;
  }
  return out;
}

/** Entry at index `i` removed, the rest renumbered, re-chained and re-signed. */
export const deleteAndReseal = (entries: readonly JournalEntry[], i: number): JournalEntry[] =>
  rechain([...entries.slice(0, i), ...entries.slice(i + 1)], i);

/** Entry at index `i` replaced by another observation, re-chained and re-signed from there. */
export function rewriteAndReseal(entries: readonly JournalEntry[], i: number): JournalEntry[] {
  const forged = entries.map((e, k) =>
    k === i ? { ...e, type: "ObservationsCollected", body: { observation_count: 424242 } } : e,
  );
  return rechain(forged, i);
}

export async function closeAll(...rs: Replica[]): Promise<void> {
  for (const r of rs) {
    await r.journal.close();
    await r.store.close();
  }
}
