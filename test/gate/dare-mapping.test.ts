import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DECISIONS, PolicyDecisionRecordSchema, sha256Of, UUID_PATTERN } from "../../src/contracts/index.js";
import { buildDareDecision } from "../../src/gate/dare-mapping.js";
import { dareRunId, runTraceId, toolCategory } from "../../src/gate/index.js";

const h = sha256Of("x");
const base = {
  decisionId: "0192f3a4-7b1c-7d2e-8f90-a1b2c3d4e5f6",
  runId: "run-1",
  traceId: runTraceId("run-1"),
  tenantId: "t",
  environment: "prod" as const,
  principalId: "agent-1",
  toolName: "http.get",
  toolClass: "http",
  action: "get",
  requestHash: h,
  contextHash: h,
  policyBundleHash: h,
  toolSchemaHash: h,
  time: "2026-11-22T00:00:00.000Z",
};

describe("DARE decision mapping", () => {
  for (const decision of DECISIONS) {
    it(`${decision}: the record validates against the DARE schema`, () => {
      const r = buildDareDecision({
        ...base,
        decision,
        reasonCodes: ["budget_tool_calls_exhausted", "RULE:x"],
      });
      expect(PolicyDecisionRecordSchema.safeParse(r).success).toBe(true);
      expect(r.result.decision).toBe(decision === "allow" || decision === "modify" ? "allow" : "deny");
    });
  }

  it("maps reason codes and obligations", () => {
    const step = buildDareDecision({ ...base, decision: "step_up", reasonCodes: ["RULE:pay"] });
    expect(step.result.reason_codes).toEqual(["HITL_REQUIRED"]);
    expect(step.result.obligations.map((o) => o.type)).toContain("hitl_approval");
    const deny = buildDareDecision({
      ...base,
      decision: "deny",
      reasonCodes: ["rate_limited", "principal_unknown"],
    });
    expect(deny.result.reason_codes).toEqual(["RUN_LIMIT_EXCEEDED", "IDENTITY_INVALID"]);
  });

  it("derives stable UUID run ids and trace ids", () => {
    expect(dareRunId("run-1")).toMatch(UUID_PATTERN);
    expect(dareRunId("run-1")).toBe(dareRunId("run-1"));
    expect(dareRunId("run-2")).not.toBe(dareRunId("run-1"));
    expect(dareRunId(base.decisionId)).toBe(base.decisionId);
    expect(runTraceId("run-1")).toMatch(/^[0-9a-f]{32}$/);
  });

  it("remembered run and trace ids equal the documented derivation, past the memo's bound", () => {
    const derive = (runId: string) => {
      const h = createHash("sha256").update(`warden:run:${runId}`).digest();
      h[6] = 0x80 | (h[6]! & 0x0f);
      h[8] = 0x80 | (h[8]! & 0x3f);
      const x = h.subarray(0, 16).toString("hex");
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
    };
    const trace = (runId: string) =>
      createHash("sha256").update(`warden:trace:${runId}`).digest("hex").slice(0, 32);
    // Twice over more run ids than the memo holds: the second pass mixes hits and misses.
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < 5000; i += pass === 0 ? 1 : 7) {
        const id = `run-${i}`;
        expect(dareRunId(id)).toBe(derive(id));
        expect(runTraceId(id)).toBe(trace(id));
      }
    }
  });

  it("derives a conservative tool category", () => {
    expect(toolCategory("http", "get")).toBe("read_only");
    expect(toolCategory("http", "post")).toBe("irreversible_write");
    expect(toolCategory("shell", "exec")).toBe("infrastructure");
    expect(toolCategory("delegate", "spawn")).toBe("multi_agent");
    expect(toolCategory("http", "post", "financial")).toBe("financial");
  });
});
