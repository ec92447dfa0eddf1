// Ed25519 work spread over cores. Verification is the verifier's dominant cost
// (about 3x a signature) and signing the journal's; both are independent per entry
// once the chain (which links hashes, not signatures) has been computed, so they
// can run on every core. The worker is plain CommonJS evaluated from a
// string: it needs only node:crypto, and this way it runs unchanged from the
// TypeScript sources under vitest and from dist/.
import type { KeyObject } from "node:crypto";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createPrivateKey, createPublicKey, sign, verify } = require("node:crypto");
const keys = [];
let signer = null;
parentPort.on("message", (m) => {
  if (m.op === "key") { keys[m.index] = createPublicKey({ key: Buffer.from(m.der), format: "der", type: "spki" }); return; }
  if (m.op === "signer") { signer = createPrivateKey({ key: Buffer.from(m.der), format: "der", type: "pkcs8" }); return; }
  if (m.op === "sign") {
    const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), ends = m.ends;
    const sigs = Buffer.allocUnsafe(64 * ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) { sign(null, data.subarray(start, ends[i]), signer).copy(sigs, 64 * i); start = ends[i]; }
    parentPort.postMessage({ id: m.id, sigs }, [sigs.buffer]);
    return;
  }
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

/** A fixed set of workers; verifyBatch resolves with the seq of the first bad signature, or null; sign returns signatures. */
export class CryptoPool {
  readonly #workers: Worker[];
  readonly #waiting = new Map<number, (m: { bad?: number; sigs?: Uint8Array }) => void>();
  #nextId = 0;
  #turn = 0;

  constructor(size: number = availableParallelism()) {
    this.#workers = Array.from({ length: Math.max(1, size) }, () => {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.on("message", (m: { id: number; bad?: number; sigs?: Uint8Array }) => {
        const done = this.#waiting.get(m.id);
        this.#waiting.delete(m.id);
        this.#release(w);
        done?.(m);
      });
      // Idle workers must not keep a process alive (a journal may never be closed);
      // a worker with a job in flight must, or its reply would never arrive.
      w.unref();
      return w;
    });
  }

  readonly #busy = new Map<Worker, number>();

  #post(w: Worker, message: unknown): void {
    const n = this.#busy.get(w) ?? 0;
    if (n === 0) w.ref();
    this.#busy.set(w, n + 1);
    w.postMessage(message);
  }

  #release(w: Worker): void {
    const n = (this.#busy.get(w) ?? 1) - 1;
    this.#busy.set(w, n);
    if (n === 0) w.unref();
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
      this.#waiting.set(id, (m) => {
        worker.off("error", onError);
        const bad = m.bad ?? -1;
        resolve(bad < 0 ? null : jobs[bad]!.seq);
      });
      this.#post(worker, { op: "batch", id, data, ends, sigs, kidx });
    });
  }

  /** Installs the private key that `sign` uses, in every worker. */
  setSigner(key: KeyObject): void {
    const der = key.export({ format: "der", type: "pkcs8" });
    for (const w of this.#workers) w.postMessage({ op: "signer", der });
  }

  /** Ed25519-signs each message with the installed key, spread over the workers; signatures in order. */
  async sign(messages: readonly Buffer[]): Promise<Buffer[]> {
    const per = Math.ceil(messages.length / this.#workers.length);
    const parts: Promise<Buffer[]>[] = [];
    for (let at = 0; at < messages.length; at += per)
      parts.push(this.#signChunk(messages.slice(at, at + per)));
    return (await Promise.all(parts)).flat();
  }

  #signChunk(messages: readonly Buffer[]): Promise<Buffer[]> {
    const data = Buffer.concat(messages as Buffer[]);
    const ends = new Uint32Array(messages.length);
    let at = 0;
    messages.forEach((m, i) => {
      at += m.length;
      ends[i] = at;
    });
    const id = this.#nextId++;
    const worker = this.#workers[this.#turn++ % this.#workers.length]!;
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      worker.once("error", onError);
      this.#waiting.set(id, (m) => {
        worker.off("error", onError);
        const sigs = Buffer.from(m.sigs!.buffer, m.sigs!.byteOffset, m.sigs!.byteLength);
        resolve(Array.from({ length: messages.length }, (_, i) => sigs.subarray(64 * i, 64 * i + 64)));
      });
      this.#post(worker, { op: "sign", id, data, ends });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
