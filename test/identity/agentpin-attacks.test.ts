// Attacks on AgentPin credential verification: each names what the attacker tries and
// asserts the §6.7 code (and its ERR_IDENTITY_* twin) the verifier answers with.
import { createHmac, sign as nodeSign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import { KeyPinStore, StaticSource, signCredential } from "../../src/identity/index.js";
import { issue, makeDomain, NOW, revocationDoc, verify, withClaims, withHeader } from "./agentpin-fixture.js";

const acme = makeDomain("acme.example");
const docs = [acme.doc];

describe("AgentPin credential attacks", () => {
  it("accepts the honest credential (the baseline every attack below changes one thing of)", async () => {
    const v = await verify(issue(acme), docs);
    expect(v.ok).toBe(true);
    expect(v.result).toMatchObject({
      valid: true,
      agent_id: acme.agent,
      issuer: "acme.example",
      key_pinning: { status: "first_use" },
    });
  });

  it("a tampered payload (a capability added after signing) is SIGNATURE_INVALID", async () => {
    const forged = withClaims(issue(acme), (c) => {
      c.capabilities = ["read:data", "write:report"];
    });
    const v = await verify(forged, docs);
    expect(v.result.error_code).toBe("SIGNATURE_INVALID");
    expect(v.ok ? "" : v.wardenCode).toBe("ERR_IDENTITY_SIGNATURE_INVALID");
  });

  it("alg none with an empty signature is ALGORITHM_REJECTED", async () => {
    const t = withHeader(issue(acme), { alg: "none", typ: "agentpin-credential+jwt", kid: acme.kid });
    const v = await verify(`${t.split(".").slice(0, 2).join(".")}.`, docs);
    expect(v.result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("HS256 keyed with the public JWK (algorithm confusion) is ALGORITHM_REJECTED", async () => {
    const h = Buffer.from(
      JSON.stringify({ alg: "HS256", typ: "agentpin-credential+jwt", kid: acme.kid }),
    ).toString("base64url");
    const p = issue(acme).split(".")[1] as string;
    const mac = createHmac("sha256", JSON.stringify(acme.doc.public_keys[0]))
      .update(`${h}.${p}`)
      .digest("base64url");
    expect((await verify(`${h}.${p}.${mac}`, docs)).result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("a JWT of another type (typ JWT) is ALGORITHM_REJECTED", async () => {
    const t = withHeader(issue(acme), { alg: "ES256", typ: "JWT", kid: acme.kid });
    expect((await verify(t, docs)).result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("a kid the discovery document does not have is KEY_NOT_FOUND", async () => {
    expect((await verify(issue(acme, { kid: "acme.example-2099-01" }), docs)).result.error_code).toBe(
      "KEY_NOT_FOUND",
    );
  });

  it("a credential signed by another key under the right kid is SIGNATURE_INVALID", async () => {
    const other = generateKeyPair("p256").privateKey;
    expect((await verify(issue(acme, { privateKey: other }), docs)).result.error_code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  it("a JOSE-style r||s signature (not DER) is SIGNATURE_INVALID, as in every SDK", async () => {
    const [h, p] = issue(acme).split(".") as [string, string];
    const raw = nodeSign("sha256", Buffer.from(`${h}.${p}`), { key: acme.key, dsaEncoding: "ieee-p1363" });
    expect((await verify(`${h}.${p}.${raw.toString("base64url")}`, docs)).result.error_code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  it("an expired credential is CREDENTIAL_EXPIRED beyond the skew and valid within it", async () => {
    const t = issue(acme, { now: NOW - 1000, ttlSeconds: 900 }); // exp = NOW - 100
    expect((await verify(t, docs)).result.error_code).toBe("CREDENTIAL_EXPIRED");
    expect((await verify(t, docs, { skewSeconds: 101 })).result.valid).toBe(true);
  });

  it("a credential issued in the future (iat beyond the skew) is CREDENTIAL_EXPIRED", async () => {
    expect((await verify(issue(acme, { now: NOW + 61 }), docs)).result.error_code).toBe("CREDENTIAL_EXPIRED");
    expect((await verify(issue(acme, { now: NOW + 60 }), docs)).result.valid).toBe(true);
  });

  it("an nbf beyond the skew is CREDENTIAL_EXPIRED", async () => {
    const t = signCredential(acme.key, acme.kid, {
      iss: "acme.example",
      sub: acme.agent,
      iat: NOW,
      exp: NOW + 600,
      nbf: NOW + 120,
      jti: "j-nbf",
      agentpin_version: "0.1",
      capabilities: ["read:data"],
    });
    expect((await verify(t, docs)).result.error_code).toBe("CREDENTIAL_EXPIRED");
  });

  it("a lifetime over --max-ttl, and over the agent's credential_ttl_max, is CREDENTIAL_EXPIRED", async () => {
    expect(
      (await verify(issue(acme, { ttlSeconds: 3600 }), docs, { maxTtlSeconds: 1800 })).result.error_code,
    ).toBe("CREDENTIAL_EXPIRED");
    const capped = makeDomain("capped.example", { agent: { credential_ttl_max: 600 } });
    expect((await verify(issue(capped, { ttlSeconds: 900 }), [capped.doc])).result.error_code).toBe(
      "CREDENTIAL_EXPIRED",
    );
  });

  it("a credential for another audience is AUDIENCE_MISMATCH; a bearer (*) one is accepted", async () => {
    expect((await verify(issue(acme, { audience: "other.example" }), docs)).result.error_code).toBe(
      "AUDIENCE_MISMATCH",
    );
    expect((await verify(issue(acme, { audience: "*" }), docs)).result.valid).toBe(true);
  });

  it("a capability the discovery document does not declare is CAPABILITY_EXCEEDED", async () => {
    const v = await verify(issue(acme, { capabilities: ["read:data", "delete:data"] }), docs);
    expect(v.result.error_code).toBe("CAPABILITY_EXCEEDED");
  });

  it("admin:* declared does not grant admin:keys (§10.3; the SDKs let it through)", async () => {
    const adm = makeDomain("adm.example", { capabilities: ["admin:*"] });
    expect((await verify(issue(adm, { capabilities: ["admin:keys"] }), [adm.doc])).result.error_code).toBe(
      "CAPABILITY_EXCEEDED",
    );
  });

  it("constraints wider than the discovery defaults are CONSTRAINT_VIOLATION", async () => {
    const c = makeDomain("c.example", { agent: { constraints: { data_classification_max: "internal" } } });
    const t = issue(c, { constraints: { data_classification_max: "restricted" } });
    expect((await verify(t, [c.doc])).result.error_code).toBe("CONSTRAINT_VIOLATION");
  });

  it("a revoked credential, agent and key answer CREDENTIAL_REVOKED, AGENT_INACTIVE and KEY_REVOKED", async () => {
    const t = issue(acme, { jti: "jti-1" });
    const rev = (lists: Record<string, unknown[]>) => ({
      revocations: [revocationDoc("acme.example", lists)],
    });
    const at = { revoked_at: "2026-01-01T00:00:00Z", reason: "key_compromise" };
    expect(
      (await verify(t, docs, rev({ revoked_credentials: [{ jti: "jti-1", ...at }] }))).result.error_code,
    ).toBe("CREDENTIAL_REVOKED");
    expect(
      (await verify(t, docs, rev({ revoked_agents: [{ agent_id: acme.agent, ...at }] }))).result.error_code,
    ).toBe("AGENT_INACTIVE");
    expect((await verify(t, docs, rev({ revoked_keys: [{ kid: acme.kid, ...at }] }))).result.error_code).toBe(
      "KEY_REVOKED",
    );
  });

  it("a revocation entry without its metadata (no reason, no date, no entity) still revokes", async () => {
    const t = issue(acme, { jti: "jti-bare" });
    const bare = { revoked_credentials: [{ jti: "jti-bare" }] };
    expect(
      (
        await verify(t, docs, {
          revocations: [bare],
          source: new StaticSource(docs, [bare], { issuerFallback: true }),
        })
      ).result.error_code,
    ).toBe("CREDENTIAL_REVOKED");
  });

  it("a revocation document that does not parse fails closed (DISCOVERY_INVALID)", async () => {
    const broken = { entity: "acme.example", revoked_credentials: "all" };
    const v = await verify(issue(acme), docs, { source: new StaticSource(docs, [broken]) });
    expect(v.result.error_code).toBe("DISCOVERY_INVALID");
  });

  it("a suspended agent is AGENT_INACTIVE and an undeclared one AGENT_NOT_FOUND", async () => {
    const s = makeDomain("s.example", { agent: { status: "suspended" } });
    expect((await verify(issue(s), [s.doc])).result.error_code).toBe("AGENT_INACTIVE");
    expect((await verify(issue(acme, { agentId: "ghost" }), docs)).result.error_code).toBe("AGENT_NOT_FOUND");
  });

  it("an expired discovery key is KEY_EXPIRED", async () => {
    const doc = structuredClone(acme.doc);
    (doc.public_keys[0] as { exp?: string }).exp = new Date((NOW - 3600) * 1000).toISOString();
    expect((await verify(issue(acme), [doc])).result.error_code).toBe("KEY_EXPIRED");
  });

  it("a discovery document for another domain is DISCOVERY_INVALID", async () => {
    const other = makeDomain("other.example");
    const v = await verify(issue(acme), [other.doc], {
      source: new StaticSource([other.doc], [], { issuerFallback: true }),
    });
    expect(v.result.error_code).toBe("DISCOVERY_INVALID");
  });

  it("a Unicode look-alike issuer (Cyrillic а) with a matching document is DISCOVERY_INVALID", async () => {
    const look = "\u0430cme.example";
    const doc = { ...acme.doc, entity: look };
    const t = signCredential(acme.key, acme.kid, {
      iss: look,
      sub: `urn:agentpin:${look}:bot`,
      iat: NOW,
      exp: NOW + 600,
      jti: "j",
      agentpin_version: "0.1",
      capabilities: ["read:data"],
    });
    expect((await verify(t, [doc])).result.error_code).toBe("DISCOVERY_INVALID");
  });

  it("an issuer missing from the offline documents is DISCOVERY_FETCH_FAILED", async () => {
    expect((await verify(issue(acme), [])).result.error_code).toBe("DISCOVERY_FETCH_FAILED");
  });
});

describe("AgentPin TOFU pinning", () => {
  it("a changed key for a pinned domain is KEY_PIN_MISMATCH until the operator re-pins it", async () => {
    const pins = new KeyPinStore();
    expect((await verify(issue(acme), docs, { pins })).result.key_pinning?.status).toBe("first_use");
    expect((await verify(issue(acme), docs, { pins })).result.key_pinning?.status).toBe("pinned");
    const rotated = makeDomain("acme.example");
    const v = await verify(issue(rotated), [rotated.doc], { pins });
    expect(v.result.error_code).toBe("KEY_PIN_MISMATCH");
    expect(v.ok ? "" : v.wardenCode).toBe("ERR_IDENTITY_KEY_PIN_MISMATCH");
    const event = pins.add("acme.example", rotated.doc.public_keys[0] as never, "2026-02-01T00:00:00Z");
    expect(event.kind).toBe("operator");
    expect((await verify(issue(rotated), [rotated.doc], { pins })).result.valid).toBe(true);
  });

  it("a credential that fails a later step (audience) pins nothing", async () => {
    const pins = new KeyPinStore();
    const v = await verify(issue(acme, { audience: "other.example" }), docs, { pins });
    expect(v.ok).toBe(false);
    expect(pins.pinnedKeys("acme.example")).toEqual([]);
  });

  it("the first use returns a pin event for the journal", async () => {
    const v = await verify(issue(acme), docs);
    if (!v.ok) throw new Error(v.message);
    expect(v.pinEvent).toMatchObject({ kind: "first_use", domain: "acme.example", kid: acme.kid });
    expect(v.pinEvent?.public_key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a minimal pin store from another SDK (hash only, upper-case hex) still refuses a changed key", async () => {
    const other = makeDomain("acme.example");
    const { pinHashOf } = await import("../../src/identity/index.js");
    const hash = pinHashOf(other.doc.public_keys[0] as never).toUpperCase();
    const pins = KeyPinStore.fromJson(
      JSON.stringify([{ domain: "acme.example", pinned_keys: [{ public_key_hash: hash }] }]),
    );
    expect((await verify(issue(acme), docs, { pins })).result.error_code).toBe("KEY_PIN_MISMATCH");
    expect((await verify(issue(other), [other.doc], { pins })).result.key_pinning?.status).toBe("pinned");
  });

  it("a pin store that is not the KeyPinStore format is refused (ERR_IDENTITY_CONFIG_INVALID)", () => {
    expect(() => KeyPinStore.fromJson('{"domain":"x"}')).toThrow(
      expect.objectContaining({ code: "ERR_IDENTITY_CONFIG_INVALID" }),
    );
  });
});
