// OATS §9.2 budgets metered live: the executors report network and filesystem use with each
// call's result, the loop reports its completed iterations, and the Gate of a real runtime
// (the one `warden run` composes) denies the next call once a budget is spent. Each test is
// the attack: the agent is a scripted model, everything else is real.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRuntime, type Runtime } from "../../src/cli/runtime.js";
import type { BudgetLimits } from "../../src/context/index.js";
import { type GateOutcome, ticketOf } from "../../src/gate/index.js";
import { runLoop, runtimePorts } from "../../src/loop/index.js";
import { observationFor, RecordingModel } from "./fakes.js";

const CHUNK = 1000;
let server: Server;
let port = 0;
let hits = 0;

const POLICY = `rules:
  - { id: net, name: net, priority: 100, match: { toolClass: http }, decision: allow, reason: ok }
  - { id: no-post, name: no-post, priority: 50, match: { toolClass: http, action: post }, decision: deny, reason: no }
  - { id: files, name: files, priority: 100, match: { toolClass: file }, decision: allow, reason: ok }
`;

const fetchContract = (name = "fetch_chunk", method = "GET") => `
[tool]
name = "${name}"
version = "1.0.0"
description = "Fetch one chunk of a large file"
risk_tier = "low"

[args.part]
type = "integer"
required = true
min = 0
max = 1000

[apae]
data_source = "test://chunks"
data_classification = "internal"
retention_days = 30

[http]
method = "${method}"
url = "http://127.0.0.1:${port}/chunk?part={part}"

[output]
format = "json"
schema = { type = "object" }
`;

