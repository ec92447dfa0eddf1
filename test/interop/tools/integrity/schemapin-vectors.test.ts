// Interop: the SchemaPin project's own fixtures (schemapin/ in WARDEN_VECTORS) verify
// exactly as its README describes — JS and Python double-hash, Go single-hash, and the
// signed trust bundle single-hash with the key in bundle_authority.
import { describe, expect, it } from "vitest";
import {
  PinStore,
  parseDiscoveryDocument,
  schemapinCanonical,
  verifySignedSchema,
  verifyTrustBundle,
} from "../../../../src/tools/integrity/index.js";
import { discoveryOf } from "../../../tools/integrity/helpers.js";
import {
  type Fixture,
  signedBundleFixture,
  signedSchemaFixture,
  wellKnownFixture,
} from "./schemapin-fixtures.js";

const FINGERPRINTS: Record<Fixture, string> = {
  js: "sha256:1e5cb07433ed740a40122dfd3183c970ad07ca5eefc2383ef722c39cf950d0ed",
  python: "sha256:23126becd9f4f73aff0088cfd07512acf4b61ee114ef9717259c8db54b7b60f7",
  go: "sha256:2310142b043d9f17043bea8561d5dc43583a0c077574dfe84025a4682bb2385c",
};

const CANONICAL_DEMO =
  '{"description":"Calculates the sum of two numbers","name":"calculate_sum","parameters":{"properties":{"a":{"description":"First number","type":"number"},"b":{"description":"Second number","type":"number"}},"required":["a","b"],"type":"object"}}';

describe("SchemaPin fixtures", () => {
  it.each(["js", "python", "go"] as const)(
    "%s: canonical form matches the sorted compact serialisation",
    (f) => {
      expect(schemapinCanonical(signedSchemaFixture(f).schema)).toBe(CANONICAL_DEMO);
    },
  );

  it.each(["js", "python", "go"] as const)("%s: discovery key fingerprint is sha256 of the SPKI DER", (f) => {
    expect(discoveryOf(wellKnownFixture(f)).fingerprint).toBe(FINGERPRINTS[f]);
  });

  it.each(["js", "python"] as const)("%s: verifies in double-hash mode", (f) => {
    const r = verifySignedSchema(signedSchemaFixture(f), {
      discovery: discoveryOf(wellKnownFixture(f)),
      domain: "example.com",
    });
    expect(r).toMatchObject({
      ok: true,
      fingerprint: FINGERPRINTS[f],
      hashMode: "double",
      toolId: "calculate_sum",
    });
    if (r.ok) expect(r.developerName).toBe("Example Tool Developer");
  });

  it.each(["js", "python"] as const)("%s: double-hash signature is rejected in single-hash mode", (f) => {
    const r = verifySignedSchema(signedSchemaFixture(f), {
      discovery: discoveryOf(wellKnownFixture(f)),
      hashMode: "single",
    });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
  });

  it("go: verifies only in single-hash mode", () => {
    const discovery = discoveryOf(wellKnownFixture("go"));
    const doc = signedSchemaFixture("go");
    expect(verifySignedSchema(doc, { discovery, hashMode: "single" })).toMatchObject({
      ok: true,
      fingerprint: FINGERPRINTS.go,
      hashMode: "single",
    });
    expect(verifySignedSchema(doc, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("a fixture signature does not verify under another fixture's key", () => {
    const r = verifySignedSchema(signedSchemaFixture("js"), {
      discovery: discoveryOf(wellKnownFixture("python")),
    });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
  });

  it("discovery revoked_keys are read as published (including malformed entries)", () => {
    const d = discoveryOf(wellKnownFixture("python"));
    expect(d.revokedKeys).toHaveLength(2);
    expect(d.revokedKeys[0]).toBe("sha256:abc123def456789abcdef0123456789abcdef0123456789abcdef0123456789ab");
  });

  it("go discovery without revoked_keys parses with an empty list", () => {
    const r = parseDiscoveryDocument(wellKnownFixture("go"));
    expect(r.ok && r.document.revokedKeys).toEqual([]);
  });

  it("signed bundle: verifies single-hash with the bundle_authority key, and pins the authority", () => {
    const pins = PinStore.inMemory();
    const r = verifyTrustBundle(signedBundleFixture(), { pins, now: new Date("2026-06-01T00:00:00Z") });
    expect(r).toMatchObject({ ok: true, kid: "schemapin-bundle-authority-2026" });
    if (!r.ok) return;
    expect(r.bundle.domains).toEqual(["example.com"]);
    expect(pins.get("schemapin-bundle-authority-2026", "_bundle_authority")?.fingerprint).toBe(r.fingerprint);
  });

  it("signed bundle: its example.com entry carries a placeholder key, reported when used", () => {
    const r = verifyTrustBundle(signedBundleFixture());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const v = verifySignedSchema(signedSchemaFixture("js"), { bundle: r.bundle, domain: "example.com" });
    expect(v).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_INVALID" });
  });

  it("signed bundle: any changed byte breaks the signature", () => {
    const b = signedBundleFixture();
    const tampered = { ...b, created_at: "2026-05-15T00:00:01Z" };
    expect(verifyTrustBundle(tampered)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
    const added = {
      ...b,
      documents: [...(b.documents as object[]), { domain: "evil.example", public_key_pem: "x" }],
    };
    expect(verifyTrustBundle(added)).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
  });
});
