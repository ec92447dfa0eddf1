// APAE trust thresholds as policy: the YAML `apae` match attribute and Cedar's context,
// fed by the runtime from the deployment's trust table; threshold denials, low-trust
// step-up, and the revocation hook below the revocation floor.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { loadPolicyBundle, TRUST_THRESHOLD_REASON } from "../../src/policy/index.js";
import { composeRuntime, type RuntimeConfig, type TrustRevocation } from "../../src/runtime/index.js";
import { mkInput } from "../policy/helpers.js";

const yaml = (text: string) => loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] });

describe("the YAML apae match attribute", () => {
  const b = yaml(`
rules:
  - { id: reads, name: r, priority: 300, match: { toolClass: http, action: get }, decision: allow, reason: r }
  - { id: t, name: t, priority: 100, match: { toolClass: http, action: get, apae: { min_trust: 0.7, min_confidence: medium } }, decision: deny, reason: low trust }
  - { id: s, name: s, priority: 200, match: { toolClass: http, action: post, apae: { peer_trust_score: { lt: 0.5 } } }, decision: require-approval, reason: low trust }
  - { id: p, name: p, priority: 210, match: { toolClass: http, action: post }, decision: allow, reason: p }
`);
  const get = (trustScore?: number, trustConfidence?: "low" | "medium" | "high") =>
    b.evaluate(
      mkInput(
        "http",
        "get",
        { url: "https://x.example" },
        {
          ...(trustScore !== undefined ? { trustScore } : {}),
          ...(trustConfidence !== undefined ? { trustConfidence } : {}),
        },
      ),
    );

  it("an agent below min_trust is denied with the threshold reason code", () => {
    const r = get(0.69, "high");
    expect(r.decision).toBe("deny");
    expect(r.reasonCodes).toEqual([TRUST_THRESHOLD_REASON]);
    expect(get(0.7, "high").decision).toBe("allow");
  });

  it("a high score earned in few interactions does not pass min_confidence", () => {
    expect(get(0.95, "low").decision).toBe("deny");
    expect(get(0.95, "medium").decision).toBe("allow");
  });

  it("an agent without trust facts fails every threshold (fail closed)", () => {
    expect(get().decision).toBe("deny");
    expect(get(0.9).decision).toBe("deny");
  });

  it("low trust steps up instead of allowing (HITL escalation)", () => {
    const post = (trustScore?: number) =>
      b.evaluate(mkInput("http", "post", {}, trustScore !== undefined ? { trustScore } : {})).decision;
    expect(post(0.49)).toBe("step_up");
    expect(post(0.5)).toBe("allow");
    expect(post()).toBe("step_up");
  });

  it("a rule naming its own reason code keeps it; mixing a comparison with a threshold is refused", () => {
    const own = yaml(`
rules:
  - { id: t, name: t, priority: 1, match: { apae: { min_trust: 0.7 } }, decision: deny, reason: x, reasonCode: MY_CODE }
`);
    expect(own.evaluate(mkInput("http", "get", {}, { trustScore: 0.1 })).reasonCodes).toEqual(["MY_CODE"]);
    expect(() =>
      yaml(`
rules:
  - { id: t, name: t, priority: 1, match: { apae: { min_trust: 0.7, peer_trust_score: { lt: 0.2 } } }, decision: deny, reason: x }
`),
    ).toThrow(/peer_trust_score cannot be combined/);
    expect(() =>
      yaml(`
rules:
  - { id: t, name: t, priority: 1, match: { apae: { min_trust: 1.5 } }, decision: deny, reason: x }
`),
    ).toThrow(/min_trust/);
  });
});

