// The sidecar accepts `Authorization: AgentPin <jwt>` as an agent credential beside the
// bearer tokens: a verified agent acts as the principal it is bound to, its identity
// reaches policy and the decision record, and a forged, unbound or body-claimed identity
// is refused with its code.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueCredential } from "../../src/identity/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "../server/harness.js";
import { makeDomain, withClaims } from "./agentpin-fixture.js";

const POLICY = `
name: identity-sidecar
version: "1.0"
rules:
  - id: acme-echo
    name: verified acme agents may echo
    priority: 100
    match: { toolClass: shell, action: exec, identity: { domain: acme.example, capabilities: ["execute:echo"] } }
    decision: allow
    reason: verified acme agent
`;

const acme = makeDomain("acme.example", { capabilities: ["execute:echo", "read:*"] });
const stranger = `urn:agentpin:acme.example:stranger`;
acme.doc.agents.push({
  agent_id: stranger,
  name: "stranger",
  capabilities: ["execute:echo"],
  status: "active",
});

const credential = (agentId = acme.agent, capabilities = ["execute:echo"]) =>
  issueCredential({
    privateKey: acme.key,
    kid: acme.kid,
    issuer: "acme.example",
    agentId,
    capabilities,
    ttlSeconds: 600,
    now: Math.floor(Date.now() / 1000),
    audience: "warden.test",
  });

describe("AgentPin credentials at the sidecar", () => {
  let s: Sidecar;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-agentpin-sidecar-"));
    const bundle = join(dir, "bundle.json");
    writeFileSync(
      bundle,
      JSON.stringify({
        agentpin_bundle_version: "0.1",
        created_at: "2026-01-01T00:00:00Z",
        documents: [acme.doc],
        revocations: [],
      }),
    );
    s = await startTestSidecar({
      policy: POLICY,
      config: {
        identity: {
          agentpin: {
            audience: "warden.test",
            trustBundle: bundle,
            pins: join(dir, "pins.json"),
            principals: { [acme.agent]: "agent-a" },
          },
        },
      },
    });
  });
  afterAll(() => s.stop());

  const pin = (token: string) => ({ authorization: `AgentPin ${token}` });

  async function runFor(headers: Record<string, string>): Promise<string> {
    const r = await s.call("/v1/runs", { headers, body: {} });
    expect(r.status).toBe(201);
    return r.body.runId as string;
  }

  it("a verified agent acts as its bound principal; policy matches its identity and the record carries it", async () => {
    const headers = pin(credential());
    const runId = await runFor(headers);
    const r = await s.call("/v1/decide", { headers, body: echo("hi", { runId }) });
    expect(r.body.decision).toBe("allow");
    const [decision] = await s.server.runtime.store.query({ run_id: runId, type: "warden.gate.decision" });
    expect((decision as { body: Record<string, unknown> }).body.identity).toEqual({
      agent_id: acme.agent,
      domain: "acme.example",
      capabilities: ["execute:echo"],
    });
    expect((decision as { body: Record<string, unknown> }).body.principal_id).toBe("agent-a");
    const pinned = await s.server.runtime.store.query({ type: "warden.identity.key_pinned" });
    expect(pinned.map((e) => (e as { body: Record<string, unknown> }).body)).toMatchObject([
      { kind: "first_use", domain: "acme.example", kid: acme.kid },
    ]);
  });

  it("the same principal with a bearer token (no verified identity) does not match the identity rule", async () => {
    const runId = await s.run("bearer");
    const r = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId }) });
    expect(r.body.decision).toBe("deny");
  });

  it("a tampered credential is 401 ERR_IDENTITY_SIGNATURE_INVALID", async () => {
    const forged = withClaims(credential(), (c) => {
      c.capabilities = ["execute:echo", "read:secrets"];
    });
    const r = await s.call("/v1/runs", { headers: pin(forged), body: {} });
    expect([r.status, (r.body.error as { code: string }).code]).toEqual([
      401,
      "ERR_IDENTITY_SIGNATURE_INVALID",
    ]);
  });

  it("a verified agent no principal is bound to is 403 ERR_IDENTITY_AGENT_NOT_FOUND", async () => {
    const r = await s.call("/v1/runs", { headers: pin(credential(stranger)), body: {} });
    expect([r.status, (r.body.error as { code: string }).code]).toEqual([
      403,
      "ERR_IDENTITY_AGENT_NOT_FOUND",
    ]);
  });

  it("a credential for another audience is 401 ERR_IDENTITY_AUDIENCE_MISMATCH", async () => {
    const other = issueCredential({
      privateKey: acme.key,
      kid: acme.kid,
      issuer: "acme.example",
      agentId: acme.agent,
      capabilities: ["execute:echo"],
      ttlSeconds: 600,
      now: Math.floor(Date.now() / 1000),
      audience: "elsewhere.test",
    });
    const r = await s.call("/v1/runs", { headers: pin(other), body: {} });
    expect([r.status, (r.body.error as { code: string }).code]).toEqual([
      401,
      "ERR_IDENTITY_AUDIENCE_MISMATCH",
    ]);
  });

  it("a bearer-token agent that claims an identity in the body is refused", async () => {
    const runId = await s.run("claim");
    const body = echo("hi", {
      runId,
      identity: { agentId: acme.agent, domain: "acme.example", capabilities: ["execute:echo"] },
    });
    const r = await s.call("/v1/decide", { token: TOKENS.agentA, body });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body.decision).toBeUndefined();
  });
});
