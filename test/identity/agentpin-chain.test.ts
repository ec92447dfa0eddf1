// Attacks on AgentPin delegation chains (§5.6, §6.4, §10.3): forged and misdirected
// attestations, a link that widens, depth beyond the smallest max_delegation_depth, and a
// compromised deployer that tries to escalate past its maker.
import { describe, expect, it } from "vitest";
import { createAttestation, type DelegationEntry } from "../../src/identity/index.js";
import { type Domain, issue, makeDomain, verify } from "./agentpin-fixture.js";

const CAPS = ["read:data"];

function attest(
  from: Domain,
  to: { domain: string; agentId: string },
  role: "maker" | "deployer" = "maker",
  caps = CAPS,
): DelegationEntry {
  return createAttestation(
    from.key,
    { domain: from.domain, role, agent_id: from.agent, kid: from.kid },
    to,
    caps,
  );
}

describe("AgentPin delegation chain attacks", () => {
  const maker = makeDomain("maker.example", { capabilities: ["read:*", "write:report"] });
  const deployer = makeDomain("deployer.example", { capabilities: ["read:data", "write:report"] });
  const toDeployer = { domain: deployer.domain, agentId: deployer.agent };

  it("a maker → deployer chain verifies (delegation_verified, links listed)", async () => {
    const v = await verify(issue(deployer, { delegationChain: [attest(maker, toDeployer)] }), [
      deployer.doc,
      maker.doc,
    ]);
    expect(v.result).toMatchObject({
      valid: true,
      delegation_verified: true,
      delegation_chain: [{ domain: "maker.example", role: "maker", verified: true }],
    });
  });

  it("an attestation signed by the deployer's own key instead of the maker's is DELEGATION_INVALID", async () => {
    const forged = {
      ...attest(deployer, toDeployer),
      domain: maker.domain,
      agent_id: maker.agent,
      kid: maker.kid,
    };
    const v = await verify(issue(deployer, { delegationChain: [forged] }), [deployer.doc, maker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
    expect(v.result.error_message).toContain("link 0 (maker.example)");
  });

  it("an attestation for another delegatee (replayed from a different deployment) is DELEGATION_INVALID", async () => {
    const replay = attest(maker, {
      domain: "elsewhere.example",
      agentId: "urn:agentpin:elsewhere.example:bot",
    });
    const v = await verify(issue(deployer, { delegationChain: [replay] }), [deployer.doc, maker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
  });

  it("an attestation over other capabilities than the credential's is DELEGATION_INVALID", async () => {
    const att = attest(maker, toDeployer, "maker", ["read:data", "write:report"]);
    const v = await verify(issue(deployer, { delegationChain: [att] }), [deployer.doc, maker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
  });

  it("an attestation in url-safe base64 (not the SDKs' standard base64) is DELEGATION_INVALID", async () => {
    const a = attest(maker, toDeployer);
    const urlSafe = { ...a, attestation: Buffer.from(a.attestation, "base64").toString("base64url") };
    if (urlSafe.attestation === a.attestation.replace(/=+$/, "")) urlSafe.attestation += "-";
    const v = await verify(issue(deployer, { delegationChain: [urlSafe] }), [deployer.doc, maker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
  });

  it("a compromised deployer that declares more than its maker (widening link) is refused naming the link", async () => {
    const greedy = makeDomain("greedy.example", { capabilities: ["read:data", "delete:data"] });
    const narrowMaker = makeDomain("narrow-maker.example", { capabilities: ["read:*"] });
    const t = issue(greedy, {
      capabilities: ["read:data"],
      delegationChain: [attest(narrowMaker, { domain: greedy.domain, agentId: greedy.agent })],
    });
    const v = await verify(t, [greedy.doc, narrowMaker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
    expect(v.result.error_message).toMatch(
      /link 0 → 1 .*narrow-maker\.example.*greedy\.example.*widens: delete:data/,
    );
  });

  it("a compromised deployer cannot escalate: a credential capability outside the maker's is refused", async () => {
    const d = makeDomain("d2.example", { capabilities: ["read:data", "write:report"] });
    const m = makeDomain("m2.example", { capabilities: ["read:*", "write:report"] });
    const caps = ["read:data", "write:report"];
    const mOnlyRead = makeDomain("m3.example", { capabilities: ["read:*"] });
    const ok = issue(d, {
      capabilities: caps,
      delegationChain: [attest(m, { domain: d.domain, agentId: d.agent }, "maker", caps)],
    });
    expect((await verify(ok, [d.doc, m.doc])).result.valid).toBe(true);
    const esc = issue(d, {
      capabilities: caps,
      delegationChain: [attest(mOnlyRead, { domain: d.domain, agentId: d.agent }, "maker", caps)],
    });
    expect((await verify(esc, [d.doc, mOnlyRead.doc])).result.error_code).toBe("DELEGATION_INVALID");
  });

  it("a chain longer than the smallest max_delegation_depth is DELEGATION_DEPTH_EXCEEDED", async () => {
    const shallow = makeDomain("shallow.example", { capabilities: ["read:*"], maxDepth: 1 });
    const mid = makeDomain("mid.example", { capabilities: ["read:*"] });
    const chain = [
      attest(shallow, { domain: mid.domain, agentId: mid.agent }),
      attest(mid, toDeployer, "deployer"),
    ];
    const v = await verify(issue(deployer, { delegationChain: chain }), [deployer.doc, mid.doc, shallow.doc]);
    expect(v.result.error_code).toBe("DELEGATION_DEPTH_EXCEEDED");
    expect(v.ok ? "" : v.wardenCode).toBe("ERR_IDENTITY_DELEGATION_DEPTH_EXCEEDED");
  });

  it("a chain of 4 (beyond the protocol's 3) is DELEGATION_DEPTH_EXCEEDED before any document is fetched", async () => {
    const a = attest(maker, toDeployer);
    const v = await verify(issue(deployer, { delegationChain: [a, a, a, a] }), [deployer.doc]);
    expect(v.result.error_code).toBe("DELEGATION_DEPTH_EXCEEDED");
  });

  it("an issuer with max_delegation_depth 0 refuses any chain", async () => {
    const flat = makeDomain("flat.example", { maxDepth: 0 });
    const t = issue(flat, { delegationChain: [attest(maker, { domain: flat.domain, agentId: flat.agent })] });
    expect((await verify(t, [flat.doc, maker.doc])).result.error_code).toBe("DELEGATION_DEPTH_EXCEEDED");
  });

  it("a chain entity without a discovery document is DISCOVERY_FETCH_FAILED", async () => {
    const v = await verify(issue(deployer, { delegationChain: [attest(maker, toDeployer)] }), [deployer.doc]);
    expect(v.result.error_code).toBe("DISCOVERY_FETCH_FAILED");
  });

  it("an attestation whose role is neither maker nor deployer is DELEGATION_INVALID", async () => {
    const a = { ...attest(maker, toDeployer), role: "owner" };
    const v = await verify(issue(deployer, { delegationChain: [a] }), [deployer.doc, maker.doc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
  });
});
