// Cross-check with the upstream AgentPin JS SDK (npm `agentpin`, devDependency): what
// Warden issues (credentials, attestations, pin stores) the SDK accepts, and what the SDK
// issues Warden accepts, with the same error code when either side refuses. The SDK
// reads the wall clock, so these credentials are issued at the real time.
import { readFileSync } from "node:fs";
import {
  Capability,
  pemToJwk,
  KeyPinStore as SdkPins,
  createAttestation as sdkAttest,
  issueCredential as sdkIssue,
  generateKeyPair as sdkKeyPair,
  verifyCredentialOffline as sdkVerify,
  verifyAttestation as sdkVerifyAttestation,
} from "agentpin";
import { describe, expect, it } from "vitest";
import { parsePrivateKey } from "../../src/crypto/index.js";
import {
  createAttestation,
  issueCredential,
  KeyPinStore,
  StaticSource,
  verifyCredential,
} from "../../src/identity/index.js";
import { readVectorJson, vectorPath } from "./vectors.js";

const TD = ["agentpin", "go", "pkg", "verification", "testdata"] as const;
const pem = readFileSync(vectorPath(...TD, "example-2026-01.private.pem"), "utf8");
const discovery = readVectorJson(...TD, "discovery.json") as Record<string, unknown>;
const AGENT = "urn:agentpin:example.com:test-agent";
const CAPS = ["read:data", "write:report"];
const nowS = () => Math.floor(Date.now() / 1000);

function wardenIssued(extra: Partial<Parameters<typeof issueCredential>[0]> = {}): string {
  return issueCredential({
    privateKey: parsePrivateKey(pem),
    kid: "example-2026-01",
    issuer: "example.com",
    agentId: AGENT,
    capabilities: CAPS,
    ttlSeconds: 900,
    now: nowS(),
    audience: "verifier.com",
    ...extra,
  });
}

const wardenVerify = (token: string, docs: unknown[] = [discovery], pins = new KeyPinStore()) =>
  verifyCredential(token, { source: new StaticSource(docs), pins, audience: "verifier.com", now: nowS() });

