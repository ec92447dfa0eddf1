// `journal verify` of a segment journal on every core. The main thread reads each
// segment once into shared memory and walks only its record frames (5 bytes a record)
// to cut it into ranges of whole batches; worker threads check each range completely
// (segment-verify-worker.ts: commit records, JSON, hashes, the chain inside the range,
// signatures, batch proofs, bodies) and the main thread only links the ranges: each
// range's first entry must have the next seq, the previous range's head hash as its
// prev_hash and the chain's key. Anything a range reports wrong, or a link that does
// not hold, sends the whole journal to the one-thread verifier, which names the first
// bad entry exactly as it always has: the report is the same either way.

import { createPublicKey, type KeyObject } from "node:crypto";
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { JsonWebKey, Keyring } from "../crypto/index.js";
import { GENESIS_HASH, type JournalHead } from "./entry.js";
import { defaultEventTypes } from "./event-types.js";
import { listSegments } from "./segment-files.js";
import {
  COMMIT_KIND,
  COMMIT_SIZE,
  ENTRY_KIND,
  FRAME_SIZE,
  HEADER_SIZE,
  headerProblem,
  segmentName,
} from "./segment-format.js";
import { SegmentSource } from "./segment-read.js";
import type { RangeJob, RangeResult, Seen } from "./segment-verify-types.js";
import {
  finishReport,
  type JournalSource,
  type VerifyOptions,
  type VerifyReport,
  verifyJournal,
} from "./verify.js";

/** A range is cut after the batch that brings it to this many bytes. */
const RANGE_BYTES = 2 << 20;

/** The compiled worker: beside this module, or (running from the TypeScript sources) in dist/. */
function workerFile(): URL | null {
  const here = fileURLToPath(import.meta.url);
  const js = here.replace(/segment-verify\.(ts|js)$/, "segment-verify-worker.js");
  const candidates = here.endsWith(".ts")
    ? [js.replace(/([\\/])src([\\/]journal[\\/])/, "$1dist$1src$2")]
    : [js];
  const found = candidates.find((f) => existsSync(f));
  return found === undefined ? null : pathToFileURL(found);
}

/**
 * Verifies a journal source: a segment directory (`SegmentSource`) with `workers` > 0
 * on worker threads, anything else (or when the workers cannot run) with verifyJournal.
 */
export async function verifySource(
  source: JournalSource,
  keyring: Keyring,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const report = source instanceof SegmentSource ? await verifyInParallel(source, keyring, options) : null;
  return report ?? (await verifyJournal(source, keyring, options));
}

/**
 * The parallel verification of a segment directory: its report when every range verified
 * and linked, null when the one-thread verifier must decide (something is wrong, a body
 * type only this thread's registry knows, no workers asked for, or no compiled worker).
 */
export async function verifyInParallel(
  source: SegmentSource,
  keyring: Keyring,
  options: VerifyOptions = {},
): Promise<VerifyReport | null> {
  const workers = options.workers ?? 0;
  const file = workerFile();
  const customRegistry = options.registry !== undefined && options.registry !== defaultEventTypes;
  if (workers <= 0 || file === null || customRegistry) return null;
  const pool = new RangePool(workers, file);
  try {
    return await linkRanges(source, keyring, options, pool);
  } finally {
    await pool.close();
  }
}

interface Range {
  data: SharedArrayBuffer;
  name: string;
  start: number;
  end: number;
}

/** A segment read whole into shared memory, or null when the file cannot be read so. */
function readShared(path: string): SharedArrayBuffer | null {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const data = new SharedArrayBuffer(size);
    const view = new Uint8Array(data);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, view, got, size - got, got);
      if (n === 0) return null;
      got += n;
    }
    return data;
  } finally {
    closeSync(fd);
  }
}

/** Offsets that cut a segment's bytes into ranges of whole batches (frames only; the worker checks them). */
export function cutPoints(buf: Buffer, target = RANGE_BYTES): number[] {
  const cuts: number[] = [];
  let at = HEADER_SIZE;
  let last = HEADER_SIZE;
  while (at < buf.length) {
    if (at + FRAME_SIZE > buf.length) break;
    const kind = buf[at];
    if (kind === ENTRY_KIND) at += FRAME_SIZE + buf.readUInt32BE(at + 1);
    else if (kind === COMMIT_KIND) {
      at += COMMIT_SIZE;
      if (at - last >= target && at < buf.length) {
        cuts.push(at);
        last = at;
      }
    } else break;
  }
  return cuts;
}

/** The ranges of a journal directory in order; null when a segment's header is bad or it cannot be read. */
function* ranges(dir: string): Iterable<Range | null> {
  for (const first of listSegments(dir)) {
    const name = segmentName(first);
    const data = readShared(join(dir, name));
    const buf = data === null ? null : Buffer.from(data);
    if (data === null || buf === null || headerProblem(buf, first) !== null) {
      yield null;
      return;
    }
    let start = HEADER_SIZE;
    for (const cut of [...cutPoints(buf), buf.length]) {
      if (cut > start) yield { data, name, start, end: cut };
      start = cut;
    }
  }
}

/** What the main thread knows of the chain after the ranges linked so far. */
interface Link {
  expectedSeq: number;
  prevHash: string;
  chainKey: string | null;
  head: JournalHead | null;
  hashAt: string | null;
  seen: Seen[];
}

