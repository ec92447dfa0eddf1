// The offline verifier. Given entries (a store, a JSONL export, any iterable) and
// the keys it trusts, it proves the chain is complete and unaltered from seq 1 or
// names the first entry that is not, and why. It trusts nothing in the entries but
// what it checks: the first entry must be signed by a keyring key, a key change is
// accepted only through a rotation entry signed by the outgoing key, and an entry
// signed by any other key, even one in the keyring, is `unknown_key`. Entries
// signed in batch mode are proven by their inclusion path and their batch's root
// signature, which is verified once per batch.
import { createPublicKey, type KeyObject, verify as nodeVerify } from "node:crypto";
import { canonicalJson } from "../contracts/index.js";
import { type JsonWebKey, type Keyring, keyIdOf } from "../crypto/index.js";
import { CryptoPool, type SignatureJob } from "./crypto-pool.js";
import {
  entryHash,
  GENESIS_HASH,
  type JournalEntry,
  JournalEntrySchema,
  type JournalHead,
  signedText,
} from "./entry.js";
import { defaultEventTypes, type EventTypeRegistry, KEY_ROTATED } from "./event-types.js";
import { type SignedHead, verifyHead } from "./head.js";
import { batchMessage, leafHash, parseBatchSignature, rootFromPath } from "./merkle.js";
import { type JournalStore, MalformedRecord } from "./store.js";

export type VerifyFailureReason =
  | "schema_invalid"
  | "seq_gap"
  | "chain_broken"
  | "unknown_key"
  | "hash_mismatch"
  | "signature_invalid"
  /** The journal ends before the expected head. */
  | "truncated"
  /** The entry at the expected head's seq is not the one the head names. */
  | "head_mismatch"
  /** The expected head is malformed or its signature does not verify. */
  | "head_invalid";

export interface VerifyFailure {
  /** Position in the chain at which verification failed (the seq the entry there should have). */
  seq: number;
  reason: VerifyFailureReason;
  message: string;
}

export type VerifyReport =
  | { ok: true; checked: number; head: JournalHead | null; keys: string[] }
  | { ok: false; checked: number; head: JournalHead | null; failure: VerifyFailure };

export type JournalSource = JournalStore | Iterable<unknown> | AsyncIterable<unknown>;

export interface VerifyOptions {
  /** A signed head (as `signHead` writes it) the journal must reach and agree with. */
  expectHead?: unknown;
  /** Body schemas (default: the process-wide registry). */
  registry?: EventTypeRegistry;
  /** Accept types the registry does not know (bodies still JSON objects). Default true. */
  allowUnknownTypes?: boolean;
  /** Worker threads for signature checks; 0 (default) verifies on the calling thread. */
  workers?: number;
  /** Called every 1000 entries with the number walked so far. */
  onProgress?: (walked: number) => void;
  /**
   * Verify a part of a chain (segment-verify.ts): the first record sets the expected
   * seq, `prev_hash` and chain key instead of seq 1 and the genesis hash. What the first
   * record claims is trusted only once its caller links it to the part before.
   */
  resume?: boolean;
}

const BATCH = 256;

/** A store (read with `entries()`) rather than an iterable of records. */
export function isStore(s: JournalSource): s is JournalStore {
  return (
    typeof (s as JournalStore).appendBatch === "function" && typeof (s as JournalStore).entries === "function"
  );
}

/** The records of a source, in order (a store's rows, or the iterable's items). */
export async function* iterate(source: JournalSource): AsyncIterable<unknown> {
  if (isStore(source)) yield* source.entries();
  else yield* source as AsyncIterable<unknown>;
}

interface TrustedKey {
  key: KeyObject;
  index: number;
}

interface Batch {
  jobs: (SignatureJob & { head: JournalHead })[];
  result: Promise<number | null>;
}

function zodWhere(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const i = issues[0];
  return i === undefined ? "invalid" : `${i.path.map(String).join(".") || "(root)"}: ${i.message}`;
}

