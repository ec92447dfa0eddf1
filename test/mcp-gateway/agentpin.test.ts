// AgentPin credentials at the gateway's Streamable HTTP listener: a verified agent acts
// as the principal it is bound to and its identity reaches policy; a bearer token for the
// same principal does not carry it; a forged credential opens nothing.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueCredential } from "../../src/identity/index.js";
import { makeDomain, withClaims } from "../identity/agentpin-fixture.js";
import { FIXTURE, type GatewayHarness, node, startGateway, TOKENS, text } from "./harness.js";

const POLICY = `
name: gateway-agentpin
version: "1.0"
rules:
  - id: acme-adds
    name: verified acme agents may add
    priority: 10
    match: { toolClass: mcp, action: call, tool: test__add, identity: { domain: acme.example, capabilities: ["execute:add"] } }
    decision: allow
    reason: verified agent
`;

const acme = makeDomain("acme.example", { capabilities: ["execute:add"] });
const credential = () =>
  issueCredential({
    privateKey: acme.key,
    kid: acme.kid,
    issuer: "acme.example",
    agentId: acme.agent,
    capabilities: ["execute:add"],
    ttlSeconds: 600,
    now: Math.floor(Date.now() / 1000),
    audience: "gateway.test",
  });

let h: GatewayHarness;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "warden-gw-agentpin-"));
  writeFileSync(
    join(dir, "bundle.json"),
    JSON.stringify({
      agentpin_bundle_version: "0.1",
      created_at: "2026-01-01T00:00:00Z",
      documents: [acme.doc],
      revocations: [],
    }),
  );
  h = await startGateway({
    dir,
    policy: POLICY,
    upstreams: { test: node(FIXTURE) },
    config: {
      identity: {
        agentpin: {
          audience: "gateway.test",
          trustBundle: "bundle.json",
          pins: "agentpin-pins.json",
          principals: { [acme.agent]: "agent-a" },
        },
      },
    },
  });
}, 60_000);
afterAll(async () => h?.stop());

async function connectWith(authorization: string): Promise<Client> {
  const client = new Client({ name: "agentpin-client", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(h.http.url), { requestInit: { headers: { authorization } } }),
  );
  return client;
}

describe("AgentPin at the gateway", () => {
  it("a verified agent sees and calls the tool its identity is allowed; the decision records the identity", async () => {
    const client = await connectWith(`AgentPin ${credential()}`);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("test__add");
      const r = await client.callTool({ name: "test__add", arguments: { a: 1, b: 2 } });
      expect(text(r)).toBe("3");
      const decisions = await h.gw.runtime.store.query({ type: "warden.gate.decision" });
      expect(decisions.map((d) => (d.body as { identity?: unknown }).identity)).toContainEqual({
        agent_id: acme.agent,
        domain: "acme.example",
        capabilities: ["execute:add"],
      });
    } finally {
      await client.close();
    }
  });

  it("the same principal with a bearer token carries no identity and is denied", async () => {
    const client = await h.connect(TOKENS.a);
    const r = await client.callTool({ name: "test__add", arguments: { a: 1, b: 2 } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/^ERR_MCP_DENIED/);
  });

  it("a tampered credential opens no session", async () => {
    const forged = withClaims(credential(), (c) => {
      c.capabilities = ["execute:add", "admin:*"];
    });
    await expect(connectWith(`AgentPin ${forged}`)).rejects.toThrow(/401|ERR_MCP_AUTH/);
  });
});
