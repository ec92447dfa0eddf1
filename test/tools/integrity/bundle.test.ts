// Signed trust bundles made by Warden: round trip, tampering, expiry, unsigned bundles,
// authority pinning by kid, and lookups.
import { describe, expect, it } from "vitest";
import {
  BUNDLE_AUTHORITY_PIN_DOMAIN,
  buildDiscoveryDocument,
  PinStore,
  parseTrustBundle,
  signSchemaPin,
  signTrustBundle,
  verifySignedSchema,
  verifyTrustBundle,
} from "../../../src/tools/integrity/index.js";
import { discoveryFor, p256, p384 } from "./helpers.js";

const publisher = p256();
const authority = p256();
const schema = { name: "calc", description: "adds" };

function unsignedBundle(): Record<string, unknown> {
  return {
    schemapin_bundle_version: "1.2",
    created_at: "2026-01-01T00:00:00Z",
    documents: [
      {
        domain: "tools.example",
        ...buildDiscoveryDocument({ publicKey: publisher.publicKey, developerName: "Pub" }),
      },
    ],
    revocations: [],
  };
}

const signed = () =>
  signTrustBundle(unsignedBundle(), authority.privateKey, {
    kid: "auth-1",
    signedAt: new Date("2026-01-01T00:00:00Z"),
    expiresAt: "2030-01-01T00:00:00Z",
  });