describe("Warden-issued AgentPin credentials, checked by the upstream SDK", () => {
  it("a credential signed with the vector key verifies with agentpin@0.3.0 (DER signature)", () => {
    const r = sdkVerify(wardenIssued(), discovery, null, new SdkPins(), "verifier.com");
    expect(r).toMatchObject({ valid: true, agent_id: AGENT, capabilities: CAPS, error_code: null });
  });

  it("a tampered Warden credential is SIGNATURE_INVALID for both", async () => {
    const [h, p, s] = wardenIssued().split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    claims.capabilities = ["read:data", "write:report", "read:secrets"];
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${s}`;
    expect(sdkVerify(forged, discovery, null, new SdkPins(), "verifier.com").error_code).toBe(
      "SIGNATURE_INVALID",
    );
    expect((await wardenVerify(forged)).result.error_code).toBe("SIGNATURE_INVALID");
  });

  it("a credential the SDK issues verifies in Warden", async () => {
    const token = sdkIssue(
      pem,
      "example-2026-01",
      "example.com",
      AGENT,
      "verifier.com",
      CAPS.map((c) => new Capability(c)),
      null,
      null,
      900,
    );
    expect((await wardenVerify(token)).result).toMatchObject({ valid: true, agent_id: AGENT });
  });

  it("the two agree on a capability beyond the discovery declaration (CAPABILITY_EXCEEDED)", async () => {
    const token = wardenIssued({ capabilities: ["read:data", "delete:data"] });
    expect(sdkVerify(token, discovery, null, new SdkPins(), "verifier.com").error_code).toBe(
      "CAPABILITY_EXCEEDED",
    );
    expect((await wardenVerify(token)).result.error_code).toBe("CAPABILITY_EXCEEDED");
  });

  it("pin stores round-trip: Warden's store pins for the SDK and the SDK's for Warden", async () => {
    const w = new KeyPinStore();
    expect((await wardenVerify(wardenIssued(), [discovery], w)).result.key_pinning?.status).toBe("first_use");
    const sdk = SdkPins.fromJson(w.toJson());
    expect(sdkVerify(wardenIssued(), discovery, null, sdk, "verifier.com").key_pinning?.status).toBe(
      "pinned",
    );
    const back = KeyPinStore.fromJson(sdk.toJson());
    expect((await wardenVerify(wardenIssued(), [discovery], back)).result.key_pinning?.status).toBe("pinned");
  });

  it("a store pinned to another key is KEY_PIN_MISMATCH for both", async () => {
    const other = sdkKeyPair();
    const otherDoc = { ...discovery, public_keys: [pemToJwk(other.publicKeyPem, "example-2026-01")] };
    const pinsOther = new KeyPinStore();
    const tok = sdkIssue(
      other.privateKeyPem,
      "example-2026-01",
      "example.com",
      AGENT,
      "verifier.com",
      [new Capability("read:data")],
      null,
      null,
      900,
    );
    expect((await wardenVerify(tok, [otherDoc], pinsOther)).result.valid).toBe(true);
    expect(
      sdkVerify(wardenIssued(), discovery, null, SdkPins.fromJson(pinsOther.toJson()), "verifier.com")
        .error_code,
    ).toBe("KEY_PIN_MISMATCH");
    expect((await wardenVerify(wardenIssued(), [discovery], pinsOther)).result.error_code).toBe(
      "KEY_PIN_MISMATCH",
    );
  });
});

describe("delegation attestations, both directions", () => {
  const maker = sdkKeyPair();
  const makerDoc = {
    agentpin_version: "0.1",
    entity: "maker.example",
    entity_type: "maker",
    public_keys: [pemToJwk(maker.publicKeyPem, "maker-1")],
    agents: [
      {
        agent_id: "urn:agentpin:maker.example:type-a",
        name: "type a",
        capabilities: ["read:*", "write:report"],
        status: "active",
      },
    ],
    max_delegation_depth: 2,
    updated_at: "2026-01-01T00:00:00Z",
  };
  const entry = {
    domain: "maker.example",
    role: "maker" as const,
    agent_id: "urn:agentpin:maker.example:type-a",
    kid: "maker-1",
  };
  const delegatee = { domain: "example.com", agentId: AGENT };

  it("a Warden attestation verifies with the SDK's verifyAttestation", () => {
    const att = createAttestation(parsePrivateKey(maker.privateKeyPem), entry, delegatee, CAPS);
    expect(() =>
      sdkVerifyAttestation(
        att,
        maker.publicKeyPem,
        "example.com",
        AGENT,
        CAPS.map((c) => new Capability(c)),
      ),
    ).not.toThrow();
  });

  it("an SDK attestation in a chain verifies in Warden (delegation_verified)", async () => {
    const att = sdkAttest(
      maker.privateKeyPem,
      "maker-1",
      entry.domain,
      "maker",
      entry.agent_id,
      "example.com",
      AGENT,
      CAPS.map((c) => new Capability(c)),
    );
    const v = await wardenVerify(wardenIssued({ delegationChain: [att] }), [discovery, makerDoc]);
    expect(v.result).toMatchObject({
      valid: true,
      delegation_verified: true,
      delegation_chain: [{ domain: "maker.example", role: "maker", verified: true }],
    });
  });

  it("an SDK attestation for another delegatee is DELEGATION_INVALID in Warden", async () => {
    const att = sdkAttest(
      maker.privateKeyPem,
      "maker-1",
      entry.domain,
      "maker",
      entry.agent_id,
      "example.com",
      "urn:agentpin:example.com:other",
      CAPS.map((c) => new Capability(c)),
    );
    const v = await wardenVerify(wardenIssued({ delegationChain: [att] }), [discovery, makerDoc]);
    expect(v.result.error_code).toBe("DELEGATION_INVALID");
  });
});
