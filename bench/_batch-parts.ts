// The parts of a segment-journal batch's fixed cost, each timed alone (CPU µs per
// operation, process.cpuUsage), for `bench -- journal-batch`: the writers' lock, the
// refresh's system calls, chaining and sealing a one-entry batch (one Ed25519 batch
// signature), the batch's write, and the durable sync three ways — fdatasyncSync on the
// event loop (the floor, not an option: it blocks the loop), fdatasync on libuv's pool
// (what the journal does), and a dedicated worker thread woken through
// Atomics.wait/Atomics.waitAsync (the alternative evaluated in issue 35).
import { closeSync, existsSync, fdatasync, fdatasyncSync, fstatSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { isoTime } from "../src/contracts/index.js";
import { generateKeyPair } from "../src/crypto/index.js";
import { batchSealer, chain, type Tip } from "../src/journal/sealer.js";
import { SegmentLock } from "../src/journal/segment-lock.js";

export interface Part {
  name: string;
  cpuUs: number;
}

function timed(name: string, n: number, fn: () => void): Part {
  for (let i = 0; i < Math.min(n, 500); i++) fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const c = process.cpuUsage(c0);
  return { name, cpuUs: (c.user + c.system) / n };
}

async function timedAsync(name: string, n: number, fn: () => Promise<void>): Promise<Part> {
  for (let i = 0; i < 200; i++) await fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const c = process.cpuUsage(c0);
  return { name, cpuUs: (c.user + c.system) / n };
}

// The worker sleeps until state[0] is REQUESTED (1), fdatasyncs state[1], stores DONE (2).
const SYNC_WORKER = `
const { workerData } = require("node:worker_threads");
const { fdatasyncSync } = require("node:fs");
const s = new Int32Array(workerData);
for (;;) {
  const v = Atomics.load(s, 0);
  if (v !== 1) { Atomics.wait(s, 0, v); continue; }
  try { fdatasyncSync(s[1]); s[2] = 0; } catch { s[2] = 1; }
  Atomics.store(s, 0, 2);
  Atomics.notify(s, 0);
}`;
type WaitAsync = (a: Int32Array, i: number, v: number) => { async: boolean; value: Promise<string> | string };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync.bind(Atomics);

/** fdatasync by a dedicated worker thread; `close` stops it. */
function syncThread(): { sync: (fd: number) => Promise<void>; close: () => Promise<number> } {
  const state = new Int32Array(new SharedArrayBuffer(12));
  const worker = new Worker(SYNC_WORKER, { eval: true, workerData: state.buffer });
  const sync = async (fd: number) => {
    state[1] = fd;
    Atomics.store(state, 0, 1);
    Atomics.notify(state, 0);
    const w = waitAsync(state, 0, 1);
    if (w.async) await w.value;
    Atomics.store(state, 0, 0);
    if (state[2] !== 0) throw new Error("fdatasync failed");
  };
  return { sync, close: () => worker.terminate() };
}

export async function batchParts(dir: string, n = 3000): Promise<Part[]> {
  const parts: Part[] = [];
  const lock = new SegmentLock(dir, 1000);
  parts.push(
    timed("writers' lock: BEGIN IMMEDIATE + ROLLBACK (SQLite, fcntl)", 20 * n, () => {
      lock.begin();
      lock.end();
    }),
  );
  lock.close();
  const fd = openSync(join(dir, "parts.bin"), "w+", 0o600);
  const missing = join(dir, "00000000000000000042.wjs");
  parts.push(
    timed("refresh: fstat of the tail + existsSync of the next segment", 20 * n, () => {
      fstatSync(fd);
      existsSync(missing);
    }),
  );
  const key = generateKeyPair("ed25519");
  const body = { observation_count: 1, url: "https://api.example.com/v1/items?page=1" };
  const item = {
    type: "ObservationsCollected",
    run_id: "run-1",
    trace_id: null,
    body,
    bodyJson: JSON.stringify(body),
  };
  let tip: Tip | null = null;
  parts.push(
    timed("chain + seal a one-entry batch (one Ed25519 batch signature)", n, () => {
      const c = chain(tip, [item], { signer: key, perEntry: false, time: isoTime(new Date()) });
      batchSealer.seal(c);
      tip = c.tip;
    }),
  );
  const batch = Buffer.alloc(1600, 0x61);
  parts.push(timed("writeSync of a 1.6 KB batch", n, () => void writeSync(fd, batch)));
  const write = () => void writeSync(fd, batch);
  parts.push(
    await timedAsync("write + fdatasyncSync (blocks the event loop: the floor)", n, async () => {
      write();
      fdatasyncSync(fd);
    }),
  );
  parts.push(
    await timedAsync("write + fdatasync on libuv's pool (the journal)", n, () => {
      write();
      return new Promise<void>((res, rej) => fdatasync(fd, (e) => (e ? rej(e) : res())));
    }),
  );
  const thread = syncThread();
  try {
    parts.push(
      await timedAsync("write + fdatasync on a worker (Atomics.wait / waitAsync; evaluated)", n, () => {
        write();
        return thread.sync(fd);
      }),
    );
  } finally {
    await thread.close();
    closeSync(fd);
  }
  return parts;
}
