// The messages between the parallel segment verifier (segment-verify.ts) and its
// workers (segment-verify-worker.ts).
import type { JournalHead } from "./entry.js";

/** A byte range of a segment to verify: whole batches from `start` to `end` of `data`. */
export interface RangeJob {
  id: number;
  /** The segment's bytes, shared with the main thread (never copied). */
  data: SharedArrayBuffer;
  name: string;
  start: number;
  end: number;
  /** SPKI DER of every key the main thread trusts when it sends the job. */
  keys: Uint8Array[];
  /** False only for the journal's first range, which is checked from seq 1 exactly. */
  resume: boolean;
  allowUnknownTypes: boolean;
  /** The seq whose hash the main thread wants (an expected head's), or 0. */
  hashAt: number;
}

/** A record a chain scan must see, or a key rotation. */
export interface Seen {
  seq: number;
  type: string;
  body: unknown;
}

export type RangeResult =
  | { id: number; ok: false; reason: string; keyId?: string | null; error?: string }
  | { id: number; ok: true; empty: true }
  | {
      id: number;
      ok: true;
      empty: false;
      firstSeq: number;
      firstPrevHash: string;
      firstKeyId: string;
      head: JournalHead;
      /** The key the next entry must be signed with (a rotation's new key when the range ends with one). */
      chainKey: string;
      rotations: Seen[];
      seen: Seen[];
      unknownTypes: string[];
      hashAt: string | null;
    };
