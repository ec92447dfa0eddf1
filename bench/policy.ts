// Policy decision latency: the YAML engine with 1, 100 and 1,000 realistic rules (most
// not matching, the matching rule near the end) and the Cedar backend, each beside a
// same-run baseline (an empty function call; a raw statefulIsAuthorized call). The Gate's
// journal write is not included. Target: p50 ≤ 10 µs, p99 ≤ 50 µs at 100 YAML rules.
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { GateRequest } from "../src/contracts/index.js";
import {
  buildEvalContext,
  DEFAULT_CLASSIFICATION_LEVELS,
  loadPolicyBundle,
  type PolicyInput,
} from "../src/policy/index.js";
import { measure, table } from "./_stats.js";

const N = 20_000;
const CLASSES = ["http", "file", "shell", "database", "retrieval", "mcp", "memory", "message"];

/** `count` rules: varied classes, actions, taint and parameter patterns; the match for the bench request is last. */
function yamlRules(count: number): string {
  const out = ["name: bench", "rules:"];
  for (let i = 0; i < count - 1; i++) {
    const cls = CLASSES[i % CLASSES.length]!;
    const kind = i % 4;
    const match =
      kind === 0
        ? `{toolClass: ${cls}, action: [post, put], parameters: {url: {pattern: "^https://host${i}\\\\.example/"}}}`
        : kind === 1
          ? `{toolClass: ${cls}, taintSources: [email, rag]}`
          : kind === 2
            ? `{toolClass: ${cls}, action: get, parameters: {url: {in: [https://a${i}.example/, https://b${i}.example/]}}}`
            : `{toolClass: ${cls}, principalId: other-${i}, counters: {denied: {gte: 3}}}`;
    out.push(
      `  - {id: r${i}, name: rule ${i}, priority: ${100 + Math.floor((i * 700) / count)}, match: ${match}, decision: deny, reason: r}`,
    );
  }
  out.push(
    '  - {id: match, name: match, priority: 899, match: {toolClass: http, action: get, notTaintSources: [email], parameters: {url: {pattern: "^https://api\\\\.example\\\\.com/"}}}, decision: allow, reason: r}',
  );
  return `${out.join("\n")}\n`;
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
const empty = (i: number) => {
  sink += i;
};
const baseline = measure("baseline: empty function call", N, empty);

const rows = [baseline];
for (const count of [1, 100, 1000]) {
  const bundle = loadPolicyBundle({ yaml: [{ name: `bench-${count}.yaml`, text: yamlRules(count) }] });
  const check = bundle.evaluate(input);
  if (check.decision !== "allow" || check.matchedRules[0]?.id !== "match")
    throw new Error("bench rules misconfigured");
  rows.push(
    measure(`YAML engine, ${count} rule${count === 1 ? "" : "s"} (match last)`, N, () => {
      sink += bundle.evaluate(input).reasonCodes.length;
    }),
  );
}

const cedarBundle = loadPolicyBundle({ cedar: [{ name: "bench.cedar", text: CEDAR }] });
if (cedarBundle.evaluate(input).decision !== "allow") throw new Error("bench Cedar policies misconfigured");
const raw = cedarBundle.cedar!.request(buildEvalContext(input, DEFAULT_CLASSIFICATION_LEVELS));
const cedarRows = [
  measure("baseline: raw statefulIsAuthorized (same request)", N, () => {
    const a = cedar.statefulIsAuthorized(raw);
    sink += a.type.length;
  }),
  measure("Cedar backend, 4 policies (bundle.evaluate)", N, () => {
    sink += cedarBundle.evaluate(input).reasonCodes.length;
  }),
];

const both = loadPolicyBundle({
  yaml: [{ name: "bench-100.yaml", text: yamlRules(100) }],
  cedar: [{ name: "bench.cedar", text: CEDAR }],
});
cedarRows.push(
  measure("YAML 100 rules + Cedar 4 policies, combined", N, () => {
    sink += both.evaluate(input).reasonCodes.length;
  }),
);

process.stdout.write("### YAML rule engine\n\n");
process.stdout.write(table(rows, baseline));
process.stdout.write("\n### Cedar backend\n\n");
process.stdout.write(table(cedarRows, cedarRows[0]));
process.stdout.write(`\n(sink ${sink > 0 ? "ok" : "0"}; Node ${process.version}; journal write excluded)\n`);
