// What a principal may see (a tool its policy can ever allow) and the gateway's
// configuration refusals.
import { describe, expect, it } from "vitest";
import { canEverAllow, type GatewayConfigInput, parseGatewayConfig } from "../../src/mcp-gateway/index.js";
import { loadPolicyBundle } from "../../src/policy/index.js";
import { type CompiledTool, compileContract, ToolContractSchema } from "../../src/tools/index.js";

function contract(name: string, risk: "low" | "critical" = "low"): CompiledTool {
  const r = compileContract(
    ToolContractSchema.parse({
      tool: { name, version: "1", description: name, risk_tier: risk },
      args: { path: { type: "string", required: true } },
      mcp: { server: "s", tool: name },
      output: { format: "json", schema: { type: "object" } },
    }),
  );
  if (!r.ok) throw new Error(r.message);
  return r.tool;
}

const bundle = (text: string) => loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] });
const CALL = { toolClass: "mcp", action: "call" };
const see = (policyText: string, tool: CompiledTool, roles: string[] = ["reader"], principalId = "a") =>
  canEverAllow(bundle(policyText), { principalId, roles, tool, classification: CALL });

const rules = (body: string) => `name: v\nversion: "1"\nrules:\n${body}`;

describe("canEverAllow", () => {
  it("hides a tool no rule allows (default deny)", () => {
    expect(
      see(
        rules("  - { id: x, name: x, priority: 1, match: { tool: other }, decision: allow, reason: r }\n"),
        contract("t"),
      ),
    ).toBe(false);
  });

  it("shows a tool allowed only under a parameter condition (it may be allowed some day)", () => {
    const p = rules(
      "  - { id: x, name: x, priority: 1, match: { tool: t, parameters: { path: { pattern: '^/data/' } } }, decision: allow, reason: r }\n",
    );
    expect(see(p, contract("t"))).toBe(true);
  });

  it("hides a tool an unconditional deny for the principal's role reaches first", () => {
    const p = rules(
      "  - { id: d, name: d, priority: 1, match: { tool: t, roles: reader }, decision: deny, reason: r }\n" +
        "  - { id: a, name: a, priority: 2, match: { toolClass: mcp }, decision: allow, reason: r }\n",
    );
    expect(see(p, contract("t"), ["reader"])).toBe(false);
    expect(see(p, contract("t"), ["writer"])).toBe(true);
  });

  it("a deny that depends on taint does not hide a tool an allow reaches later", () => {
    const p = rules(
      "  - { id: d, name: d, priority: 1, match: { tool: t, taintSources: [web] }, decision: deny, reason: r }\n" +
        "  - { id: a, name: a, priority: 2, match: { tool: t }, decision: allow, reason: r }\n",
    );
    expect(see(p, contract("t"))).toBe(true);
  });

  it("an allow for another principal does not make the tool visible", () => {
    const p = rules(
      "  - { id: a, name: a, priority: 1, match: { tool: t, principalId: b }, decision: allow, reason: r }\n",
    );
    expect(see(p, contract("t"), [], "a")).toBe(false);
    expect(see(p, contract("t"), [], "b")).toBe(true);
  });

  it("a riskTier rule sees the derived contract's tier", () => {
    const p = rules(
      "  - { id: d, name: d, priority: 1, match: { riskTier: critical }, decision: deny, reason: r }\n" +
        "  - { id: a, name: a, priority: 2, match: { toolClass: mcp }, decision: allow, reason: r }\n",
    );
    expect(see(p, contract("t", "critical"))).toBe(false);
    expect(see(p, contract("t", "low"))).toBe(true);
  });
});

describe("gateway configuration", () => {
  const base = (): GatewayConfigInput => ({
    policies: ["p.yaml"],
    journal: { path: "j.db", key: "k.pem" },
    gate: { principals: [{ id: "agent-a", roles: [] }] },
    upstreams: { fs: { command: "node", args: ["x.js"] } },
    pins: "pins.json",
  });
  const refuse = (input: unknown) => {
    try {
      parseGatewayConfig(input, "/tmp");
    } catch (err) {
      return `${(err as { code?: string }).code}: ${(err as Error).message}`;
    }
    return "accepted";
  };

  it("accepts a minimal configuration and makes paths absolute", () => {
    const l = parseGatewayConfig(base(), "/srv/gw");
    expect(l.config.pins).toBe("/srv/gw/pins.json");
    expect(l.config.flagged).toBe("refuse");
  });

  it("refuses an upstream named in the reserved warden.* space", () => {
    expect(refuse({ ...base(), upstreams: { "warden.file": { command: "x" } } })).toMatch(
      /^ERR_MCP_CONFIG_INVALID/,
    );
  });

  it("refuses a stdio or http principal that is not a gate principal", () => {
    expect(refuse({ ...base(), stdio: { principal: "ghost" } })).toContain("stdio.principal: ghost");
    expect(
      refuse({ ...base(), http: { principals: [{ id: "ghost", tokenSha256: `sha256:${"a".repeat(64)}` }] } }),
    ).toContain("http.principals: ghost");
  });

  it("refuses turning contracts off: every upstream tool must be a contract", () => {
    expect(
      refuse({ ...base(), gate: { principals: [{ id: "agent-a", roles: [] }], requireContract: false } }),
    ).toContain("requireContract must stay true");
  });

  it("refuses a gate section that is not an object (never replaced by a default one)", () => {
    expect(refuse({ ...base(), gate: "allow-all" })).toMatch(
      /^ERR_MCP_CONFIG_INVALID: gateway config invalid at gate/,
    );
    expect(refuse({ ...base(), gate: ["x"] })).toMatch(/^ERR_MCP_CONFIG_INVALID/);
  });

  it("refuses two credentials with one token hash", () => {
    const t = `sha256:${"b".repeat(64)}`;
    const input = {
      ...base(),
      gate: {
        principals: [
          { id: "agent-a", roles: [] },
          { id: "agent-b", roles: [] },
        ],
      },
      http: {
        principals: [
          { id: "agent-a", tokenSha256: t },
          { id: "agent-b", tokenSha256: t },
        ],
      },
    };
    expect(refuse(input)).toContain("reuses another credential's token hash");
  });
});
