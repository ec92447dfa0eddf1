// The verified agent identity in the Gate: policy matches on it (identity.present /
// agentId / domain / capabilities) and every decision record carries it. Built on a real
// Gate (test/gate/harness.ts) with an identity obtained from a verified credential.
import { describe, expect, it } from "vitest";
import { KeyPinStore, StaticSource, verifyCredential } from "../../src/identity/index.js";
import { makeGate, req } from "../gate/harness.js";
import { issue, makeDomain, NOW } from "./agentpin-fixture.js";

const POLICY = `
name: identity-test
version: "1.0"
rules:
  - id: acme-readers
    name: acme agents holding read:web may GET
    priority: 100
    match: { toolClass: http, action: get, identity: { domain: acme.example, capabilities: ["read:web"] } }
    decision: allow
    reason: verified acme reader
  - id: no-credential
    name: calls without a verified agent identity
    priority: 200
    match: { identity: { present: false } }
    decision: deny
    reason: a verified agent credential is required
`;

async function identityOf(domain: ReturnType<typeof makeDomain>, capabilities: string[]) {
  const v = await verifyCredential(issue(domain, { capabilities }), {
    source: new StaticSource([domain.doc]),
    pins: new KeyPinStore(),
    audience: "verifier.example",
    now: NOW,
  });
  if (!v.ok) throw new Error(v.message);
  const { agentId, domain: d, capabilities: caps } = v.identity;
  return { agentId, domain: d, capabilities: caps };
}

describe("verified agent identity in the Gate", () => {
  const acme = makeDomain("acme.example", { capabilities: ["read:*"] });
  const evil = makeDomain("evil.example", { capabilities: ["read:*"] });

  it("a verified acme reader is allowed and the decision record names its identity", async () => {
    const h = await makeGate({ yaml: POLICY });
    const identity = await identityOf(acme, ["read:web"]);
    const o = await h.gate.authorize(req({ identity }));
    expect(o.decision).toBe("allow");
    const rec = (await h.entries()).find((e) => e.type === "warden.gate.decision");
    expect(rec?.body.identity).toEqual({
      agent_id: acme.agent,
      domain: "acme.example",
      capabilities: ["read:web"],
    });
    expect((await h.verify()).ok).toBe(true);
  });

  it("an agent without a verified credential falls to the deny rule", async () => {
    const h = await makeGate({ yaml: POLICY });
    const o = await h.gate.authorize(req());
    expect(o.decision).toBe("deny");
    const rec = (await h.entries()).find((e) => e.type === "warden.gate.decision");
    expect(rec?.body.identity).toBeUndefined();
  });

  it("an agent of another domain holding the same capability does not match the domain rule", async () => {
    const h = await makeGate({ yaml: POLICY });
    expect((await h.gate.authorize(req({ identity: await identityOf(evil, ["read:web"]) }))).decision).toBe(
      "deny",
    );
  });

  it("an acme agent without the capability does not match", async () => {
    const h = await makeGate({ yaml: POLICY });
    expect((await h.gate.authorize(req({ identity: await identityOf(acme, ["read:docs"]) }))).decision).toBe(
      "deny",
    );
  });
});
