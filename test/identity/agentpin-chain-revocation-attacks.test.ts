// Issue 37 loose end: delegators' keys inside an AgentPin chain were not checked against
// revocation. A maker whose attesting key leaked revokes it (or the agent) in its own
// revocation document; a chain still signed with it must no longer verify, while the
// issuer's own credential and key are untouched.
import { describe, expect, it } from "vitest";
import { createAttestation } from "../../src/identity/index.js";
import { issue, makeDomain, revocationDoc, verify } from "./agentpin-fixture.js";

const CAPS = ["read:data"];

describe("a revoked delegator key inside an AgentPin chain", () => {
  const maker = makeDomain("maker.example", { capabilities: ["read:*"] });
  const deployer = makeDomain("deployer.example", { capabilities: ["read:data"] });
  const token = issue(deployer, {
    delegationChain: [
      createAttestation(
        maker.key,
        { domain: maker.domain, role: "maker", agent_id: maker.agent, kid: maker.kid },
        { domain: deployer.domain, agentId: deployer.agent },
        CAPS,
      ),
    ],
  });

  it("the chain verifies while the maker's key stands", async () => {
    const v = await verify(token, [deployer.doc, maker.doc], {
      revocations: [revocationDoc(maker.domain, {})],
    });
    expect(v.result).toMatchObject({ valid: true, delegation_verified: true });
  });

  it("a chain attested with a key its maker revoked is refused, naming the link", async () => {
    const v = await verify(token, [deployer.doc, maker.doc], {
      revocations: [revocationDoc(maker.domain, { revoked_keys: [{ kid: maker.kid }] })],
    });
    expect(v.result.valid).toBe(false);
    expect(v.result.error_code).toBe("KEY_REVOKED");
    expect(v.result.error_message).toContain("link 0 (maker.example)");
  });

  it("a chain through a revoked maker agent is refused", async () => {
    const v = await verify(token, [deployer.doc, maker.doc], {
      revocations: [revocationDoc(maker.domain, { revoked_agents: [{ agent_id: maker.agent }] })],
    });
    expect(v.result.valid).toBe(false);
    expect(v.result.error_code).toBe("AGENT_INACTIVE");
  });
});
