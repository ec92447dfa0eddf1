// The two reads of one chain that verifyChains (chains.ts) makes besides verifyJournal's.
// First, a tap on the records verifyJournal walks: it learns the chain's name from entry 1
// and keeps the references of its checkpoints ({chain, seq, hash} and the seq of the
// checkpoint that named it), nothing else, so memory follows the references, not the
// entries. What it keeps is trusted only when verifyJournal accepts the chain. Second, a
// streaming pass over a referenced chain that reads the hashes at the referenced seqs and
// proves, by recomputing every hash up to the head the first pass verified, that it read
// the same entries (a source that changed in between is `chain_changed`).
import { canonicalJson } from "../contracts/index.js";
import { entryHash, JournalEntrySchema, type JournalHead } from "./entry.js";
import { CHECKPOINT, type CheckpointBody, CheckpointSchema } from "./event-types.js";
import { type RecordObserver, SegmentSource } from "./segment-read.js";
import { MalformedRecord } from "./store.js";
import { isStore, iterate, type JournalSource } from "./verify.js";

/** A head named by a checkpoint: `chain` reached `seq` with `hash` before entry `by` was signed. */
export interface Reference {
  chain: string;
  seq: number;
  hash: string;
  /** The seq of the checkpoint entry that names it (in the chain that holds it). */
  by: number;
}

/** The first thing wrong with a chain's checkpoints, at the seq of the entry. */
export interface ScanProblem {
  seq: number;
  reason: "chain_name_mismatch" | "checkpoint_invalid";
  message: string;
}

/** What the tap learned from one chain's records. */
export class ChainScan implements RecordObserver {
  /** Entry 1's checkpoint `chain`; "" when entry 1 is something else; null before entry 1 or when unreadable. */
  claimed: string | null = null;
  /** Checkpoint entries seen (entry 1's included). */
  checkpoints = 0;
  readonly references: Reference[] = [];
  problem: ScanProblem | null = null;
  #position = 0;

  /**
   * Passes a source's records through, looking at each (verifyJournal reads what this
   * yields); a segment directory stays one, observed by this scan, so that its parallel
   * verifier can show this scan only the records it needs (skipping the others).
   */
  tap(source: JournalSource): JournalSource {
    return source instanceof SegmentSource ? source.observedBy(this) : this.#tapped(source);
  }

  async *#tapped(source: JournalSource): AsyncIterable<unknown> {
    for await (const raw of iterate(source)) {
      this.observe(raw);
      yield raw;
    }
  }

  /** Passes over `n` records that are not checkpoints (and not entry 1). */
  skip(n: number): void {
    this.#position += n;
  }

  observe(raw: unknown): void {
    const seq = ++this.#position;
    if (typeof raw !== "object" || raw === null || raw instanceof MalformedRecord) return;
    const { type, body } = raw as { type?: unknown; body?: unknown };
    if (seq === 1 && type !== CHECKPOINT) this.claimed = "";
    if (type !== CHECKPOINT) return;
    this.checkpoints++;
    if (this.problem !== null) return;
    const parsed = CheckpointSchema.safeParse(body);
    if (!parsed.success) {
      this.problem = { seq, reason: "checkpoint_invalid", message: "checkpoint body is malformed" };
      return;
    }
    const cp = parsed.data;
    if (seq === 1) this.claimed = cp.chain;
    else if (cp.chain !== this.claimed) {
      this.problem = {
        seq,
        reason: "chain_name_mismatch",
        message:
          `checkpoint names chain ${JSON.stringify(cp.chain)}, but entry 1 ` +
          (this.claimed === ""
            ? "makes this the legacy global chain"
            : `names ${JSON.stringify(this.claimed)}`),
      };
      return;
    }
    this.#keep(seq, cp);
  }

  #keep(seq: number, cp: CheckpointBody): void {
    const named = new Set<string>();
    for (const h of cp.heads) {
      if (h.chain === cp.chain || named.has(h.chain)) {
        const why = h.chain === cp.chain ? "its own chain" : `chain ${JSON.stringify(h.chain)} twice`;
        this.problem = { seq, reason: "checkpoint_invalid", message: `checkpoint names the head of ${why}` };
        return;
      }
      named.add(h.chain);
    }
    for (const h of cp.heads) this.references.push({ chain: h.chain, seq: h.seq, hash: h.hash, by: seq });
  }
}

export type Lookup = { ok: true; hashes: Map<number, string> } | { ok: false; seq: number; message: string };

/**
 * Streams `source` again and returns the hash of the entry at each seq in `wanted` (all at
 * most `head.seq`), proving by the hash chain from the first wanted seq to `head` (as the
 * first pass verified it) that these are the entries the first pass verified.
 */
export async function lookUpHashes(
  source: JournalSource,
  wanted: ReadonlySet<number>,
  head: JournalHead,
): Promise<Lookup> {
  const hashes = new Map<number, string>();
  let from = head.seq;
  for (const s of wanted) from = Math.min(from, s);
  const store = isStore(source);
  const records = store ? source.entries(from, head.seq) : iterate(source);
  let position = store ? from : 1;
  let prev: string | null = null;
  const changed = (message: string): Lookup => ({ ok: false, seq: position, message });
  for await (const raw of records) {
    if (position > head.seq) break;
    if (position < from) {
      position++;
      continue;
    }
    const parsed = JournalEntrySchema.safeParse(raw);
    if (!parsed.success || parsed.data.seq !== position) return changed("entry unreadable or out of place");
    const e = parsed.data;
    if (prev !== null && e.prev_hash !== prev) return changed("prev_hash does not match");
    let recomputed: string;
    try {
      recomputed = entryHash(e, canonicalJson(e.body));
    } catch {
      return changed("body cannot be canonicalized");
    }
    if (recomputed !== e.hash) return changed("hash does not recompute");
    if (wanted.has(position)) hashes.set(position, e.hash);
    prev = e.hash;
    position++;
  }
  if (position !== head.seq + 1 || prev !== head.hash) {
    return changed(`does not reach the verified head at seq ${head.seq} ${head.hash}`);
  }
  return { ok: true, hashes };
}
