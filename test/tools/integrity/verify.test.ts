// The verification pipeline as an attacker meets it: revoked keys (discovery list,
// standalone documents, bundles), TOFU pins, keys from the wrong place or curve.
import { describe, expect, it } from "vitest";
import {
  buildDiscoveryDocument,
  buildRevocationDocument,
  PinStore,
  parseDiscoveryDocument,
  parseRevocationDocument,
  parseTrustBundle,
  type RevocationDocument,
  signSchemaPin,
  verifySignedSchema,
} from "../../../src/tools/integrity/index.js";
import { discoveryFor, p256, p384 } from "./helpers.js";

const schema = { name: "calc", description: "adds", parameters: { type: "object" } };

function revocation(domain: string, fingerprint: string): RevocationDocument {
  const r = parseRevocationDocument(
    buildRevocationDocument(domain, [{ fingerprint, reason: "key_compromise" }]),
  );
  if (!r.ok) throw new Error(r.message);
  return r.document;
}

describe("revocation", () => {
  const pair = p256();
  const signature = signSchemaPin(pair.privateKey, schema);

  it("a key listed in the discovery document's revoked_keys is refused", () => {
    const discovery = discoveryFor(pair, [discoveryFor(pair).fingerprint]);
    expect(verifySignedSchema({ schema, signature }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_KEY_REVOKED",
    });
  });

  it("revoked_keys match case-insensitively", () => {
    const fp = discoveryFor(pair).fingerprint;
    const discovery = discoveryFor(pair, [fp.toUpperCase().replace("SHA256", "sha256")]);
    expect(verifySignedSchema({ schema, signature }, { discovery })).toMatchObject({
      code: "ERR_INTEGRITY_KEY_REVOKED",
    });
  });

  it("a key revoked by a standalone revocation document is refused, even with a valid signature", () => {
    const discovery = discoveryFor(pair);
    expect(verifySignedSchema({ schema, signature }, { discovery })).toMatchObject({ ok: true });
    const r = verifySignedSchema(
      { schema, signature },
      { discovery, revocations: [revocation("example.com", discovery.fingerprint)] },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_REVOKED" });
    if (!r.ok) expect(r.message).toContain("key_compromise");
  });

  it("a revocation of another key does not affect this one", () => {
    const discovery = discoveryFor(pair);
    const other = discoveryFor(p256()).fingerprint;
    expect(
      verifySignedSchema(
        { schema, signature },
        { discovery, revocations: [revocation("example.com", other)] },
      ),
    ).toMatchObject({ ok: true });
  });

  it("revocations carried in a trust bundle apply", () => {
    const discoveryDoc = buildDiscoveryDocument({ publicKey: pair.publicKey, developerName: "Dev" });
    const fp = discoveryFor(pair).fingerprint;
    const parsed = parseTrustBundle({
      schemapin_bundle_version: "1.2",
      created_at: "2026-01-01T00:00:00Z",
      documents: [{ domain: "example.com", ...discoveryDoc }],
      revocations: [buildRevocationDocument("example.com", [{ fingerprint: fp, reason: "superseded" }])],
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(
      verifySignedSchema({ schema, signature }, { bundle: parsed.bundle, domain: "example.com" }),
    ).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_KEY_REVOKED",
    });
  });

  it("a malformed revocation document is an error, not 'nothing revoked'", () => {
    expect(parseRevocationDocument({ domain: "example.com", revoked_keys: "all" })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_REVOCATION_INVALID",
    });
    expect(
      parseRevocationDocument({
        schemapin_version: "1.2",
        domain: "example.com",
        updated_at: "x",
        revoked_keys: [{ fingerprint: "sha256:ab" }],
      }),
    ).toMatchObject({ ok: false, code: "ERR_INTEGRITY_REVOCATION_INVALID" });
  });
});

