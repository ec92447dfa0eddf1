// The ORM risk score: each factor raises it, the score is monotone in every factor
// (property test), policy can act on it (YAML `risk`, Cedar `context.riskScore`) and it is
// journaled in the decision and its DARE record instead of a hard-coded 0.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TAINT_SOURCES, type TaintLabel } from "../../src/contracts/index.js";
import { type RiskFactors, riskFactorValues, riskScore } from "../../src/gate/index.js";
import { type CompiledTool, parseContract } from "../../src/tools/index.js";
import { makeGate, req } from "../gate/harness.js";

const taint = (source: TaintLabel["source"]): TaintLabel => ({ source, origin: "test" });
const base: RiskFactors = { riskTier: "low", taint: [] };

describe("risk score factors", () => {
  it("a riskier contract tier scores higher", () => {
    const s = (riskTier: string) => riskScore({ ...base, riskTier });
    expect(s("low")).toBeLessThan(s("medium"));
    expect(s("medium")).toBeLessThan(s("high"));
    expect(s("high")).toBeLessThan(s("critical"));
  });

  it("an unknown tier counts as critical and a call without a contract as medium", () => {
    expect(riskScore({ ...base, riskTier: "bogus" })).toBe(riskScore({ ...base, riskTier: "critical" }));
    expect(riskScore({ taint: [] })).toBe(riskScore({ ...base, riskTier: "medium" }));
  });

  it("web taint scores higher than the user's own input, which scores higher than none", () => {
    const none = riskScore(base);
    const user = riskScore({ ...base, taint: [taint("user-provided")] });
    const web = riskScore({ ...base, taint: [taint("user-provided"), taint("web")] });
    expect(none).toBeLessThan(user);
    expect(user).toBeLessThan(web);
  });

  it("a lower trust score means a higher risk; no trust engine adds nothing", () => {
    const trusted = riskScore({ ...base, trustScore: 1 });
    const doubtful = riskScore({ ...base, trustScore: 0.2 });
    expect(doubtful).toBeGreaterThan(trusted);
    expect(trusted).toBe(riskScore(base));
  });

  it("more drift means more risk", () => {
    expect(riskScore({ ...base, drift: 0.9 })).toBeGreaterThan(riskScore({ ...base, drift: 0.1 }));
  });

  it("a higher classification scores higher, and an unknown label counts as the highest", () => {
    const pub = riskScore({ ...base, classification: "public" });
    const conf = riskScore({ ...base, classification: "confidential" });
    const secret = riskScore({ ...base, classification: "secret" });
    expect(pub).toBeLessThan(conf);
    expect(conf).toBeLessThan(secret);
    expect(riskScore({ ...base, classification: "made-up" })).toBe(secret);
  });

  it("every factor is in [0, 1] and the worst case is near 1", () => {
    const worst: RiskFactors = {
      riskTier: "critical",
      taint: [taint("web")],
      trustScore: 0,
      drift: 1,
      classification: "secret",
    };
    for (const v of Object.values(riskFactorValues(worst))) expect(v).toBe(1);
    expect(riskScore(worst)).toBeGreaterThan(0.9);
    expect(riskScore(worst)).toBeLessThanOrEqual(1);
  });
});

const tiers = ["low", "medium", "high", "critical"] as const;
const factors = fc.record({
  tier: fc.integer({ min: 0, max: 3 }),
  taint: fc.subarray([...TAINT_SOURCES]),
  trust: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  drift: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  cls: fc.integer({ min: -1, max: 3 }),
});
const levels = ["public", "internal", "confidential", "secret"];
type Drawn = {
  tier: number;
  taint: TaintLabel["source"][];
  trust: number | undefined;
  drift: number | undefined;
  cls: number;
};
const toFactors = (f: Drawn): RiskFactors => ({
  riskTier: tiers[f.tier],
  taint: f.taint.map((s) => taint(s)),
  trustScore: f.trust,
  drift: f.drift,
  classification: f.cls < 0 ? undefined : levels[f.cls],
});

