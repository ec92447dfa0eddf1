// The raw verify floor of a batch-signed segment journal (issue 35): what verifying its
// entries costs with no I/O, no JSON and no chain walk — per entry one SHA-256 of its
// record's bytes (the entry hash's work) and the fold of its Merkle inclusion path,
// per batch one Ed25519 verification — on one core, and split by batches over worker
// threads (this file is also the worker), each timing from one start signal.
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { keyIdOf } from "../src/crypto/index.js";
import { batchMessage, leafHash, parseBatchSignature, rootFromPath } from "../src/journal/merkle.js";
import { listSegments, readWhole } from "../src/journal/segment-files.js";
import { scanBatches, segmentName } from "../src/journal/segment-format.js";

/** One batch, prepared: its records' bytes and each entry's hash and proof (packed), the batch signature. */
interface FloorBatch {
  /** The entry records' payloads back to back; `ends[i]` ends entry i. */
  data: Uint8Array;
  ends: Uint32Array;
  hashes: string[];
  /** The inclusion paths' 32-byte elements back to back; `pathEnds[i]` ends entry i's. */
  paths: Uint8Array;
  pathEnds: Uint32Array;
  firstSeq: number;
  size: number;
  signature: string;
}

function prepare(payloads: readonly Buffer[]): FloorBatch {
  const entries = payloads.map((p) => JSON.parse(p.toString("utf8")) as { hash: string; signature: string });
  const sigs = entries.map((e) => parseBatchSignature(e.signature)!);
  const ends = new Uint32Array(payloads.length);
  const pathEnds = new Uint32Array(payloads.length);
  let at = 0;
  let pat = 0;
  payloads.forEach((p, i) => {
    at += p.length;
    ends[i] = at;
    pat += 32 * sigs[i]!.path.length;
    pathEnds[i] = pat;
  });
  return {
    data: new Uint8Array(Buffer.concat(payloads)),
    ends,
    hashes: entries.map((e) => e.hash),
    paths: new Uint8Array(Buffer.concat(sigs.flatMap((s) => s.path))),
    pathEnds,
    firstSeq: sigs[0]!.firstSeq,
    size: sigs[0]!.size,
    signature: sigs[0]!.signature,
  };
}

/** The batches of a segment journal directory, parsed ahead (the floor excludes reading and parsing). */
export function floorBatches(dir: string): FloorBatch[] {
  const out: FloorBatch[] = [];
  for (const first of listSegments(dir)) {
    for (const b of scanBatches(readWhole(`${dir}/${segmentName(first)}`)).batches)
      out.push(prepare(b.payloads));
  }
  return out;
}

/** Verifies the batches' hashes, proofs and signatures; throws if one fails (the floor of a good journal). */
function checkAll(batches: readonly FloorBatch[], key: KeyObject): void {
  const kid = keyIdOf(key);
  for (const b of batches) {
    const data = Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength);
    const paths = Buffer.from(b.paths.buffer, b.paths.byteOffset, b.paths.byteLength);
    let root: Buffer | null = null;
    let start = 0;
    let pstart = 0;
    for (let i = 0; i < b.ends.length; i++) {
      createHash("sha256").update(data.subarray(start, b.ends[i])).digest();
      start = b.ends[i]!;
      const path: Buffer[] = [];
      for (; pstart < b.pathEnds[i]!; pstart += 32) path.push(paths.subarray(pstart, pstart + 32));
      const r = rootFromPath(leafHash(b.hashes[i]!), i, b.size, path);
      if (r === null || (root !== null && !r.equals(root))) throw new Error("floor: a proof does not fold");
      root = r;
    }
    const msg = Buffer.from(batchMessage(kid, b.firstSeq, b.size, root!), "utf8");
    if (!verify(null, msg, key, Buffer.from(b.signature, "base64url")))
      throw new Error("floor: bad signature");
  }
}

export interface VerifyFloor {
  entries: number;
  oneCoreS: number;
  allCoresS: number;
  cores: number;
  /** CPU µs per entry, all threads. */
  oneCoreCpuUs: number;
  allCoresCpuUs: number;
}

/** The floor on one core (this thread) and on every core (the batches split over workers). */
export async function verifyFloor(batches: readonly FloorBatch[], key: KeyObject): Promise<VerifyFloor> {
  const entries = batches.reduce((n, b) => n + b.ends.length, 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  checkAll(batches, key);
  const oneCoreS = (performance.now() - t0) / 1000;
  const cpu1 = process.cpuUsage(cpu0);
  const cores = availableParallelism();
  const der = key.export({ format: "der", type: "spki" });
  const workers = Array.from({ length: cores }, (_, k) => {
    const w = new Worker(new URL(import.meta.url), {
      workerData: null,
    });
    w.postMessage({ der, batches: batches.filter((_, i) => i % cores === k) });
    return w;
  });
  await Promise.all(workers.map((w) => new Promise((ok) => w.once("message", ok))));
  const cpu2 = process.cpuUsage();
  const t1 = performance.now();
  for (const w of workers) w.postMessage("go");
  await Promise.all(workers.map((w) => new Promise((ok) => w.once("message", ok))));
  const allCoresS = (performance.now() - t1) / 1000;
  const cpu3 = process.cpuUsage(cpu2);
  await Promise.all(workers.map((w) => w.terminate()));
  const us = (c: NodeJS.CpuUsage) => (c.user + c.system) / entries;
  return { entries, oneCoreS, allCoresS, cores, oneCoreCpuUs: us(cpu1), allCoresCpuUs: us(cpu3) };
}

if (!isMainThread && parentPort !== null) {
  const port = parentPort;
  let job: { der: Uint8Array; batches: FloorBatch[] } | null = null;
  port.on("message", (m: "go" | { der: Uint8Array; batches: FloorBatch[] }) => {
    if (m !== "go") {
      job = m;
      port.postMessage("ready");
      return;
    }
    const j = job!;
    checkAll(j.batches, createPublicKey({ key: Buffer.from(j.der), format: "der", type: "spki" }));
    port.postMessage("done");
  });
}