describe("trust bundles", () => {
  it("a bundle Warden signs verifies and serves its discovery entries", () => {
    const b = signed();
    expect(b.schemapin_bundle_version).toBe("1.4");
    expect(b.signed_at).toBe("2026-01-01T00:00:00Z");
    const r = verifyTrustBundle(b, { now: new Date("2027-01-01T00:00:00Z") });
    expect(r).toMatchObject({ ok: true, kid: "auth-1", fingerprint: discoveryFor(authority).fingerprint });
    if (!r.ok) return;
    const sig = signSchemaPin(publisher.privateKey, schema);
    expect(
      verifySignedSchema({ schema, signature: sig }, { bundle: r.bundle, domain: "tools.example" }),
    ).toMatchObject({
      ok: true,
      fingerprint: discoveryFor(publisher).fingerprint,
    });
  });

  it("survives a JSON round trip (what a file or the network does)", () => {
    expect(verifyTrustBundle(JSON.parse(JSON.stringify(signed())))).toMatchObject({ ok: true });
  });

  it("a swapped discovery key breaks the signature", () => {
    const b = signed();
    const docs = b.documents as Record<string, unknown>[];
    const evil = buildDiscoveryDocument({ publicKey: p256().publicKey, developerName: "Pub" });
    const tampered = { ...b, documents: [{ ...docs[0], public_key_pem: evil.public_key_pem }] };
    expect(verifyTrustBundle(tampered)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
  });

  it("an added unknown field is covered by the signature too", () => {
    expect(verifyTrustBundle({ ...signed(), note: "x" })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("stripping a revocation breaks the signature", () => {
    const b = signTrustBundle(
      {
        ...unsignedBundle(),
        revocations: [
          { schemapin_version: "1.2", domain: "tools.example", updated_at: "t", revoked_keys: [] },
        ],
      },
      authority.privateKey,
      { kid: "auth-1", signedAt: "2026-01-01T00:00:00Z" },
    );
    expect(verifyTrustBundle(b)).toMatchObject({ ok: true });
    expect(verifyTrustBundle({ ...b, revocations: [] })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("an authority swap (re-signed by another key under the same kid) is caught by the kid pin", () => {
    const pins = PinStore.inMemory();
    expect(verifyTrustBundle(signed(), { pins })).toMatchObject({ ok: true });
    const forged = signTrustBundle(unsignedBundle(), p256().privateKey, {
      kid: "auth-1",
      signedAt: "2026-02-01T00:00:00Z",
    });
    expect(verifyTrustBundle(forged, { pins })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_KEY_PIN_MISMATCH",
    });
    expect(pins.get("auth-1", BUNDLE_AUTHORITY_PIN_DOMAIN)?.fingerprint).toBe(
      discoveryFor(authority).fingerprint,
    );
  });

  it("an authority outside trustedAuthorities → ERR_INTEGRITY_KEY_UNKNOWN", () => {
    expect(
      verifyTrustBundle(signed(), { trustedAuthorities: [discoveryFor(publisher).fingerprint] }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_UNKNOWN",
    });
    expect(
      verifyTrustBundle(signed(), { trustedAuthorities: [discoveryFor(authority).fingerprint] }),
    ).toMatchObject({
      ok: true,
    });
  });

  it("expired, or with an unparseable expiry → ERR_INTEGRITY_BUNDLE_EXPIRED", () => {
    expect(verifyTrustBundle(signed(), { now: new Date("2031-01-01T00:00:00Z") })).toMatchObject({
      code: "ERR_INTEGRITY_BUNDLE_EXPIRED",
    });
    const b = signTrustBundle(unsignedBundle(), authority.privateKey, {
      kid: "k",
      signedAt: "2026-01-01T00:00:00Z",
      expiresAt: "next tuesday",
    });
    expect(verifyTrustBundle(b)).toMatchObject({ code: "ERR_INTEGRITY_BUNDLE_EXPIRED" });
  });

  it("unsigned bundles → ERR_INTEGRITY_BUNDLE_UNSIGNED (but parse as local trust input)", () => {
    expect(verifyTrustBundle(unsignedBundle())).toMatchObject({ code: "ERR_INTEGRITY_BUNDLE_UNSIGNED" });
    const { signature: _s, ...noSig } = signed();
    expect(verifyTrustBundle(noSig)).toMatchObject({ code: "ERR_INTEGRITY_BUNDLE_UNSIGNED" });
    expect(verifyTrustBundle({ ...signed(), signature: "" })).toMatchObject({
      code: "ERR_INTEGRITY_BUNDLE_UNSIGNED",
    });
    expect(parseTrustBundle(unsignedBundle())).toMatchObject({ ok: true });
  });

  it("single-hash only: a double-hash signature over the same bytes is rejected", () => {
    const b = signed();
    const doubleSig = signSchemaPin(authority.privateKey, { ...b, signature: "" }, "double");
    expect(verifyTrustBundle({ ...b, signature: doubleSig })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("a P-384 authority key → ERR_INTEGRITY_KEY_TYPE; signing with one is refused", () => {
    const b = signed();
    const pem = p384().publicKey.export({ format: "pem", type: "spki" }).toString();
    expect(
      verifyTrustBundle({ ...b, bundle_authority: { kid: "auth-1", public_key_pem: pem } }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_TYPE",
    });
    expect(() => signTrustBundle(unsignedBundle(), p384().privateKey, { kid: "k", signedAt: "x" })).toThrow(
      expect.objectContaining({ code: "ERR_INTEGRITY_KEY_TYPE" }),
    );
  });

  it.each([
    ["not an object", 1],
    ["documents missing", { schemapin_bundle_version: "1.4", created_at: "x" }],
    ["entry without domain", { schemapin_bundle_version: "1.4", created_at: "x", documents: [{}] }],
    [
      "two entries for one domain",
      { schemapin_bundle_version: "1.4", created_at: "x", documents: [{ domain: "a" }, { domain: "a" }] },
    ],
    [
      "bad revocation",
      { schemapin_bundle_version: "1.4", created_at: "x", documents: [], revocations: [{}] },
    ],
  ])("malformed bundle (%s) → ERR_INTEGRITY_BUNDLE_INVALID", (_l, v) => {
    expect(parseTrustBundle(v)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_BUNDLE_INVALID" });
    expect(verifyTrustBundle(v)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_BUNDLE_INVALID" });
  });
});
