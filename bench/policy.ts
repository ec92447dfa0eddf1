// Policy decision latency. YAML: the rule walk alone (engine.evaluate on a prebuilt
// context) at 100 / 1,000 / 10,000 rules, linear (every rule in order) beside indexed (by
// tool, toolClass × action, action, toolClass), and the whole bundle.evaluate (context,
// combination, outcome); the rules are spread over tools and actions the way a large
// deployment's are, with a few always-checked rules, and the bench call matches the last
// rule. One more row puts every rule on the call's own class and action, where an index
// cannot help. Cedar: the backend beside a raw statefulIsAuthorized call. Sub-µs calls
// are timed in batches of BATCH; CPU µs per op is process.cpuUsage over the timed loop.
// Issue 16 target: YAML p50 ≤ 0.2 / 0.5 / 1 µs at 100 / 1,000 / 10,000 rules.
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { GateRequest } from "../src/contracts/index.js";
import {
  buildEvalContext,
  DEFAULT_CLASSIFICATION_LEVELS,
  loadPolicyBundle,
  type PolicyInput,
  parsePolicyYaml,
  YamlEngine,
} from "../src/policy/index.js";
import { type Stats, summarize } from "./_stats.js";

const N = 20_000;
const BATCH = 50;
const CLASSES = ["http", "file", "shell", "database", "retrieval", "mcp", "memory", "message"];

interface Row extends Stats {
  cpuUs: number;
}

/** Times `fn` in batches of `batch` calls; per-call µs = batch time / batch. */
function measure(name: string, n: number, fn: (i: number) => void, batch = BATCH): Row {
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

function table(rows: Row[], baseline: Row): string {
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(3));
  const head =
    "| case | n | median µs | p99 µs | ops/s | CPU µs/op | vs baseline |\n|---|---:|---:|---:|---:|---:|---:|\n";
  const body = rows.map(
    (r) =>
      `| ${r.name} | ${r.n} | ${fmt(r.medianUs)} | ${fmt(r.p99Us)} | ${Math.round(r.opsPerSec)} | ${fmt(r.cpuUs)} | ${((r.opsPerSec / baseline.opsPerSec) * 100).toFixed(1)}% |`,
  );
  return `${head}${body.join("\n")}\n`;
}

/**
 * `count` rules: most name a tool (from a pool of count/8) or a toolClass × action pair
 * (from count/8 actions), eight name none (always checked); the bench call's match is last.
 */
function yamlRules(count: number, sameCall = false): string[] {
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

const CEDAR = `
@id("no-tainted-egress") forbid(principal, action in Warden::Action::"egress", resource) when { context.taint.containsAny(["web", "email"]) };
@id("no-secret") forbid(principal, action, resource) when { context.classificationLevel >= 3 };
@id("readers") permit(principal in Warden::Role::"reader", action in Warden::Action::"read", resource)
  when { context.params.hasTag("url") && context.params.getTag("url") like "https://api.example.com/*" };
@id("pay") @decision("step_up") permit(principal, action == Warden::Action::"http:post", resource)
  when { context.numParams.hasTag("amount") && context.numParams.getTag("amount") > 1000 };
`;

const request = GateRequest.parse({
  principalId: "agent-1",
  runId: "run-1",
  toolClass: "http",
  action: "get",
  parameters: { url: "https://api.example.com/v1/items?page=2", timeoutMs: 5000 },
  taintLabels: [{ source: "user-provided", origin: "chat" }],
});
const input: PolicyInput = {
  request,
  principal: { id: "agent-1", roles: ["reader"] },
  taint: request.taintLabels,
  session: {
    runId: "run-1",
    counters: { proposed: 10, allowed: 8, denied: 1, deferred: 0, executed: 8, stepUps: 1, modified: 0 },
    perToolCalls: { "http:get": 7 },
    dataClassificationsSeen: ["internal"],
    quarantined: false,
  },
};

let sink = 0;
const baseline = measure("baseline: empty function call", N * 10, (i) => {
  sink += i;
});
const ctx = buildEvalContext(input, DEFAULT_CLASSIFICATION_LEVELS);
const levels = { classificationLevels: DEFAULT_CLASSIFICATION_LEVELS };

const rows: Row[] = [baseline];
for (const [count, sameCall] of [
  [100, false],
  [1000, false],
  [10_000, false],
  [1000, true],
] as const) {
  const texts = yamlRules(count, sameCall);
  const yaml = texts.map((text, i) => ({ name: `bench-${i}.yaml`, text }));
  const src = yaml.map((y) => ({ name: y.name, layer: "project" as const, file: parsePolicyYaml(y.text) }));
  const linear = new YamlEngine(src, { ...levels, indexed: false });
  const indexed = new YamlEngine(src, levels);
  const bundle = loadPolicyBundle({ yaml });
  for (const e of [linear, indexed]) {
    if (e.evaluate(ctx)?.rule.id !== "match") throw new Error("bench rules misconfigured");
  }
  if (bundle.evaluate(input).matchedRules[0]?.id !== "match") throw new Error("bench bundle misconfigured");
  const label = `${count.toLocaleString("en")} rules${sameCall ? " all on http:get" : ""}`;
  const n = count >= 1000 ? N / 4 : N;
  rows.push(
    measure(`YAML ${label}, linear walk`, count >= 10_000 ? n / 4 : n, () => {
      sink += linear.evaluate(ctx) === undefined ? 0 : 1;
    }),
    measure(`YAML ${label}, indexed`, N * 4, () => {
      sink += indexed.evaluate(ctx) === undefined ? 0 : 1;
    }),
    measure(`bundle.evaluate, ${label}, indexed`, n, () => {
      sink += bundle.evaluate(input).reasonCodes.length;
    }),
  );
}

const cedarBundle = loadPolicyBundle({ cedar: [{ name: "bench.cedar", text: CEDAR }] });
if (cedarBundle.evaluate(input).decision !== "allow") throw new Error("bench Cedar policies misconfigured");
const raw = cedarBundle.cedar!.request(ctx);
const cedarRows = [
  measure(
    "baseline: raw statefulIsAuthorized (same request)",
    N / 4,
    () => {
      sink += cedar.statefulIsAuthorized(raw).type.length;
    },
    1,
  ),
  measure(
    "Cedar backend, 4 policies (bundle.evaluate)",
    N / 4,
    () => {
      sink += cedarBundle.evaluate(input).reasonCodes.length;
    },
    1,
  ),
];

process.stdout.write("### YAML rule engine\n\n");
process.stdout.write(table(rows, baseline));
process.stdout.write("\n### Cedar backend\n\n");
process.stdout.write(table(cedarRows, cedarRows[0]!));
process.stdout.write(
  `\n(sink ${sink > 0 ? "ok" : "0"}; Node ${process.version}; batches of ${BATCH} for YAML rows; journal write excluded)\n`,
);