/** Verifies a journal against a keyring; never throws for anything wrong with the journal itself. */
export async function verifyJournal(
  source: JournalSource,
  keyring: Keyring,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const registry = options.registry ?? defaultEventTypes;
  const allowUnknown = options.allowUnknownTypes ?? true;
  const trusted = new Map<string, TrustedKey>();
  const pool = options.workers !== undefined && options.workers > 0 ? new CryptoPool(options.workers) : null;
  const trust = (id: string, key: KeyObject) => {
    if (trusted.has(id) || key.asymmetricKeyType !== "ed25519") return;
    const index = trusted.size;
    trusted.set(id, { key, index });
    pool?.addKey(index, key);
  };
  for (const id of keyring.ids()) trust(id, keyring.get(id)!);

  let expectedSeq = 1;
  let prevHash: string = GENESIS_HASH;
  let chainKey: string | null = null;
  let head: JournalHead | null = null;
  let failure: VerifyFailure | null = null;
  let expectSeq: number | null = null;
  let hashAtExpectedSeq: string | null = null;
  const expect = options.expectHead as SignedHead | undefined;
  if (
    expect !== undefined &&
    typeof expect === "object" &&
    expect !== null &&
    Number.isSafeInteger(expect.seq)
  ) {
    expectSeq = expect.seq;
  }

  // With workers, signatures are checked in batches behind the sequential walk;
  // `confirmed` is the head up to which every signature is known good.
  const inflight: Batch[] = [];
  let current: Batch["jobs"] = [];
  let confirmed: JournalHead | null = null;
  let sigFailure: { seq: number; head: JournalHead | null } | null = null;
  const settleOldest = async (): Promise<void> => {
    const b = inflight.shift()!;
    const bad = await b.result;
    if (bad === null) {
      confirmed = b.jobs.at(-1)!.head;
      return;
    }
    if (sigFailure === null) {
      const i = b.jobs.findIndex((j) => j.seq === bad);
      sigFailure = { seq: bad, head: i > 0 ? b.jobs[i - 1]!.head : confirmed };
    }
  };
  const dispatch = async (): Promise<void> => {
    if (pool === null || current.length === 0) return;
    const jobs = current;
    current = [];
    inflight.push({ jobs, result: pool.verifyBatch(jobs) });
    while (inflight.length > pool.size * 2 && sigFailure === null) await settleOldest();
  };

  const fail = (reason: VerifyFailureReason, message: string): void => {
    failure = { seq: expectedSeq, reason, message };
  };
  // Checked on this thread, in order: wait for the workers first, so that a bad
  // signature before this entry is reported (and `confirmed` never runs ahead).
  const settleAll = async (): Promise<void> => {
    if (pool === null || (current.length === 0 && inflight.length === 0)) return;
    await dispatch();
    while (inflight.length > 0) await settleOldest();
    confirmed = head;
  };
  // The batch the previous entry belongs to, while it has entries still to come:
  // a batch is committed whole, so its entries are consecutive and all present.
  let open: { firstSeq: number; size: number; signature: string } | null = null;
  // The last batch message whose signature verified (message + signature).
  let verifiedBatch: string | null = null;

  try {
    for await (const raw of iterate(source)) {
      if (sigFailure !== null) break;
      if (raw instanceof MalformedRecord) {
        fail("schema_invalid", `${raw.where}: ${raw.message}`);
        break;
      }
      const parsed = JournalEntrySchema.safeParse(raw);
      if (!parsed.success) {
        fail("schema_invalid", `entry is malformed at ${zodWhere(parsed.error.issues)}`);
        break;
      }
      const e = parsed.data as JournalEntry;
      if (options.resume === true && head === null) {
        expectedSeq = e.seq;
        prevHash = e.prev_hash;
        chainKey = e.key_id;
      }
      if (e.seq !== expectedSeq) {
        fail("seq_gap", `expected seq ${expectedSeq}, found seq ${e.seq}`);
        break;
      }
      if (e.prev_hash !== prevHash) {
        fail("chain_broken", `prev_hash does not match the hash of entry ${expectedSeq - 1}`);
        break;
      }
      const key = trusted.get(e.key_id);
      if (key === undefined) {
        fail("unknown_key", `signed by key ${e.key_id}, which is not trusted`);
        break;
      }
      if (chainKey !== null && e.key_id !== chainKey) {
        fail(
          "unknown_key",
          `signed by key ${e.key_id}, but the chain's key is ${chainKey} (no rotation entry)`,
        );
        break;
      }
      let bodyJson: string;
      try {
        bodyJson = canonicalJson(e.body);
      } catch (err) {
        fail("schema_invalid", `body cannot be canonicalized: ${(err as Error).message}`);
        break;
      }
      if (entryHash(e, bodyJson) !== e.hash) {
        fail("hash_mismatch", "hash is not the sha256 of the entry's canonical JSON");
        break;
      }
      const bodyCheck = registry.check(e.type, e.body, allowUnknown);
      const rotation = e.type === KEY_ROTATED;
      const batch = e.signature.length === 86 ? null : parseBatchSignature(e.signature);
      if (batch !== null) {
        await settleAll();
        if (sigFailure !== null) break;
        const index = e.seq - batch.firstSeq;
        if (open !== null) {
          if (
            batch.firstSeq !== open.firstSeq ||
            batch.size !== open.size ||
            batch.signature !== open.signature
          ) {
            fail(
              "signature_invalid",
              `the batch of ${open.size} entries from seq ${open.firstSeq} ends before its last entry`,
            );
            break;
          }
        } else if (index !== 0) {
          fail("signature_invalid", `batch signature for seq ${batch.firstSeq}, not for this entry's batch`);
          break;
        }
        const root = rootFromPath(leafHash(e.hash), index, batch.size, batch.path);
        if (root === null) {
          fail("signature_invalid", "inclusion path does not fit the entry's place in its batch");
          break;
        }
        const message = batchMessage(e.key_id, batch.firstSeq, batch.size, root);
        if (verifiedBatch !== `${message}\n${batch.signature}`) {
          const sig = Buffer.from(batch.signature, "base64url");
          if (!nodeVerify(null, Buffer.from(message, "utf8"), key.key, sig)) {
            fail("signature_invalid", "batch signature does not verify");
            break;
          }
          verifiedBatch = `${message}\n${batch.signature}`;
        }
        if (!bodyCheck.ok) {
          fail("schema_invalid", bodyCheck.message);
          break;
        }
        const closes: boolean = index === batch.size - 1;
        if (rotation && !closes) {
          fail("signature_invalid", "a batch continues past a key rotation");
          break;
        }
        open = closes ? null : { firstSeq: batch.firstSeq, size: batch.size, signature: batch.signature };
      } else {
        if (open !== null) {
          fail(
            "signature_invalid",
            `the batch of ${open.size} entries from seq ${open.firstSeq} ends before its last entry`,
          );
          break;
        }
        const signature = Buffer.from(e.signature, "base64url");
        const message = Buffer.from(signedText(e, bodyJson), "utf8");
        if (signature.toString("base64url") !== e.signature) {
          // Non-canonical base64url (stray bits in the last character) is a different signature text.
          fail("signature_invalid", "signature is not canonical base64url");
          break;
        }
        const checkNow = () => nodeVerify(null, message, key.key, signature);
        if (!bodyCheck.ok || rotation || pool === null) {
          // A rotation is trusted only once its own signature is known good, and a bad
          // signature outranks a bad body: check these on this thread, now.
          await settleAll();
          if (sigFailure !== null) break;
          if (!checkNow()) {
            fail("signature_invalid", "signature does not verify");
            break;
          }
          if (!bodyCheck.ok) {
            fail("schema_invalid", bodyCheck.message);
            break;
          }
        } else {
          current.push({ seq: e.seq, message, signature, keyIndex: key.index, head: headOf(e) });
          if (current.length >= BATCH) await dispatch();
        }
      }
      if (rotation) {
        const b = e.body as { previous_key_id: string; new_key_id: string; new_public_key: object };
        let next: KeyObject | undefined;
        try {
          next = createPublicKey({ key: b.new_public_key as JsonWebKey, format: "jwk" });
        } catch {
          next = undefined;
        }
        if (b.previous_key_id !== e.key_id || next === undefined || keyIdOf(next) !== b.new_key_id) {
          fail("schema_invalid", "rotation entry does not name its signing key and a matching new key");
          break;
        }
        trust(b.new_key_id, next);
        chainKey = b.new_key_id;
      } else {
        chainKey = e.key_id;
      }
      prevHash = e.hash;
      head = headOf(e);
      if (pool === null || rotation || batch !== null) confirmed = head;
      if (e.seq === expectSeq) hashAtExpectedSeq = e.hash;
      expectedSeq++;
      if (options.onProgress && e.seq % 1000 === 0) options.onProgress(e.seq);
    }
    await dispatch();
    while (inflight.length > 0) await settleOldest();
    if (failure === null && sigFailure === null && open !== null) {
      const o = open as { firstSeq: number; size: number };
      // The signed size proves entries are missing; those present are proven (checked, head).
      fail(
        "truncated",
        `journal ends at seq ${expectedSeq - 1}, inside a batch of ${o.size} entries from seq ${o.firstSeq}`,
      );
    }
  } finally {
    await pool?.close();
  }

  const sf = sigFailure as { seq: number; head: JournalHead | null } | null;
  if (sf !== null) {
    return {
      ok: false,
      checked: sf.seq - 1,
      head: sf.head,
      failure: { seq: sf.seq, reason: "signature_invalid", message: "signature does not verify" },
    };
  }
  const f = failure as VerifyFailure | null;
  if (f !== null) return { ok: false, checked: f.seq - 1, head, failure: f };

  return finishReport(expectedSeq - 1, head, hashAtExpectedSeq, options.expectHead, trusted);
}

