// Issue 37 loose end: Cedar policies did not see the identity, capability, trust and
// message facts YAML rules see, so an operator writing in Cedar could not forbid what a
// YAML rule forbids (a revoked agent's domain, a call without its capability token, a
// delegation too deep). Each case here is decided the same way by YAML and Cedar.
import { describe, expect, it } from "vitest";
import { loadPolicyBundle, type PolicyInput } from "../../src/policy/index.js";
import { mkInput } from "./helpers.js";

const cedar = (text: string) => loadPolicyBundle({ cedar: [{ name: "p.cedar", text }] });
const yaml = (text: string) => loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] });
const both = (c: string, y: string) => [cedar(c), yaml(y)] as const;

const evil = mkInput(
  "http",
  "post",
  { url: "https://x.example" },
  {
    request: { identity: { agentId: "agent-1", domain: "evil.example", capabilities: ["write"] } },
  },
);
const good = mkInput(
  "http",
  "post",
  { url: "https://x.example" },
  {
    request: { identity: { agentId: "agent-1", domain: "good.example", capabilities: ["write"] } },
  },
);

describe("Cedar sees the facts YAML sees", () => {
  it("an agent from a forbidden identity domain is denied by Cedar as by YAML", () => {
    for (const b of both(
      'permit(principal, action, resource);\nforbid(principal, action, resource) when { context has identity && context.identity.domain == "evil.example" };',
      `rules:
  - { id: evil, name: evil, priority: 1, match: { identity: { domain: evil.example } }, decision: deny, reason: evil }
  - { id: all, name: all, priority: 2, match: { toolClass: http }, decision: allow, reason: ok }`,
    )) {
      expect(b.evaluate(evil).decision).toBe("deny");
      expect(b.evaluate(good).decision).toBe("allow");
    }
  });

  it("a call without its capability token is denied by Cedar as by YAML", () => {
    const withToken: PolicyInput = { ...good, capability: { id: "c1", tool: "post", usesLeft: 1 } };
    for (const b of both(
      "permit(principal, action, resource) when { context.capability };",
      "rules:\n  - { id: cap, name: cap, priority: 1, match: { capability: true }, decision: allow, reason: ok }",
    )) {
      expect(b.evaluate(good).decision).toBe("deny");
      expect(b.evaluate(withToken).decision).toBe("allow");
    }
  });

  it("a message delegated too deep is denied by Cedar as by YAML; identity capabilities are visible", () => {
    const msg = (depth: number): PolicyInput => ({
      ...mkInput("message", "send"),
      message: { from: "a", to: "b", primitive: "delegate", payloadType: "delegate_task", depth },
    });
    for (const b of both(
      "permit(principal, action, resource);\nforbid(principal, action, resource) when { context has message && context.message.depth > 1 };",
      `rules:
  - { id: deep, name: deep, priority: 1, match: { message: { depth: { gt: 1 } } }, decision: deny, reason: deep }
  - { id: all, name: all, priority: 2, match: { toolClass: message }, decision: allow, reason: ok }`,
    )) {
      expect(b.evaluate(msg(1)).decision).toBe("allow");
      expect(b.evaluate(msg(2)).decision).toBe("deny");
    }
    const caps = cedar(
      'permit(principal, action, resource) when { context has identity && context.identity.capabilities.contains("write") };',
    );
    expect(caps.evaluate(good).decision).toBe("allow");
    expect(caps.evaluate(mkInput("http", "post")).decision).toBe("deny");
  });
});