const dirs: string[] = [];
const runtimes: Runtime[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => {
    hits++;
    const body = JSON.stringify({ d: "x".repeat(CHUNK - 8) });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const rt of runtimes) await rt.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function runtime(): Promise<{ rt: Runtime; sandbox: string }> {
  const dir = mkdtempSync(join(tmpdir(), "warden-budgets-live-"));
  dirs.push(dir);
  mkdirSync(join(dir, "contracts"));
  mkdirSync(join(dir, "sandbox"));
  writeFileSync(join(dir, "contracts", "fetch_chunk.clad.toml"), fetchContract());
  writeFileSync(join(dir, "contracts", "post_chunk.clad.toml"), fetchContract("post_chunk", "POST"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const rt = await openRuntime({
    contracts: join(dir, "contracts"),
    policy: [join(dir, "policy.yaml")],
    principal: "agent-1",
    db: join(dir, "journal.db"),
    allowLoopback: true,
    sandbox: join(dir, "sandbox"),
    record: false,
  });
  runtimes.push(rt);
  return { rt, sandbox: join(dir, "sandbox") };
}

async function loop(rt: Runtime, budgets: Partial<BudgetLimits>, model: RecordingModel) {
  const run = await rt.startRun("agent-1", { budgets });
  const ports = await runtimePorts(rt, { runId: run.runId });
  const result = await runLoop({ ...ports, model, task: "do it", limits: { maxDenials: 100 } });
  return { result, run };
}

const turns = (n: number, call: (i: number) => { name: string; arguments: Record<string, unknown> }) =>
  Array.from({ length: n }, (_, i) => ({ calls: [{ ...call(i), id: `c${i}` }] }));

describe("OATS §9.2 budgets, metered live", () => {
  it("an agent that streams a large download in many small calls is stopped at the network-bytes budget", async () => {
    const { rt } = await runtime();
    hits = 0;
    const model = new RecordingModel([
      ...turns(6, (i) => ({ name: "fetch_chunk", arguments: { part: i } })),
      { text: "done" },
    ]);
    const { run } = await loop(rt, { networkBytes: 3.5 * CHUNK }, model);
    // Three chunks stay under the budget, the fourth spends it: the fifth never leaves.
    expect(hits).toBe(4);
    expect(JSON.stringify(observationFor(model.requests[5], "c4"))).toContain(
      "budget_network_bytes_exhausted",
    );
    const used = run.snapshot().budgets.networkBytes;
    expect(used?.used).toBeGreaterThanOrEqual(4 * CHUNK);
    expect(run.snapshot().budgets).not.toHaveProperty("networkRequests");
  });

  it("an agent that writes many files is stopped at the files budget", async () => {
    const { rt, sandbox } = await runtime();
    const model = new RecordingModel([
      ...turns(5, (i) => ({ name: "file_write", arguments: { path: `f${i}.txt`, content: "abc" } })),
      { text: "done" },
    ]);
    const { run } = await loop(rt, { fsFilesWritten: 3 }, model);
    expect(readdirSync(sandbox).sort()).toEqual(["f0.txt", "f1.txt", "f2.txt"]);
    expect(existsSync(join(sandbox, "f3.txt"))).toBe(false);
    expect(JSON.stringify(observationFor(model.requests[4], "c3"))).toContain("budget_fs_files_exhausted");
    expect(run.snapshot().budgets.fsFilesWritten).toEqual({ used: 3, limit: 3 });
  });

  it("an agent that writes one large file after another is stopped at the filesystem-bytes budget", async () => {
    const { rt, sandbox } = await runtime();
    const content = "y".repeat(600);
    const model = new RecordingModel([
      ...turns(4, (i) => ({ name: "file_write", arguments: { path: `g${i}.txt`, content } })),
      { text: "done" },
    ]);
    const { run } = await loop(rt, { fsBytesWritten: 1000 }, model);
    expect(readdirSync(sandbox).sort()).toEqual(["g0.txt", "g1.txt"]);
    expect(run.snapshot().budgets.fsBytesWritten).toEqual({ used: 1200, limit: 1000 });
  });

  it("an agent that keeps the loop turning is stopped at its iterations budget", async () => {
    const { rt, sandbox } = await runtime();
    const model = new RecordingModel([
      ...turns(6, (i) => ({ name: "file_write", arguments: { path: `h${i}.txt`, content: "z" } })),
      { text: "done" },
    ]);
    const { result, run } = await loop(rt, { iterations: 2 }, model);
    expect(result.reason).toBe("iteration_limit");
    expect(model.requests).toHaveLength(2);
    expect(readdirSync(sandbox).sort()).toEqual(["h0.txt", "h1.txt"]);
    expect(run.snapshot().budgets.iterations).toEqual({ used: 2, limit: 2 });
  });

  it("model tokens reported by the adapter spend the run's tokens budget", async () => {
    const { rt } = await runtime();
    const model = new RecordingModel(
      turns(4, (i) => ({ name: "file_write", arguments: { path: `t${i}.txt`, content: "z" } })).map((t) => ({
        ...t,
        usage: { inputTokens: 30, outputTokens: 10 },
      })),
    );
    const { result, run } = await loop(rt, { tokens: 100 }, model);
    expect(result.reason).toBe("token_budget");
    expect(model.requests).toHaveLength(3);
    expect(run.snapshot().budgets.tokens).toEqual({ used: 120, limit: 100 });
  });

  it("20 concurrent network calls against a budget of 5 requests: at most 5 are admitted", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-1", { budgets: { networkRequests: 5 } });
    const call = (part: number) => ({
      principalId: "agent-1",
      runId: run.runId,
      tool: "fetch_chunk",
      toolClass: "http",
      action: "get",
      parameters: { part },
    });
    const outcomes: GateOutcome[] = await Promise.all(
      Array.from({ length: 20 }, (_, i) => rt.gate.authorize(call(i))),
    );
    const admitted = outcomes.filter((o) => ticketOf(o) !== undefined);
    expect(admitted).toHaveLength(5);
    for (const o of outcomes.filter((x) => x.decision === "deny"))
      expect(o.reasonCodes).toContain("budget_network_requests_exhausted");
    // A result that reports no request still counts as one: the budget stays spent.
    for (const o of admitted) await rt.gate.recordResult(o.decisionId!, {});
    expect(run.snapshot().budgets.networkRequests).toEqual({ used: 5, limit: 5 });
    expect((await rt.gate.authorize(call(99))).decision).toBe("deny");
  });

  it("a network call the policy denies gives its held request back", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-1", { budgets: { networkRequests: 1 } });
    const base = { principalId: "agent-1", runId: run.runId, parameters: { part: 1 } };
    for (let i = 0; i < 2; i++) {
      const denied = await rt.gate.authorize({
        ...base,
        tool: "post_chunk",
        toolClass: "http",
        action: "post",
      });
      expect(denied.reasonCodes).not.toContain("budget_network_requests_exhausted");
      expect(denied.decision).toBe("deny");
    }
    const ok = await rt.gate.authorize({ ...base, tool: "fetch_chunk", toolClass: "http", action: "get" });
    expect(ok.decision).toBe("allow");
  });

  it("an agent cannot spend (or refund) another run's budget through usage reports", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-1", { budgets: { iterations: 3, networkBytes: 10 } });
    expect(() => rt.gate.recordUsage(run.runId, "intruder", { iterations: 3 })).toThrow(
      expect.objectContaining({ code: "ERR_RUN_UNKNOWN" }),
    );
    expect(() => rt.gate.recordUsage(run.runId, "agent-1", { iterations: -2 })).toThrow(
      expect.objectContaining({ code: "ERR_CONTEXT_INPUT_INVALID" }),
    );
    expect(run.snapshot().budgets.iterations).toEqual({ used: 0, limit: 3 });
    expect(rt.gate.recordUsage(run.runId, "agent-1", { iterations: 3 })).toEqual([
      "budget_iterations_exhausted",
    ]);
    expect(run.snapshot().budgets.networkBytes).toEqual({ used: 0, limit: 10 });
  });

  it("a result reporting negative network bytes is refused, never subtracted", async () => {
    const { rt } = await runtime();
    const run = await rt.startRun("agent-1", { budgets: { networkBytes: 10 } });
    const o = await rt.gate.authorize({
      principalId: "agent-1",
      runId: run.runId,
      tool: "fetch_chunk",
      toolClass: "http",
      action: "get",
      parameters: { part: 1 },
    });
    expect(o.decision).toBe("allow");
    await expect(
      rt.gate.recordResult(o.decisionId!, { usage: { networkBytes: -1e9 } }),
    ).rejects.toMatchObject({
      code: "ERR_CONTEXT_INPUT_INVALID",
    });
    expect(run.snapshot().budgets.networkBytes).toEqual({ used: 0, limit: 10 });
  });
});
