// A worker thread of the parallel segment verifier (segment-verify.ts). It is handed a
// byte range of a segment already in shared memory (whole batches), scans and checks
// it itself — commit records, strict JSON, entry shape, hashes, the chain inside the
// range, signatures and batch proofs, bodies — with verifyJournal, and posts back only
// what the main thread needs to link the range to the one before: its first entry's
// seq, prev_hash and key, its head, the keys its rotations introduced, and the
// records a chain scan must see (entry 1 and checkpoints).
import { createPublicKey } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { Keyring } from "../crypto/index.js";
import { CHECKPOINT, defaultEventTypes, KEY_ROTATED } from "./event-types.js";
import { scanBatches } from "./segment-format.js";
import { scanRecords } from "./segment-read.js";
import type { RangeJob, RangeResult, Seen } from "./segment-verify-types.js";
import { MalformedRecord } from "./store.js";
import { verifyJournal } from "./verify.js";

interface Raw {
  seq?: unknown;
  type?: unknown;
  body?: unknown;
  hash?: unknown;
  prev_hash?: unknown;
  key_id?: unknown;
}

async function verifyRange(job: RangeJob): Promise<RangeResult> {
  const buf = Buffer.from(job.data, 0, job.end);
  const scan = scanBatches(buf, job.start);
  const keyring = new Keyring(
    job.keys.map((der) => createPublicKey({ key: Buffer.from(der), format: "der", type: "spki" })),
  );
  let first: Raw | null = null;
  let last: Raw | null = null;
  let hashAt: string | null = null;
  const seen: Seen[] = [];
  const unknownTypes = new Set<string>();
  const rotations: Seen[] = [];
  function* tap(): Iterable<unknown> {
    for (const raw of scanRecords(job.name, scan)) {
      if (!(raw instanceof MalformedRecord) && typeof raw === "object" && raw !== null) {
        const r = raw as Raw;
        first ??= r;
        last = r;
        const seq = typeof r.seq === "number" ? r.seq : 0;
        const type = typeof r.type === "string" ? r.type : "";
        if (type === CHECKPOINT || seq === 1)
          seen.push({ seq, type, body: type === CHECKPOINT ? r.body : null });
        if (type === KEY_ROTATED) rotations.push({ seq, type, body: r.body });
        if (!defaultEventTypes.has(type)) unknownTypes.add(type);
        if (seq === job.hashAt && typeof r.hash === "string") hashAt = r.hash;
      }
      yield raw;
    }
  }
  const report = await verifyJournal(tap(), keyring, {
    resume: job.resume,
    allowUnknownTypes: job.allowUnknownTypes,
  });
  if (!report.ok) return { id: job.id, ok: false, reason: report.failure.reason, keyId: keyOf(first) };
  const f = first as Raw | null;
  const l = last as Raw | null;
  if (f === null || l === null || report.head === null) return { id: job.id, ok: true, empty: true };
  const lastRotation = l.type === KEY_ROTATED ? (l.body as { new_key_id: string }).new_key_id : null;
  return {
    id: job.id,
    ok: true,
    empty: false,
    firstSeq: f.seq as number,
    firstPrevHash: f.prev_hash as string,
    firstKeyId: f.key_id as string,
    head: report.head,
    chainKey: lastRotation ?? report.head.key_id,
    rotations,
    seen,
    unknownTypes: [...unknownTypes],
    hashAt,
  };
}

function keyOf(r: Raw | null): string | null {
  return r !== null && typeof r.key_id === "string" ? r.key_id : null;
}

parentPort?.on("message", (job: RangeJob) => {
  verifyRange(job).then(
    (r) => parentPort?.postMessage(r),
    (err: Error) => parentPort?.postMessage({ id: job.id, ok: false, reason: "error", error: err.message }),
  );
});