/** Runs the ranges on the pool, in order, linking each to the one before; null: verify on one thread instead. */
async function linkRanges(
  source: SegmentSource,
  keyring: Keyring,
  options: VerifyOptions,
  pool: RangePool,
): Promise<VerifyReport | null> {
  const trusted = new Map<string, { key: KeyObject; der: Uint8Array }>();
  const trust = (id: string, key: KeyObject) => {
    if (trusted.has(id) || key.asymmetricKeyType !== "ed25519") return;
    trusted.set(id, { key, der: key.export({ format: "der", type: "spki" }) });
  };
  for (const id of keyring.ids()) trust(id, keyring.get(id)!);
  const expect = options.expectHead as { seq?: unknown } | undefined;
  const hashAt = typeof expect?.seq === "number" && Number.isSafeInteger(expect.seq) ? expect.seq : 0;
  const link: Link = {
    expectedSeq: 1,
    prevHash: GENESIS_HASH,
    chainKey: null,
    head: null,
    hashAt: null,
    seen: [],
  };
  let id = 0;
  const job = (r: Range, resume: boolean): RangeJob => ({
    data: r.data,
    name: r.name,
    start: r.start,
    end: r.end,
    id: id++,
    keys: [...trusted.values()].map((k) => k.der),
    resume,
    allowUnknownTypes: options.allowUnknownTypes ?? true,
    hashAt,
  });
  const inflight: { job: RangeJob; result: Promise<RangeResult> }[] = [];
  const settle = async (): Promise<boolean> => {
    const { job: j, result } = inflight.shift()!;
    let r = await result;
    // A range after a key rotation that its job did not know of yet: run it again with the new key.
    if (!r.ok && r.reason === "unknown_key" && j.keys.length < trusted.size)
      r = await pool.run(job(j, j.resume));
    return linkOne(r, link, trust, options);
  };
  let resume = false;
  for (const r of ranges(source.dir)) {
    if (r === null) return null;
    const j = job(r, resume);
    resume = true;
    inflight.push({ job: j, result: pool.run(j) });
    while (inflight.length >= pool.size * 8) if (!(await settle())) return null;
  }
  while (inflight.length > 0) if (!(await settle())) return null;
  replay(source, link);
  return finishReport(link.expectedSeq - 1, link.head, link.hashAt, options.expectHead, trusted);
}

/** Links one range's result to the chain so far; false when it does not verify or does not link. */
function linkOne(
  r: RangeResult,
  link: Link,
  trust: (id: string, key: KeyObject) => void,
  options: VerifyOptions,
): boolean {
  if (!r.ok) return false;
  if (r.empty) return true;
  const registry = options.registry ?? defaultEventTypes;
  if (r.unknownTypes.some((t) => registry.has(t))) return false;
  const linked =
    r.firstSeq === link.expectedSeq &&
    r.firstPrevHash === link.prevHash &&
    (link.chainKey === null ? r.firstSeq === 1 : r.firstKeyId === link.chainKey);
  if (!linked) return false;
  for (const rot of r.rotations) {
    const b = rot.body as { new_key_id: string; new_public_key: JsonWebKey };
    trust(b.new_key_id, createPublicKey({ key: b.new_public_key, format: "jwk" }));
  }
  link.expectedSeq = r.head.seq + 1;
  link.prevHash = r.head.hash;
  link.chainKey = r.chainKey;
  link.head = r.head;
  link.hashAt ??= r.hashAt;
  link.seen.push(...r.seen);
  if (options.onProgress && Math.floor(r.head.seq / 1000) > Math.floor((r.firstSeq - 1) / 1000)) {
    options.onProgress(r.head.seq - (r.head.seq % 1000));
  }
  return true;
}

/** Shows the source's observer (a chain scan) entry 1 and the checkpoints, in order, skipping the rest. */
function replay(source: SegmentSource, link: Link): void {
  const o = source.observer;
  if (o === null) return;
  let position = 0;
  for (const s of link.seen) {
    o.skip(s.seq - 1 - position);
    o.observe({ type: s.type, body: s.body });
    position = s.seq;
  }
  o.skip(link.expectedSeq - 1 - position);
}

/**
 * Worker threads that verify ranges; each range goes to the worker with the fewest in
 * flight (on a loaded machine one thread may get less of a core than another). A job
 * whose worker fails comes back as not ok.
 */
class RangePool {
  readonly #workers: Worker[];
  readonly #waiting = new Map<number, { worker: Worker; done: (r: RangeResult) => void }>();
  readonly #busy = new Map<Worker, number>();

  constructor(size: number, file: URL) {
    this.#workers = Array.from({ length: Math.max(1, Math.min(size, availableParallelism())) }, () => {
      const w = new Worker(file);
      this.#busy.set(w, 0);
      w.on("message", (r: RangeResult) => {
        const job = this.#waiting.get(r.id);
        this.#waiting.delete(r.id);
        this.#busy.set(w, (this.#busy.get(w) ?? 1) - 1);
        job?.done(r);
      });
      const lost = () => {
        for (const [id, job] of this.#waiting) job.done({ id, ok: false, reason: "error" });
        this.#waiting.clear();
      };
      w.on("error", lost);
      w.on("exit", lost);
      return w;
    });
  }

  get size(): number {
    return this.#workers.length;
  }

  run(job: RangeJob): Promise<RangeResult> {
    let worker = this.#workers[0]!;
    for (const w of this.#workers) if (this.#busy.get(w)! < this.#busy.get(worker)!) worker = w;
    this.#busy.set(worker, this.#busy.get(worker)! + 1);
    return new Promise((done) => {
      this.#waiting.set(job.id, { worker, done });
      worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