describe("risk score monotonicity (property)", () => {
  it("raising any one factor never lowers the score, and the score stays in [0, 1]", () => {
    fc.assert(
      fc.property(factors, fc.integer({ min: 0, max: 4 }), (f, which) => {
        const lo = toFactors(f);
        const s = riskScore(lo);
        expect(s).toBeGreaterThanOrEqual(0);
        expect(s).toBeLessThanOrEqual(1);
        const hi: RiskFactors = { ...lo };
        if (which === 0) hi.riskTier = tiers[Math.min(3, f.tier + 1)];
        if (which === 1) hi.taint = [...lo.taint, taint("web")];
        if (which === 2) hi.trustScore = lo.trustScore === undefined ? 0 : lo.trustScore / 2;
        if (which === 3) hi.drift = Math.min(1, (lo.drift ?? 0) + 0.1);
        if (which === 4) hi.classification = levels[Math.min(3, f.cls + 1)];
        expect(riskScore(hi)).toBeGreaterThanOrEqual(s);
      }),
      { numRuns: 500 },
    );
  });
});

const CONTRACT = (tier: string) => `
[tool]
name = "deploy"
version = "1.0.0"
description = "Deploy a service."
category = "infrastructure"
risk_tier = "${tier}"
timeout_seconds = 10
human_approval = false

[args.service]
type = "string"
required = true
max_length = 64
description = "Service"

[http]
method = "POST"
url = "https://deploy.example.com/deploy"

[output]
format = "text"
[output.schema]
type = "object"
`;

function compiled(text: string): CompiledTool {
  const r = parseContract(text);
  if (!r.ok) throw new Error(r.message);
  return r.tool;
}

const deployReq = (over: Record<string, unknown> = {}) =>
  req({ tool: "deploy", toolClass: "http", action: "post", parameters: { service: "api" }, ...over });

/** A Gate over the one contract, its trust engine doubting the agent (score 0.1). */
const gateWith = (tool: CompiledTool) => ({
  contracts: { get: (n: string) => (n === "deploy" ? tool : undefined) },
  trustScore: () => 0.1,
});

const RISK_YAML = `
rules:
  - id: risky-needs-approval
    name: risky
    priority: 100
    match: { risk: { gt: 0.7 } }
    decision: step_up
    reason: risky action
  - id: allow-deploy
    name: deploy
    priority: 200
    match: { tool: deploy }
    decision: allow
    reason: deploys are fine
`;

describe("policy acts on the risk score", () => {
  it("a critical contract called by a doubted agent with MCP-tainted input is stepped up by `risk: {gt: 0.7}`", async () => {
    const tool = compiled(CONTRACT("critical"));
    const h = await makeGate({ yaml: RISK_YAML, gate: gateWith(tool) });
    const out = await h.gate.evaluate(deployReq({ taintLabels: [taint("mcp")] }));
    expect(out.reasonCodes).toEqual(["RULE:risky-needs-approval"]);
    expect(out.decision).toBe("step_up");
    expect(out.riskScore).toBeGreaterThan(0.7);
    const entry = (await h.entries()).find((e) => e.type === "warden.gate.decision")!;
    expect(entry.body).not.toHaveProperty("risk_score");
    const dare = entry.body.dare as { inputs: { orm_risk_score?: number } };
    expect(dare.inputs.orm_risk_score).toBe(out.riskScore);
  });

  it("the same rule leaves a low-tier untainted call to the allow rule", async () => {
    const tool = compiled(CONTRACT("low"));
    const h = await makeGate({ yaml: RISK_YAML, gate: gateWith(tool) });
    const out = await h.gate.evaluate(deployReq({ taintLabels: [taint("mcp")] }));
    expect(out.decision).toBe("allow");
    expect(out.riskScore).toBeLessThan(0.7);
  });

  it("Cedar sees the score in thousandths as context.riskScore", async () => {
    const tool = compiled(CONTRACT("critical"));
    const cedar = `
permit (principal, action, resource);
forbid (principal, action, resource) when { context has riskScore && context.riskScore > 700 };
`;
    // run-2 is an unrelated task: it must not inherit run-1's taint (carry: explicit).
    const h = await makeGate({ cedar, gate: gateWith(tool), context: { taint: { carry: "explicit" } } });
    const tainted = await h.gate.evaluate(deployReq({ taintLabels: [taint("mcp")] }));
    expect(tainted.decision).toBe("deny");
    expect(tainted.riskScore).toBeGreaterThan(0.7);
    expect(tainted.matchedRules.map((r) => r.source)).toContain("cedar");
    const clean = await h.gate.evaluate(deployReq({ runId: "run-2" }));
    expect(clean.decision).toBe("allow");
    expect(clean.riskScore).toBeLessThanOrEqual(0.7);
  });
});
