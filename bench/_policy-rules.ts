// Shared by bench/policy.ts and bench/decide.ts: the YAML rule sets a large deployment has
// (spread over tools and actions, a few always-checked rules, the bench call matching the
// last rule) and timers for sub-µs calls (batches; CPU µs per op from process.cpuUsage),
// one case alone or several interleaved.
import { type Stats, summarize } from "./_stats.js";

export const BATCH = 50;
const CLASSES = ["http", "file", "shell", "database", "retrieval", "mcp", "memory", "message"];

export interface Row extends Stats {
  cpuUs: number;
}

/** Times `fn` in batches of `batch` calls; per-call µs = batch time / batch. */
export function measureBatched(name: string, n: number, fn: (i: number) => void, batch = BATCH): Row {
  for (let i = 0; i < Math.min(n, 2000); i++) fn(i);
  const samples = new Float64Array(Math.ceil(n / batch));
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let i = 0;
  for (let s = 0; s < samples.length; s++) {
    const t0 = performance.now();
    for (let b = 0; b < batch; b++) fn(i++);
    samples[s] = ((performance.now() - t0) * 1000) / batch;
  }
  const total = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const stats = summarize(name, samples, total);
  return { ...stats, n: i, opsPerSec: (i / total) * 1000, cpuUs: (cpu.user + cpu.system) / i };
}

export interface Case {
  name: string;
  fn: (i: number) => void;
}

/**
 * Times several cases the same way: each is warmed by one untimed round, then
 * `rounds` rounds run every case for its share of `n` calls (in batches of `batch`), the
 * order rotating each round. No case is measured only first, only cold, or only while
 * the shared machine happened to be busier; each case's samples from all rounds are
 * summarized together, its CPU and wall time summed over its own segments.
 */
export function measureInterleaved(cases: Case[], n: number, rounds = 8, batch = BATCH): Row[] {
  const perRound = Math.ceil(n / batch / rounds);
  // Warm-up: one untimed round of the same size, so the JIT and the collection of whatever
  // garbage building the cases left fall on no case's timed samples.
  for (const c of cases) for (let i = 0; i < perRound * batch; i++) c.fn(i);
  const acc = cases.map(() => ({ samples: [] as number[], ms: 0, cpuUs: 0, calls: 0 }));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const at = (k + r) % cases.length;
      const { fn } = cases[at]!;
      const a = acc[at]!;
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      for (let s = 0; s < perRound; s++) {
        const t0 = performance.now();
        for (let b = 0; b < batch; b++) fn(a.calls++);
        a.samples.push(((performance.now() - t0) * 1000) / batch);
      }
      a.ms += performance.now() - start;
      const cpu = process.cpuUsage(cpu0);
      a.cpuUs += cpu.user + cpu.system;
    }
  }
  return cases.map((c, k) => {
    const a = acc[k]!;
    const stats = summarize(c.name, Float64Array.from(a.samples), a.ms);
    return { ...stats, n: a.calls, opsPerSec: (a.calls / a.ms) * 1000, cpuUs: a.cpuUs / a.calls };
  });
}

/**
 * `count` rules: most name a tool (from a pool of count/8) or a toolClass × action pair
 * (from count/8 actions), eight name none (always checked); the bench call's match is last.
 */
export function yamlRules(count: number, sameCall = false): string[] {
  const out: string[] = [];
  const pool = Math.max(1, Math.floor(count / 8));
  const always = [
    "{taintSources: [email, rag], toolClass: [shell, database]}",
    "{quarantined: true}",
    "{counters: {denied: {gte: 100}}}",
    "{classificationAtLeast: secret, taintSources: [web]}",
    "{trustScoreBelow: 0.1, principalId: other}",
    '{perToolCalls: {"http:get": {gte: 10000}}}',
    "{roles: intruder}",
    '{parameters: {url: {pattern: "^file:"}}}',
  ];
  for (let i = 0; i < count - 1; i++) {
    const cls = CLASSES[i % CLASSES.length]!;
    const tool = `tool-${i % pool}`;
    const act = `act-${i % pool}`;
    const kind = i % 4;
    let match: string;
    if (i < always.length) match = always[i]!;
    else if (sameCall) match = `{toolClass: http, action: get, principalId: other-${i}}`;
    else if (kind === 0)
      match = `{tool: ${tool}, parameters: {url: {pattern: "^https://host${i}\\\\.example/"}}}`;
    else if (kind === 1) match = `{toolClass: ${cls}, action: ${act}, taintSources: [email, rag]}`;
    else if (kind === 2)
      match = `{tool: ${tool}, parameters: {url: {in: [https://a${i}.example/, https://b${i}.example/]}}}`;
    else
      match = `{toolClass: ${cls}, action: [${act}, post], principalId: other-${i}, counters: {denied: {gte: 3}}}`;
    out.push(
      `  - {id: r${i}, name: rule ${i}, priority: ${100 + Math.floor((i * 700) / count)}, match: ${match}, decision: deny, reason: r}`,
    );
  }
  out.push(
    '  - {id: match, name: match, priority: 899, match: {toolClass: http, action: get, notTaintSources: [email], parameters: {url: {pattern: "^https://api\\\\.example\\\\.com/"}}}, decision: allow, reason: r}',
  );
  // Files of at most 2,000 rules keep each under the 1 MiB file cap.
  const files: string[] = [];
  for (let i = 0; i < out.length; i += 2000) {
    files.push(`name: bench\nrules:\n${out.slice(i, i + 2000).join("\n")}\n`);
  }
  return files;
}
