// Journal throughput: appends/s and verified entries/s for 100k entries, each next
// to its same-run floor — a bare loop of Ed25519 signs (appends) or verifies
// (verification) over messages the size of a real entry's signed bytes. The sign
// floor is measured before and after the appends, and the machine's load is
// printed with it: on a shared machine both move, and a ratio means little without
// them. CPU time per append (all threads of the process) is printed next to CPU
// time per bare sign, which other processes' load does not change much.
// A second table appends ~1.5 KB decision bodies (the Gate's merged decision
// entry) from C concurrent appenders, each awaiting its append before the next,
// as the sidecar does, in both signature modes: per-entry signatures (on this
// thread or on signing workers) and Merkle batch signatures, with the CPU time per
// entry (process.cpuUsage) and the fsyncs per entry (store commits / entries), and
// an extra row for the opt-in durability "os" (never the default).
import { sign as edSign, verify as edVerify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  buildPolicyDecision,
  canonicalJson,
  GATE_DECISION,
  type GateDecisionBody,
  newTraceId,
  sha256Of,
  uuidv7,
} from "../src/contracts/index.js";
import { generateKeyPair, Keyring } from "../src/crypto/index.js";
import {
  builtinEventTypes,
  type OpenJournalOptions,
  openJournal,
  SegmentJournalStore,
  SqliteJournalStore,
  signedText,
  verifyJournal,
} from "../src/journal/index.js";
import { batchSignFloor, coldStart, diskFloor, verifyTable } from "./_segment-journal.js";
import { measure, type Stats, summarize, table } from "./_stats.js";

const N = Number(process.env.JOURNAL_BENCH_N ?? 100_000);
const WINDOW = 1024;
const key = generateKeyPair("ed25519");
const run = uuidv7();
const trace = newTraceId();
const body = (i: number) => ({
  observation_count: i,
  context_size: 4096 + i,
  note: "tool crm.update_contact returned 200; 1 record updated",
});

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

// The Gate's merged decision entry (warden.gate.decision): Warden's detail with the
// DARE record inside (~1.5 KB canonical), checked by its real schema on append()
// and typed by it at compile time on appendBuilt().
const registry = builtinEventTypes();
const decisionBody = (i: number): GateDecisionBody => {
  const dare = buildPolicyDecision({
    run_id: run,
    trace_id: trace,
    tenant_id: "tenant-1",
    environment: "prod",
    subject: {
      agent_instance_id: "spiffe://org/agent/planner#r1",
      subject_id: "spiffe://org/agent/planner",
      attested: true,
    },
    action: { type: "tool.invoke", tool_name: "http.get", tool_category: "read_only" },
    inputs: { request_hash: sha256Of({ i }), context_hash: sha256Of({ c: i }) },
    bundles: { policy_bundle_hash: sha256Of({ p: 1 }), tool_schema_hash: sha256Of({ t: 1 }) },
    result: { decision: "allow", reason_codes: ["ALLOWLIST_MATCH"], obligations: [] },
  });
  return {
    decision_id: dare.decision_id,
    decision: "allow" as const,
    reason_codes: ["ALLOWLIST_MATCH"],
    matched_rules: [{ id: "allow-get", source: "policy.yaml", decision: "allow", reason: "reads are fine" }],
    obligations: [],
    principal_id: "bench-agent",
    tool_class: "http",
    action: "get",
    parameters: { url: `https://api.example.org/data?page=${i}`, headers: { accept: "application/json" } },
    taint: [],
    provenance: [],
    request_hash: sha256Of({ i }),
    context_hash: sha256Of({ c: i }),
    policy_bundle_hash: sha256Of({ p: 1 }),
    dare,
  };
};

interface ModeCase {
  name: string;
  options: Partial<OpenJournalOptions>;
  durability?: "fsync" | "os";
  /** Append with appendBuilt (the runtime's typed path: no zod parse of the body). */
  built?: boolean;
  /** The segment journal (issue 35) instead of the SQLite store. */
  segments?: boolean;
}