describe("Cedar reads trustConfidence", () => {
  it("a forbid on low confidence denies a fresh agent and not a known one", () => {
    const b = loadPolicyBundle({
      cedar: [
        {
          name: "p.cedar",
          text: `
@id("reads") permit(principal, action == Warden::Action::"http:get", resource);
@id("unknown-agent") @reasonCode("APAE_TRUST_BELOW_THRESHOLD")
forbid(principal, action, resource) when { if context has trustConfidence then context.trustConfidence < 1 else true };
`,
        },
      ],
    });
    const get = (trustConfidence?: "low" | "medium" | "high") =>
      b.evaluate(mkInput("http", "get", {}, trustConfidence !== undefined ? { trustConfidence } : {}));
    expect(get("low").decision).toBe("deny");
    expect(get("low").reasonCodes).toEqual([TRUST_THRESHOLD_REASON]);
    expect(get().decision).toBe("deny");
    expect(get("medium").decision).toBe("allow");
  });
});

const POLICY = `
rules:
  - { id: no-shell, name: no-shell, priority: 100, match: { toolClass: shell }, decision: deny, reason: no shell }
  - { id: floor, name: floor, priority: 110, match: { toolClass: file, action: write, apae: { min_trust: 0.25 } }, decision: deny, reason: too low }
  - { id: escalate, name: escalate, priority: 120, match: { toolClass: file, action: write, apae: { peer_trust_score: { lt: 0.5 } } }, decision: require-approval, stepUp: { approverRole: approver, timeout: 1s }, reason: low }
  - { id: writes, name: writes, priority: 200, match: { toolClass: file, action: write }, decision: allow, reason: w }
`;

async function runtime() {
  const dir = mkdtempSync(join(tmpdir(), "warden-apae-th-"));
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const config: RuntimeConfig = {
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: {
      principals: { "agent-1": { id: "agent-1", roles: ["agent"] } },
      context: { quarantine: { denialThreshold: 100 } },
      requireContract: false,
    },
    apae: { settings: { revocation_floor: 0.21 } },
  };
  return composeRuntime(config);
}

const call = (runId: string, toolClass: "file" | "shell") => ({
  principalId: "agent-1",
  runId,
  toolClass,
  action: toolClass === "file" ? "write" : "exec",
  parameters: toolClass === "file" ? { path: "notes.txt", content: "x" } : {},
});

describe("thresholds in the runtime", () => {
  it("an agent whose violations lower its trust is escalated, then denied, and its tokens are revoked", async () => {
    const rt = await runtime();
    const revoked: TrustRevocation[] = [];
    rt.apae?.onRevoke((r) => {
      revoked.push(r);
    });
    const run = await rt.startRun("agent-1");
    const decide = async (c: "file" | "shell") => (await rt.gate.evaluate(call(run.runId, c))).decision;
    expect(await decide("file")).toBe("allow");
    expect(await decide("shell")).toBe("deny"); // 0.5 → 0.32
    await rt.apae?.settled();
    expect(rt.apae?.viewOf("agent-1").score).toBe(0.32);
    expect(await decide("file")).toBe("step_up");
    expect(revoked).toEqual([]);
    expect(await decide("shell")).toBe("deny"); // 0.32 → 0.2048, below the 0.21 floor
    await rt.apae?.settled();
    const denied = await rt.gate.evaluate(call(run.runId, "file"));
    expect(denied.decision).toBe("deny");
    expect(denied.reasonCodes).toContain(TRUST_THRESHOLD_REASON);
    expect(revoked).toEqual([
      expect.objectContaining({ subject: "agent-1", score: 0.2048, threshold: 0.21 }),
    ]);
    await rt.close();
  });

  it("an agent denied for low trust is not charged a policy violation for asking", async () => {
    const rt = await runtime();
    const run = await rt.startRun("agent-1");
    for (let i = 0; i < 2; i++) await rt.gate.evaluate(call(run.runId, "shell"));
    await rt.apae?.settled();
    const before = rt.apae?.viewOf("agent-1");
    for (let i = 0; i < 5; i++)
      expect((await rt.gate.evaluate(call(run.runId, "file"))).decision).toBe("deny");
    await rt.apae?.settled();
    expect(rt.apae?.viewOf("agent-1")).toEqual(before);
    await rt.close();
  });
});
