// Policy decision latency. YAML: the rule walk alone (engine.evaluate on a prebuilt
// context) at 100 / 1,000 / 10,000 rules, linear (every rule in order) beside indexed (by
// tool, toolClass × action, action, toolClass), and the whole bundle.evaluate (context,
// combination, outcome); the rules are spread over tools and actions the way a large
// deployment's are, with a few always-checked rules, and the bench call matches the last
// rule. One more row puts every rule on the call's own class and action, where an index
// cannot help (the indexed rows are timed interleaved, the others one after another).
// Cedar: the backend beside a raw statefulIsAuthorized call. Sub-µs calls
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
import { BATCH, measureBatched, measureInterleaved, type Row, yamlRules } from "./_policy-rules.js";

const N = 20_000;
const measure = measureBatched;

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

// Every rule set and engine is built before any is timed. The indexed rows (the issue-16
// figures) are timed interleaved with equal warm-up (measureInterleaved): timed one after
// another, the first set alone ran while the JIT settled and took the load of the moment.
const sets = (
  [
    [100, false],
    [1000, false],
    [10_000, false],
    [1000, true],
  ] as const
).map(([count, sameCall]) => {
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
  return { count, label, linear, indexed, bundle };
});

const rows: Row[] = [baseline];
rows.push(
  ...measureInterleaved(
    sets.map((x) => ({
      name: `YAML ${x.label}, indexed`,
      fn: () => {
        sink += x.indexed.evaluate(ctx) === undefined ? 0 : 1;
      },
    })),
    N * 4,
  ),
);
for (const { count, label, linear, bundle } of sets) {
  const n = count >= 1000 ? N / 4 : N;
  rows.push(
    measure(`YAML ${label}, linear walk`, count >= 10_000 ? n / 4 : n, () => {
      sink += linear.evaluate(ctx) === undefined ? 0 : 1;
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
