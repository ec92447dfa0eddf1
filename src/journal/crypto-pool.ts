// Ed25519 verification is the verifier's dominant cost (about 3x a signature), and
// signatures are independent of each other once the chain has been walked, so
// they can be checked on every core. The worker is plain CommonJS evaluated from a
// string: it needs only node:crypto, and this way it runs unchanged from the
// TypeScript sources under vitest and from dist/.
import type { KeyObject } from "node:crypto";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createPublicKey, verify } = require("node:crypto");
const keys = [];
parentPort.on("message", (m) => {
  if (m.op === "key") { keys[m.index] = createPublicKey({ key: Buffer.from(m.der), format: "der", type: "spki" }); return; }
  const view = (u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  const data = view(m.data), ends = m.ends, sigs = view(m.sigs), kidx = m.kidx;
  let bad = -1, start = 0;
  for (let i = 0; i < ends.length; i++) {
    const ok = verify(null, data.subarray(start, ends[i]), keys[kidx[i]], sigs.subarray(64 * i, 64 * i + 64));
    start = ends[i];
    if (!ok) { bad = i; break; }
  }
  parentPort.postMessage({ id: m.id, bad });
});
`;

export interface SignatureJob {
  seq: number;
  message: Buffer;
  signature: Buffer;
  keyIndex: number;
}

/** A fixed set of workers; verifyBatch resolves with the seq of the first bad signature, or null. */
export class VerifyPool {
  readonly #workers: Worker[];
  readonly #waiting = new Map<number, (bad: number) => void>();
  #nextId = 0;
  #turn = 0;

  constructor(size: number = availableParallelism()) {
    this.#workers = Array.from({ length: Math.max(1, size) }, () => {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.on("message", (m: { id: number; bad: number }) => {
        const done = this.#waiting.get(m.id);
        this.#waiting.delete(m.id);
        done?.(m.bad);
      });
      return w;
    });
  }

  get size(): number {
    return this.#workers.length;
  }

  addKey(index: number, key: KeyObject): void {
    const der = key.export({ format: "der", type: "spki" });
    for (const w of this.#workers) w.postMessage({ op: "key", index, der });
  }

  verifyBatch(jobs: readonly SignatureJob[]): Promise<number | null> {
    const total = jobs.reduce((n, j) => n + j.message.length, 0);
    const data = Buffer.allocUnsafe(total);
    const sigs = Buffer.allocUnsafe(64 * jobs.length);
    const ends = new Uint32Array(jobs.length);
    const kidx = new Uint16Array(jobs.length);
    let at = 0;
    jobs.forEach((j, i) => {
      j.message.copy(data, at);
      at += j.message.length;
      ends[i] = at;
      j.signature.copy(sigs, 64 * i);
      kidx[i] = j.keyIndex;
    });
    const id = this.#nextId++;
    const worker = this.#workers[this.#turn++ % this.#workers.length]!;
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      worker.once("error", onError);
      this.#waiting.set(id, (bad) => {
        worker.off("error", onError);
        resolve(bad < 0 ? null : jobs[bad]!.seq);
      });
      worker.postMessage({ op: "batch", id, data, ends, sigs, kidx });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