describe("TOFU pinning", () => {
  const pair = p256();
  const discovery = discoveryFor(pair);
  const signature = signSchemaPin(pair.privateKey, schema);

  it("first use pins, later uses match", () => {
    const pins = PinStore.inMemory();
    const opts = { discovery, pins, domain: "example.com" };
    expect(verifySignedSchema({ schema, signature }, opts)).toMatchObject({ ok: true, pin: "first_use" });
    expect(pins.get("calc", "example.com")?.fingerprint).toBe(discovery.fingerprint);
    expect(verifySignedSchema({ schema, signature }, opts)).toMatchObject({ ok: true, pin: "pinned" });
  });

  it("a changed key is rejected until explicitly re-pinned", () => {
    const pins = PinStore.inMemory();
    verifySignedSchema({ schema, signature }, { discovery, pins, domain: "example.com" });
    const attacker = p256();
    const forged = { schema, signature: signSchemaPin(attacker.privateKey, schema) };
    const attackerDiscovery = discoveryFor(attacker);
    const r = verifySignedSchema(forged, { discovery: attackerDiscovery, pins, domain: "example.com" });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_PIN_MISMATCH" });
    expect(pins.get("calc", "example.com")?.fingerprint).toBe(discovery.fingerprint);
    const again = verifySignedSchema(forged, { discovery: attackerDiscovery, pins, domain: "example.com" });
    expect(again).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_PIN_MISMATCH" });
    const repinned = verifySignedSchema(forged, {
      discovery: attackerDiscovery,
      pins,
      domain: "example.com",
      repin: true,
    });
    expect(repinned).toMatchObject({ ok: true, pin: "repinned" });
    expect(pins.get("calc", "example.com")?.fingerprint).toBe(attackerDiscovery.fingerprint);
  });

  it("re-pinning never accepts a bad signature", () => {
    const pins = PinStore.inMemory();
    verifySignedSchema({ schema, signature }, { discovery, pins, domain: "example.com" });
    const other = discoveryFor(p256());
    const r = verifySignedSchema(
      { schema, signature },
      { discovery: other, pins, domain: "example.com", repin: true },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
    expect(pins.get("calc", "example.com")?.fingerprint).toBe(discovery.fingerprint);
  });

  it("a forged signature never plants a first-use pin", () => {
    const pins = PinStore.inMemory();
    const bad = { schema: { ...schema, description: "evil" }, signature };
    expect(verifySignedSchema(bad, { discovery, pins, domain: "example.com" })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
    expect(pins.entries()).toEqual([]);
  });

  it("pinPolicy 'require' refuses a key that was never pinned", () => {
    const pins = PinStore.inMemory();
    const r = verifySignedSchema(
      { schema, signature },
      { discovery, pins, pinPolicy: "require", domain: "example.com" },
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_NOT_PINNED" });
    expect(pins.entries()).toEqual([]);
    pins.pin("calc", "example.com", discovery.fingerprint);
    expect(
      verifySignedSchema(
        { schema, signature },
        { discovery, pins, pinPolicy: "require", domain: "example.com" },
      ),
    ).toMatchObject({ ok: true, pin: "pinned" });
  });

  it("pins are per (tool, domain)", () => {
    const pins = PinStore.inMemory();
    verifySignedSchema({ schema, signature }, { discovery, pins, domain: "a.example" });
    const other = p256();
    const sig2 = signSchemaPin(other.privateKey, schema);
    expect(
      verifySignedSchema(
        { schema, signature: sig2 },
        { discovery: discoveryFor(other), pins, domain: "b.example" },
      ),
    ).toMatchObject({ ok: true, pin: "first_use" });
  });
});

describe("key sources", () => {
  const pair = p256();
  const signature = signSchemaPin(pair.privateKey, schema);

  it("no discovery, bundle entry or trusted key → ERR_INTEGRITY_KEY_UNKNOWN", () => {
    expect(verifySignedSchema({ schema, signature }, {})).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_KEY_UNKNOWN",
    });
  });

  it("a bundle without the domain → ERR_INTEGRITY_KEY_UNKNOWN", () => {
    const b = parseTrustBundle({
      schemapin_bundle_version: "1.2",
      created_at: "x",
      documents: [],
      revocations: [],
    });
    if (!b.ok) throw new Error(b.message);
    expect(
      verifySignedSchema({ schema, signature }, { bundle: b.bundle, domain: "example.com" }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_UNKNOWN",
    });
  });

  it("trusted keys: the one that signed verifies, others do not", () => {
    expect(
      verifySignedSchema({ schema, signature }, { trustedKeys: [p256().publicKey, pair.publicKey] }),
    ).toMatchObject({ ok: true });
    expect(
      verifySignedSchema({ schema, signature }, { trustedKeys: [p256().publicKey, p256().publicKey] }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("a trusted key on the wrong curve → ERR_INTEGRITY_KEY_TYPE", () => {
    expect(verifySignedSchema({ schema, signature }, { trustedKeys: [p384().publicKey] })).toMatchObject({
      code: "ERR_INTEGRITY_KEY_TYPE",
    });
  });

  it("a discovery document for another domain → ERR_INTEGRITY_DOMAIN_MISMATCH", () => {
    const d = parseDiscoveryDocument({
      domain: "other.example",
      ...buildDiscoveryDocument({ publicKey: pair.publicKey, developerName: "x" }),
    });
    if (!d.ok) throw new Error(d.message);
    expect(
      verifySignedSchema({ schema, signature }, { discovery: d.document, domain: "example.com" }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_DOMAIN_MISMATCH",
    });
  });
});

describe("discovery documents", () => {
  const pem = (k: import("node:crypto").KeyObject, type: "spki" | "pkcs8") =>
    k.export({ format: "pem", type }).toString();

  it("a P-384 key in a discovery document → ERR_INTEGRITY_KEY_TYPE", () => {
    expect(parseDiscoveryDocument({ public_key_pem: pem(p384().publicKey, "spki") })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_KEY_TYPE",
    });
  });

  it("an Ed25519 key → ERR_INTEGRITY_KEY_TYPE", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    expect(
      parseDiscoveryDocument({ public_key_pem: pem(generateKeyPairSync("ed25519").publicKey, "spki") }),
    ).toMatchObject({ code: "ERR_INTEGRITY_KEY_TYPE" });
  });

  it("a private key in public_key_pem is refused, not silently reduced to its public half", () => {
    expect(parseDiscoveryDocument({ public_key_pem: pem(p256().privateKey, "pkcs8") })).toMatchObject({
      code: "ERR_INTEGRITY_KEY_INVALID",
    });
  });

  it("garbage inside a PEM armour → ERR_INTEGRITY_KEY_INVALID", () => {
    expect(
      parseDiscoveryDocument({
        public_key_pem: "-----BEGIN PUBLIC KEY-----\nMOCK\n-----END PUBLIC KEY-----",
      }),
    ).toMatchObject({ code: "ERR_INTEGRITY_KEY_INVALID" });
  });

  it.each([
    ["not an object", "x"],
    ["no key", { developer_name: "x" }],
    ["revoked_keys not a list", { public_key_pem: "x", revoked_keys: "all" }],
    ["oversized key", { public_key_pem: "A".repeat(10_000) }],
  ])("%s → ERR_INTEGRITY_DISCOVERY_INVALID", (_l, v) => {
    expect(parseDiscoveryDocument(v)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_DISCOVERY_INVALID" });
  });
});
