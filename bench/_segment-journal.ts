// Segment journal measurements shared by `bench -- decide` and `bench -- journal`: the
// disk floor (a 4 KB append + fdatasync, p50/p99, measured here, in the directory the
// journals use), the raw batch-sign floor (chaining + Merkle sealing with no store),
// and a large journal's cold start, full reindex and verification (1 core vs all).
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { isoTime } from "../src/contracts/index.js";
import { generateKeyPair, type KeyPair, Keyring } from "../src/crypto/index.js";
import {
  batchSealer,
  openJournal,
  SegmentJournalStore,
  SegmentSource,
  segmentDir,
  segmentRecords,
  verifyJournal,
  verifySource,
} from "../src/journal/index.js";
import { chain, type Unchained } from "../src/journal/sealer.js";
import { type Stats, summarize } from "./_stats.js";
import { floorBatches, verifyFloor } from "./_verify-floor.js";

/** p50/p99 of a 4 KB append + fdatasync to a file in `dir` (the machine's durable-write floor). */
export function diskFloor(dir: string, n = 2000): Stats {
  const fd = openSync(join(dir, "disk-floor.bin"), "w", 0o600);
  const block = Buffer.alloc(4096, 0x61);
  const lat = new Float64Array(n);
  try {
    for (let i = 0; i < 50; i++) {
      writeSync(fd, block);
      fdatasyncSync(fd);
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      writeSync(fd, block);
      fdatasyncSync(fd);
      lat[i] = (performance.now() - s) * 1000;
    }
    return summarize("disk floor: 4 KB append + fdatasync", lat, performance.now() - t0, cpu0);
  } finally {
    closeSync(fd);
  }
}

/** Chaining and batch (Merkle) sealing of `n` prepared appends in batches of `batch`, no store: ops/s and CPU µs/op. */
export function batchSignFloor(items: readonly Unchained[], n: number, batch = 64): Stats {
  const signer = generateKeyPair("ed25519");
  let tip = null as ReturnType<typeof chain>["tip"] | null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let done = 0; done < n; done += batch) {
    const part = Array.from(
      { length: Math.min(batch, n - done) },
      (_, i) => items[(done + i) % items.length]!,
    );
    const c = chain(tip, part, { signer, perEntry: false, time: isoTime(Date.now()) });
    batchSealer.seal(c);
    tip = c.tip;
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const per = new Float64Array(1).fill((ms * 1000) / n);
  return {
    ...summarize(`raw batch-sign floor (chain + Merkle seal, batches of ${batch}, no store)`, per, ms),
    n,
    opsPerSec: (n / ms) * 1000,
    cpuUs: (cpu.user + cpu.system) / n,
  };
}

export interface VerifyTimes {
  /** Raw verify floor (hash + proof + signature, no I/O, no JSON), one core and all cores, seconds. */
  floor1S: number;
  floorAllS: number;
  floor1CpuUs: number;
  floorAllCpuUs: number;
  /** `journal verify` from the segments, one thread and all cores, seconds and CPU µs/entry (all threads). */
  verify1S: number;
  verifyAllS: number;
  verify1CpuUs: number;
  verifyAllCpuUs: number;
  cores: number;
}

export interface ColdStart extends VerifyTimes {
  entries: number;
  buildS: number;
  openMs: number;
  reindexS: number;
}

/** Writes an `entries`-entry segment journal at `path` (batch signatures, commit batches of up to 4096). */
export async function buildJournal(path: string, key: KeyPair, entries: number): Promise<void> {
  const store = SegmentJournalStore.open(path);
  const journal = await openJournal({ store, signer: key, signatureMode: "batch", maxBatch: 4096 });
  const window = 4096;
  for (let done = 0; done < entries; done += window) {
    const k = Math.min(window, entries - done);
    await Promise.all(
      Array.from({ length: k }, (_, i) =>
        journal.append({
          type: "ObservationsCollected",
          run_id: `run-${(done + i) % 997}`,
          body: { observation_count: done + i, note: "tool crm.update_contact returned 200" },
        }),
      ),
    );
  }
  await journal.close();
  await store.close();
}