/** CPU time of this (the main) thread in µs, from /proc on Linux; NaN elsewhere. */
const mainCpuUs = (): number => {
  try {
    const f = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime, in clock ticks of 10 ms (USER_HZ = 100 on Linux).
    return (Number(f[11]) + Number(f[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
};
interface Row extends Stats {
  concurrency: number | string;
  cpuUs: number;
  mainUs: number;
  /** Store commits per entry: one fsync each in durability "fsync". */
  fsyncs?: number;
  /** The journal file, kept for the verification rows. */
  path?: string;
}

/** `count` appends from `c` appenders that each await their append before the next. */
async function concurrent(
  dir: string,
  mode: ModeCase,
  c: number,
  count: number,
  bodies: GateDecisionBody[],
): Promise<Row> {
  const path = join(dir, `dec-${mode.name.replace(/\W+/g, "-")}-${c}.db`);
  const store =
    mode.segments === true
      ? SegmentJournalStore.open(path)
      : SqliteJournalStore.open(path, { durability: mode.durability ?? "fsync" });
  const journal = await openJournal({ store, signer: key, registry, ...mode.options } as OpenJournalOptions);
  const append = (i: number) =>
    mode.built === true
      ? journal.appendBuilt({
          type: GATE_DECISION,
          run_id: run,
          trace_id: trace,
          body: bodies[i % bodies.length]!,
        })
      : journal.append({
          type: GATE_DECISION,
          run_id: run,
          trace_id: trace,
          body: bodies[i % bodies.length]!,
        });
  for (let i = 0; i < 200; i++) await append(i); // warm-up: JIT, first pages
  const lat = new Float64Array(count);
  let issued = 0;
  const commits0 = store.commits;
  const c0 = cpuUs();
  const m0 = mainCpuUs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (issued < count) {
        const i = issued++;
        const s = performance.now();
        await append(i);
        lat[i] = (performance.now() - s) * 1000;
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpu = (cpuUs() - c0) / count;
  const main = (mainCpuUs() - m0) / count;
  const fsyncs = (store.commits - commits0) / count;
  await journal.close();
  await store.close();
  return { ...summarize(mode.name, lat, ms), concurrency: c, cpuUs: cpu, mainUs: main, fsyncs, path };
}

function decisionTable(rows: Row[], floor: Stats): string {
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  return (
    "| case | C | n | median µs | p99 µs | ops/s | CPU µs/entry | main thread µs/entry | fsyncs/entry | vs sign floor |\n" +
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" +
    rows
      .map(
        (r) =>
          `| ${r.name} | ${r.concurrency} | ${r.n} | ${fmt(r.medianUs)} | ${fmt(r.p99Us)} | ` +
          `${Math.round(r.opsPerSec)} | ${fmt(r.cpuUs)} | ${Number.isNaN(r.mainUs) ? "–" : fmt(r.mainUs)} | ` +
          `${r.fsyncs === undefined ? "–" : r.fsyncs.toFixed(3)} | ` +
          `${((r.opsPerSec / floor.opsPerSec) * 100).toFixed(0)}% |`,
      )
      .join("\n") +
    "\n"
  );
}

/** JOURNAL_BENCH_MODES=entry skips batch mode (to measure a tree without it). */
async function decisionRows(dir: string, cores: number): Promise<Row[]> {
  const modes: ModeCase[] = [
    { name: "entry signatures, 1 thread", options: {} },
    { name: `entry signatures, ${cores} signing workers`, options: { signingWorkers: cores } },
  ];
  if ((process.env.JOURNAL_BENCH_MODES ?? "entry,batch").includes("batch")) {
    modes.push({ name: "batch signatures (Merkle), 1 thread", options: { signatureMode: "batch" } });
    modes.push({
      name: "batch signatures (Merkle), appendBuilt (typed, no zod parse)",
      options: { signatureMode: "batch" },
      built: true,
    });
    modes.push({
      name: "segment journal, batch signatures (Merkle), appendBuilt",
      options: { signatureMode: "batch" },
      built: true,
      segments: true,
    });
    modes.push({
      name: 'batch signatures (Merkle), durability "os" (opt-in, not durable on power loss)',
      options: { signatureMode: "batch" },
      durability: "os",
    });
  }
  const bodies = Array.from({ length: 256 }, (_, i) => decisionBody(i));
  const rows: Row[] = [];
  for (const c of [1, 10, 64]) {
    const count = c === 1 ? 1500 : Math.max(4000, Math.min(20_000, Math.floor(N / 5)));
    for (const m of modes) rows.push(await concurrent(dir, m, c, count, bodies));
  }
  // Verifying what was written at 64 appenders: a signature per entry, or per batch.
  const keyring = new Keyring([key.publicKey]);
  for (const r of rows.filter(
    (x) => x.concurrency === 64 && !/workers|durability|appendBuilt|segment/.test(x.name),
  )) {
    const store = SqliteJournalStore.open(r.path!, { readonly: true });
    const n = await store.count();
    const c0 = cpuUs();
    const m0 = mainCpuUs();
    const s = performance.now();
    const v = await verifyJournal(store, keyring, { registry });
    const ms = performance.now() - s;
    const cpu = (cpuUs() - c0) / n;
    const main = (mainCpuUs() - m0) / n;
    await store.close();
    if (!v.ok || v.checked !== n) throw new Error(`verification failed: ${JSON.stringify(v)}`);
    const per = new Float64Array(1).fill((ms * 1000) / n);
    rows.push({
      ...summarize(`verify: ${r.name.replace(/, 1 thread$/, "")}, 1 thread`, per, ms),
      n,
      opsPerSec: (n / ms) * 1000,
      concurrency: "–",
      cpuUs: cpu,
      mainUs: main,
    });
  }
  return rows;
}

/** Issue 35's journal rows: appends vs the raw batch-sign floor, cold start, reindex, verify on all cores. */
async function issue35(dir: string, rows: Row[]): Promise<string> {
  const disk = diskFloor(dir);
  const bodies = Array.from({ length: 256 }, (_, i) => decisionBody(i));
  const items = bodies.map((b) => ({
    type: GATE_DECISION,
    run_id: run,
    trace_id: trace,
    body: b,
    bodyJson: canonicalJson(b),
  }));
  const floor = batchSignFloor(items, 20_000);
  const seg = rows.find((r) => r.concurrency === 64 && /^segment/.test(r.name));
  const old = rows.find(
    (r) => r.concurrency === 64 && r.name.includes("appendBuilt") && !/^segment/.test(r.name),
  );
  const pct = (r: Row | undefined) => (r === undefined ? Number.NaN : (r.opsPerSec / floor.opsPerSec) * 100);
  const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;
  let out =
    `\n### issue 35 journal targets (disk floor in this run: 4 KB append + fdatasync p50 ${ms(disk.medianUs)}, p99 ${ms(disk.p99Us)}; ` +
    `raw batch-sign floor ${Math.round(floor.opsPerSec)}/s, ${floor.cpuUs?.toFixed(1)} CPU µs/entry)\n\n` +
    "| figure | baseline (same run) | measured | target | |\n|---|---|---|---|---|\n" +
    `| journal appends alone (64 appenders, batch signatures, appendBuilt) vs raw batch-sign floor | SQLite store ${pct(old).toFixed(0)}% (${old?.cpuUs.toFixed(1)} CPU µs/entry) | ${pct(seg).toFixed(0)}% (${seg?.cpuUs.toFixed(1)} CPU µs/entry, p99 ${ms(seg?.p99Us ?? Number.NaN)}) | ≥ 95% | ${pct(seg) >= 95 ? "met" : "MISSED"} |\n`;
  const entries = Number(process.env.BENCH_COLD_ENTRIES ?? 1_000_000);
  if (entries > 0) {
    const c = await coldStart(dir, entries);
    const ratio = c.verify1S / c.verifyAllS;
    out +=
      `| cold start of a ${entries.toLocaleString("en")}-entry journal (open: tail scan + torn-tail check + index cross-check, head read) | — (built in ${c.buildS.toFixed(0)} s) | ${(c.openMs / 1000).toFixed(3)} s | ≤ 2 s | ${c.openMs <= 2000 ? "met" : "MISSED"} |\n` +
      `| full reindex of it | — | ${c.reindexS.toFixed(1)} s | ≤ 60 s | ${c.reindexS <= 60 ? "met" : "MISSED"} |\n` +
      `| journal verify of it from the segments, all ${c.cores} cores vs one | 1 core ${c.verify1S.toFixed(1)} s (${Math.round(entries / c.verify1S)}/s) | ${c.verifyAllS.toFixed(1)} s = ${ratio.toFixed(2)}× one core | ≥ 1.8× on 2 cores | ${ratio >= 1.8 ? "met" : "MISSED"} |\n\n` +
      verifyTable(entries, c);
  }
  return `${out}\n(BENCH_COLD_ENTRIES=0 skips the cold-start rows.)\n`;
}

const dir = mkdtempSync(join(tmpdir(), "warden-bench-journal-"));
try {
  const store = SqliteJournalStore.open(join(dir, "bench.db"));
  const cores = availableParallelism();
  const journal = await openJournal({ store, signer: key, signingWorkers: cores });

  // A message exactly the size of what append signs.
  const sample = await journal.append({
    type: "ObservationsCollected",
    run_id: run,
    trace_id: trace,
    body: body(0),
  });
  const message = Buffer.from(signedText(sample, canonicalJson(sample.body)));
  const signature = edSign(null, message, key.privateKey);

  const loadBefore = load();
  const c0 = cpuUs();
  const signFloor = measure(`ed25519 sign floor (${message.length} B)`, 20_000, () => {
    edSign(null, message, key.privateKey);
  });
  const signCpuUs = (cpuUs() - c0) / 21_000;

  // Appends with WINDOW in flight: group commit folds them into few transactions.
  const lat = new Float64Array(N);
  const c1 = cpuUs();
  const t0 = performance.now();
  for (let base = 0; base < N; base += WINDOW) {
    const n = Math.min(WINDOW, N - base);
    await Promise.all(
      Array.from({ length: n }, (_, k) => {
        const i = base + k;
        const s = performance.now();
        return journal
          .append({ type: "ObservationsCollected", run_id: run, trace_id: trace, body: body(i + 1) })
          .then(() => {
            lat[i] = (performance.now() - s) * 1000;
          });
      }),
    );
  }
  const append = summarize(
    `append, ${WINDOW} in flight (group commit, ${cores} signing workers)`,
    lat,
    performance.now() - t0,
  );
  const appendCpuUs = (cpuUs() - c1) / N;

  // One at a time: each append is its own durable transaction.
  const SEQ = 2000;
  const seqLat = new Float64Array(SEQ);
  const t1 = performance.now();
  for (let i = 0; i < SEQ; i++) {
    const s = performance.now();
    await journal.append({ type: "ObservationsCollected", run_id: run, trace_id: trace, body: body(i) });
    seqLat[i] = (performance.now() - s) * 1000;
  }
  const seqAppend = summarize("append, awaited one by one (fsync each)", seqLat, performance.now() - t1);
  await journal.close();

  // The same windowed appends signed on the calling thread only.
  const store1 = SqliteJournalStore.open(join(dir, "bench1.db"));
  const journal1 = await openJournal({ store: store1, signer: key });
  const N1 = Math.min(N, 30_000);
  const lat1 = new Float64Array(N1);
  const c2 = cpuUs();
  const t2 = performance.now();
  for (let base = 0; base < N1; base += WINDOW) {
    const n = Math.min(WINDOW, N1 - base);
    await Promise.all(
      Array.from({ length: n }, (_, k) => {
        const i = base + k;
        const s = performance.now();
        return journal1
          .append({ type: "ObservationsCollected", run_id: run, trace_id: trace, body: body(i) })
          .then(() => {
            lat1[i] = (performance.now() - s) * 1000;
          });
      }),
    );
  }
  const append1 = summarize(
    `append, ${WINDOW} in flight (group commit, 1 thread)`,
    lat1,
    performance.now() - t2,
  );
  const append1CpuUs = (cpuUs() - c2) / N1;
  await store1.close();
  const signFloorAfter = measure(`ed25519 sign floor, re-measured after`, 20_000, () => {
    edSign(null, message, key.privateKey);
  });
  const loadAfter = load();

  const verifyFloor = measure(`ed25519 verify floor (${message.length} B)`, 10_000, () => {
    edVerify(null, message, key.publicKey, signature);
  });

  const keyring = new Keyring([key.publicKey]);
  const total = await store.count();
  const timeVerify = async (name: string, workers: number): Promise<Stats> => {
    const s = performance.now();
    const r = await verifyJournal(store, keyring, { workers });
    const ms = performance.now() - s;
    if (!r.ok || r.checked !== total) throw new Error(`verification failed: ${JSON.stringify(r)}`);
    const per = new Float64Array(1).fill((ms * 1000) / total);
    return { ...summarize(name, per, ms), n: total, opsPerSec: (total / ms) * 1000 };
  };
  const verify1 = await timeVerify("verify journal, 1 thread", 0);
  const verifyN = await timeVerify(`verify journal, ${cores} worker threads`, cores);
  await store.close();

  const decisionLoad = load();
  const decisions = await decisionRows(dir, cores);
  const decisionFloor = measure(`ed25519 sign floor, re-measured after`, 20_000, () => {
    edSign(null, message, key.privateKey);
  });

  const pct = (a: Stats, b: Stats) => `${((a.opsPerSec / b.opsPerSec) * 100).toFixed(0)}%`;
  process.stdout.write(
    `Appends (${N} entries; baseline: Ed25519 sign floor; ${cores} cores, load average ${loadBefore} before, ${loadAfter} after)\n\n`,
  );
  process.stdout.write(table([signFloor, append, append1, seqAppend, signFloorAfter], signFloor));
  process.stdout.write(
    `\nappend throughput = ${pct(append, signFloor)} of the signing floor (target >= 80%); ` +
      `${pct(append, signFloorAfter)} of the floor re-measured after; ${pct(append1, signFloor)} on one thread\n` +
      `CPU time per append, all threads: ${appendCpuUs.toFixed(1)} µs with ${cores} signing workers, ` +
      `${append1CpuUs.toFixed(1)} µs on one thread; per bare sign: ${signCpuUs.toFixed(1)} µs\n`,
  );
  process.stdout.write(`\nVerification (${total} entries; baseline: single-core Ed25519 verify floor)\n\n`);
  process.stdout.write(table([verifyFloor, verify1, verifyN], verifyFloor));
  process.stdout.write(
    `\nverification = ${((verifyN.opsPerSec / verifyFloor.opsPerSec) * 100).toFixed(0)}% of the single-core verify floor with workers, ` +
      `${((verify1.opsPerSec / verifyFloor.opsPerSec) * 100).toFixed(0)}% on one thread (target >= 100%)\n` +
      "(verification rows: median/p99 are the mean per entry; entries are not timed one by one)\n",
  );
  const size = canonicalJson(decisionBody(0)).length;
  process.stdout.write(
    `\nDecision entries (${size} B bodies, C appenders each awaiting its append; baseline: the sign floor above, ` +
      `${Math.round(signFloor.opsPerSec)}/s; ${Math.round(decisionFloor.opsPerSec)}/s re-measured after; ` +
      `load average ${decisionLoad} before, ${load()} after)\n\n`,
  );
  process.stdout.write(decisionTable(decisions, signFloor));
  process.stdout.write(await issue35(dir, decisions));
  process.stdout.write(
    "(CPU µs/entry: all threads of the process (process.cpuUsage), signing workers included; " +
      "fsyncs/entry: store commits / entries (one fsync per commit in the default durability); " +
      "main thread µs/entry: the appending thread alone, from /proc in 10 ms ticks; " +
      "verify rows: the journals written at C = 64, median/p99 are the mean per entry)\n",
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
