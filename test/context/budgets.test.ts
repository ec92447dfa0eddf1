// OATS §9.2 budgets through the real Gate of a composed runtime: every budget is
// configurable, a run's own budget can only lower the configured one, and a spent budget
// denies the next call before policy with its reason code.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUDGET_REASONS, type BudgetLimits, type ResourceUsage, RunMeter } from "../../src/context/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";

const POLICY = `rules:\n  - { id: all, name: all, priority: 100, match: { toolClass: file }, decision: allow, reason: ok }\n`;

async function runtime(budgets: BudgetLimits, clock = { t: 1_000_000 }): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-budget-"));
  writeFileSync(join(dir, "p.yaml"), POLICY);
  return composeRuntime(
    {
      policy: [join(dir, "p.yaml")],
      journal: { path: ":memory:", signer: generateKeyPair("ed25519") },
      gate: { principals: { a: { id: "a", roles: [] } }, runs: "runtime", context: { budgets } },
    },
    { clock: () => clock.t },
  );
}

const call = (runId: string) => ({
  principalId: "a",
  runId,
  toolClass: "file",
  action: "read",
  parameters: { path: "x" },
});

async function reasons(rt: Runtime, runId: string): Promise<string[]> {
  const o = await rt.gate.evaluate(call(runId));
  return o.decision === "deny" ? o.reasonCodes : [];
}

// Each metered budget: its limit, the usage that spends it, and the reason code.
const METERED: [keyof ResourceUsage, number, ResourceUsage][] = [
  ["iterations", 3, { iterations: 3 }],
  ["networkRequests", 2, { networkRequests: 2 }],
  ["networkBytes", 1000, { networkBytes: 1000 }],
  ["fsBytesWritten", 4096, { fsBytesWritten: 4096 }],
  ["fsFilesWritten", 2, { fsFilesWritten: 2 }],
];

describe("OATS §9.2 budgets", () => {
  for (const [name, limit, spend] of METERED) {
    it(`an agent that spends its ${name} budget is denied the next call (${BUDGET_REASONS[name]})`, async () => {
      const rt = await runtime({ [name]: limit });
      const run = await rt.startRun("a");
      const below = Object.fromEntries(Object.entries(spend).map(([k, v]) => [k, v - 1]));
      run.recordUsage(below);
      expect(await reasons(rt, run.runId)).toEqual([]);
      run.recordUsage(Object.fromEntries(Object.keys(spend).map((k) => [k, 1])));
      expect(await reasons(rt, run.runId)).toEqual([BUDGET_REASONS[name]]);
      expect(run.snapshot().budgets[name]).toEqual({ used: limit, limit });
      await rt.close();
    });
  }

  it("tool calls, tokens and wall time are budgets too", async () => {
    const clock = { t: 1_000_000 };
    const rt = await runtime({ toolCalls: 1, tokens: 10, wallTimeMs: 5000 }, clock);
    const run = await rt.startRun("a");
    expect((await rt.gate.authorize(call(run.runId))).decision).toBe("allow");
    run.recordUsage({ tokens: 10 });
    clock.t += 5000;
    expect(await reasons(rt, run.runId)).toEqual([
      "budget_tool_calls_exhausted",
      "budget_tokens_exhausted",
      "budget_wall_time_exhausted",
    ]);
    await rt.close();
  });

  it("a run's own budget lowers the configured one and can never raise it", async () => {
    const rt = await runtime({ iterations: 10, networkBytes: 100 });
    const run = await rt.startRun("a", {
      budgets: { iterations: 2, networkBytes: 1_000_000, fsFilesWritten: 1 },
    });
    expect(run.snapshot().budgets).toMatchObject({
      iterations: { limit: 2 },
      networkBytes: { limit: 100 },
      fsFilesWritten: { limit: 1 },
    });
    run.recordUsage({ iterations: 2 });
    expect(await reasons(rt, run.runId)).toEqual(["budget_iterations_exhausted"]);
    const other = await rt.startRun("a");
    expect(other.snapshot().budgets.iterations).toEqual({ used: 0, limit: 10 });
    await expect(rt.startRun("a", { budgets: { iterations: -1 } })).rejects.toMatchObject({
      code: "ERR_CONTEXT_INPUT_INVALID",
    });
    await rt.close();
  });

  it("negative or non-finite usage is refused, not subtracted", () => {
    const m = new RunMeter();
    expect(() => m.add({ networkBytes: -5 })).toThrow(
      expect.objectContaining({ code: "ERR_CONTEXT_INPUT_INVALID" }),
    );
    expect(() => m.add({ iterations: Number.NaN })).toThrow();
    expect(m.used("networkBytes")).toBe(0);
  });
});