/**
 * The report of a chain that verified up to `checked`: with an expected head, the head's
 * signature, that the chain reaches it and that the entry at its seq is the one it names.
 */
export function finishReport(
  checked: number,
  head: JournalHead | null,
  hashAtExpectedSeq: string | null,
  expectHead: unknown,
  trusted: ReadonlyMap<string, { key: KeyObject }>,
): VerifyReport {
  if (expectHead !== undefined) {
    const h = verifyHead(expectHead, (id) => trusted.get(id)?.key);
    const failWith = (seq: number, reason: VerifyFailureReason, message: string): VerifyReport => ({
      ok: false,
      checked,
      head,
      failure: { seq, reason, message },
    });
    if (!h.ok) return failWith(checked + 1, "head_invalid", h.message);
    if (h.head.seq > checked) {
      return failWith(
        checked + 1,
        "truncated",
        `journal ends at seq ${checked}, the signed head is at seq ${h.head.seq}`,
      );
    }
    if (hashAtExpectedSeq !== h.head.hash) {
      return failWith(
        h.head.seq,
        "head_mismatch",
        `entry ${h.head.seq} is not the one the signed head names`,
      );
    }
  }
  return { ok: true, checked, head, keys: [...trusted.keys()] };
}

function headOf(e: JournalEntry): JournalHead {
  return { seq: e.seq, hash: e.hash, time: e.time, key_id: e.key_id };
}
