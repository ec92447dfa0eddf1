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
    const text = m.text, ends = m.ends, sigs = new Array(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      sigs[i] = sign(null, Buffer.from(text.slice(start, ends[i]), "utf8"), signer).toString("base64url");
      start = ends[i];
    }
    parentPort.postMessage({ id: m.id, texts: sigs });
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

interface Reply {
  id: number;
  bad?: number;
  texts?: string[];
}

export interface SignatureJob {
  seq: number;
  message: Buffer;
  signature: Buffer;
  keyIndex: number;
}

interface Job {
  worker: Worker;
  done: (m: Reply) => void;
  fail: (err: Error) => void;
}

/** A fixed set of workers; verifyBatch resolves with the seq of the first bad signature, or null; signTexts returns signatures. */
export class CryptoPool {
  readonly #workers: Worker[];
  readonly #waiting = new Map<number, Job>();
  readonly #busy = new Map<Worker, number>();
  readonly #dead = new Set<Worker>();
  #nextId = 0;
  #turn = 0;

  constructor(size: number = availableParallelism()) {
    this.#workers = Array.from({ length: Math.max(1, size) }, () => {
      const w = new Worker(WORKER_SOURCE, { eval: true });
      w.on("message", (m: Reply) => {
        const job = this.#waiting.get(m.id);
        this.#waiting.delete(m.id);
        this.#release(w);
        job?.done(m);
      });
      // One listener per worker, not one per job: a worker that fails fails every
      // job it holds, and gets no more.
      const lost = (err: Error) => {
        this.#dead.add(w);
        for (const [id, job] of this.#waiting) {
          if (job.worker !== w) continue;
          this.#waiting.delete(id);
          job.fail(err);
        }
        this.#busy.set(w, 0);
        w.unref();
      };
      w.on("error", lost);
      w.on("exit", (code) => lost(new Error(`crypto worker exited (${code})`)));
      // Idle workers must not keep a process alive (a journal may never be closed);
      // a worker with a job in flight must, or its reply would never arrive.
      w.unref();
      return w;
    });
  }

  #run(worker: Worker | undefined, message: { id: number } & Record<string, unknown>): Promise<Reply> {
    return new Promise((done, fail) => {
      if (worker === undefined) {
        fail(new Error("no crypto worker is running"));
        return;
      }
      this.#waiting.set(message.id, { worker, done, fail });
      const n = this.#busy.get(worker) ?? 0;
      if (n === 0) worker.ref();
      this.#busy.set(worker, n + 1);
      worker.postMessage(message);
    });
  }

  #release(w: Worker): void {
    const n = (this.#busy.get(w) ?? 1) - 1;
    this.#busy.set(w, n);
    if (n === 0) w.unref();
  }

  /** The next live worker in turn. */
  #nextWorker(): Worker | undefined {
    for (let i = 0; i < this.#workers.length; i++) {
      const w = this.#workers[this.#turn++ % this.#workers.length]!;
      if (!this.#dead.has(w)) return w;
    }
    return undefined;
  }

  /** The live worker with the fewest jobs in flight. */
  #leastBusy(): Worker | undefined {
    let best: Worker | undefined;
    for (const w of this.#workers) {
      if (this.#dead.has(w)) continue;
      if (best === undefined || (this.#busy.get(w) ?? 0) < (this.#busy.get(best) ?? 0)) best = w;
    }
    return best;
  }

  get size(): number {
    return this.#workers.length;
  }

  addKey(index: number, key: KeyObject): void {
    const der = key.export({ format: "der", type: "spki" });
    for (const w of this.#workers) w.postMessage({ op: "key", index, der });
  }

  async verifyBatch(jobs: readonly SignatureJob[]): Promise<number | null> {
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
    const m = await this.#run(this.#nextWorker(), {
      op: "batch",
      id: this.#nextId++,
      data,
      ends,
      sigs,
      kidx,
    });
    const bad = m.bad ?? -1;
    return bad < 0 ? null : jobs[bad]!.seq;
  }

  /** Installs the private key that `signTexts` uses, in every worker (ordered before later jobs). */
  setSigner(key: KeyObject): void {
    const der = key.export({ format: "der", type: "pkcs8" });
    for (const w of this.#workers) w.postMessage({ op: "signer", der });
  }

  /**
   * Ed25519-signs the UTF-8 bytes of each text with the installed key on the least
   * busy worker; resolves with base64url signatures in order. Strings, not bytes,
   * cross the thread boundary so that encoding happens off the calling thread.
   */
  async signTexts(texts: readonly string[]): Promise<string[]> {
    // One string and its cut points: cheaper to post than an array of strings.
    const ends = new Uint32Array(texts.length);
    let at = 0;
    for (let i = 0; i < texts.length; i++) {
      at += texts[i]!.length;
      ends[i] = at;
    }
    const text = texts.join("");
    const m = await this.#run(this.#leastBusy(), { op: "sign", id: this.#nextId++, text, ends });
    return m.texts!;
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