/** The verify rows of a journal at `path`, in one run: the raw floor, then `journal verify` on 1 core and on all. */
export async function verifyTimes(path: string, key: KeyPair, entries: number): Promise<VerifyTimes> {
  const keyring = new Keyring([key.publicKey]);
  const dir = segmentDir(path);
  const floor = await verifyFloor(floorBatches(dir), key.publicKey);
  const time = async (workers: number) => {
    const cpu0 = process.cpuUsage();
    const s = performance.now();
    const r =
      workers === 0
        ? await verifyJournal(segmentRecords(dir), keyring)
        : await verifySource(new SegmentSource(dir), keyring, { workers });
    if (!r.ok || r.checked !== entries) throw new Error(`journal does not verify: ${JSON.stringify(r)}`);
    const cpu = process.cpuUsage(cpu0);
    return { s: (performance.now() - s) / 1000, cpuUs: (cpu.user + cpu.system) / entries };
  };
  const cores = availableParallelism();
  const one = await time(0);
  const all = await time(cores);
  return {
    floor1S: floor.oneCoreS,
    floorAllS: floor.allCoresS,
    floor1CpuUs: floor.oneCoreCpuUs,
    floorAllCpuUs: floor.allCoresCpuUs,
    verify1S: one.s,
    verifyAllS: all.s,
    verify1CpuUs: one.cpuUs,
    verifyAllCpuUs: all.cpuUs,
    cores,
  };
}

/** Builds an `entries`-entry segment journal (batch signatures), then times open, reindex and verify. */
export async function coldStart(dir: string, entries: number): Promise<ColdStart> {
  const key = generateKeyPair("ed25519");
  const path = join(dir, "cold.db");
  const t0 = performance.now();
  await buildJournal(path, key, entries);
  const buildS = (performance.now() - t0) / 1000;
  // Cold start: open (tail segment scanned, torn-tail check, index cross-checked) and read the head.
  const o0 = performance.now();
  const store = SegmentJournalStore.open(path);
  const j2 = await openJournal({ store, signer: key, signatureMode: "batch" });
  const openMs = performance.now() - o0;
  await j2.close();
  const r0 = performance.now();
  await store.reindex();
  const reindexS = (performance.now() - r0) / 1000;
  await store.close();
  return { entries, buildS, openMs, reindexS, ...(await verifyTimes(path, key, entries)) };
}

/** The verify table: floor and `journal verify`, one core and all, and the ratios. */
export function verifyTable(entries: number, v: VerifyTimes): string {
  const rate = (s: number) => `${s.toFixed(1)} s (${Math.round(entries / s).toLocaleString("en")}/s)`;
  const floorRatio = v.floor1S / v.floorAllS;
  const ratio = v.verify1S / v.verifyAllS;
  return (
    `| figure (${entries.toLocaleString("en")} entries, ${v.cores} cores) | one core | all cores | all vs one |\n|---|---|---|---|\n` +
    `| raw verify floor (SHA-256 + Merkle fold per entry, Ed25519 per batch; no I/O, no JSON) | ${rate(v.floor1S)}, ${v.floor1CpuUs.toFixed(1)} CPU µs/entry | ${rate(v.floorAllS)}, ${v.floorAllCpuUs.toFixed(1)} CPU µs/entry | ${floorRatio.toFixed(2)}× |\n` +
    `| journal verify from the segments | ${rate(v.verify1S)}, ${v.verify1CpuUs.toFixed(1)} CPU µs/entry | ${rate(v.verifyAllS)}, ${v.verifyAllCpuUs.toFixed(1)} CPU µs/entry (all threads) | ${ratio.toFixed(2)}× (target ≥ 1.8×: ${ratio >= 1.8 ? "met" : "MISSED"}) |\n` +
    `| journal verify vs the floor | ${(v.verify1S / v.floor1S).toFixed(1)}× the floor's time | ${(v.verifyAllS / v.floorAllS).toFixed(1)}× the floor's time | |\n`
  );
}
