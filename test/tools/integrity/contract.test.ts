// Signed tool contracts: the whole parsed contract is signed, so a change to any part
// fails; signature files cannot be swapped between contracts; unsigned, revoked,
// changed-key and unpinned-key contracts fail with their own codes.
import { createHash, verify as nodeVerify } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolContractSchema } from "../../../src/tools/contract-schema.js";
import { contractToCanonical } from "../../../src/tools/index.js";
import {
  buildRevocationDocument,
  contractAsSignedSchema,
  PinStore,
  parseRevocationDocument,
  readSignatureFile,
  schemapinCanonical,
  signContract,
  signContractFile,
  verifyContractIntegrity,
  verifySignedSchema,
} from "../../../src/tools/integrity/index.js";
import { discoveryFor, p256, p384, sampleContract, tempDir } from "./helpers.js";

const signer = p256();
const discovery = discoveryFor(signer);
const DOMAIN = "tools.example";

function signedManifest(contract = sampleContract()): string {
  const path = join(tempDir(), `${contract.tool.name}.clad.toml`);
  writeFileSync(path, "# manifest text is not what is signed\n");
  signContractFile(contract, path, { privateKey: signer.privateKey, domain: DOMAIN });
  return path;
}

describe("contract signatures", () => {
  it("sign writes FILE.sig beside the manifest and verify accepts it", () => {
    const path = signedManifest();
    const sig = JSON.parse(readFileSync(`${path}.sig`, "utf8"));
    expect(sig).toMatchObject({
      warden_contract_signature: 1,
      canonicalization: "schemapin-v1",
      tool_name: "whois_lookup",
      domain: DOMAIN,
      signer_fingerprint: discovery.fingerprint,
    });
    const r = verifyContractIntegrity(sampleContract(), path, { discovery });
    expect(r).toMatchObject({
      ok: true,
      fingerprint: discovery.fingerprint,
      domain: DOMAIN,
      toolId: "whois_lookup",
    });
    if (r.ok) expect(r.contractHash).toBe(sig.contract_hash);
  });

  it("the signature is a plain SchemaPin double-hash signature over the canonical contract", () => {
    const contract = sampleContract();
    const file = signContract(contract, { privateKey: signer.privateKey, domain: DOMAIN });
    const digest = createHash("sha256")
      .update(schemapinCanonical(contractToCanonical(contract)))
      .digest();
    const der = Buffer.from(file.signature, "base64");
    expect(nodeVerify("sha256", digest, { key: signer.publicKey, dsaEncoding: "der" }, der)).toBe(true);
    expect(verifySignedSchema(contractAsSignedSchema(contract, file), { discovery })).toMatchObject({
      ok: true,
    });
  });

  // Each edit touches a different part of the contract: metadata, argument rules,
  // templates, output schema, scope, and a default made explicit with another value.
  const edits: [string, (c: Record<string, unknown>) => void][] = [
    [
      "tool description",
      (c) => ((c.tool as Record<string, unknown>).description = "WHOIS lookup for a domain!"),
    ],
    ["timeout", (c) => ((c.tool as Record<string, unknown>).timeout_seconds = 31)],
    [
      "argument pattern",
      (c) =>
        (((c.args as Record<string, Record<string, unknown>>).target as Record<string, unknown>).pattern =
          "^.*$"),
    ],
    [
      "argument made optional",
      (c) =>
        (((c.args as Record<string, Record<string, unknown>>).target as Record<string, unknown>).required =
          false),
    ],
    [
      "command template",
      (c) => ((c.command as Record<string, unknown>).exec = ["whois", "-h", "evil.example", "{target}"]),
    ],
    ["output schema", (c) => ((c.output as Record<string, unknown>).schema = { type: "object" })],
    ["output envelope", (c) => ((c.output as Record<string, unknown>).envelope = false)],
    ["scope", (c) => ((c.scope as Record<string, unknown>).allowed_hosts = ["*"])],
    ["risk tier default", (c) => ((c.tool as Record<string, unknown>).risk_tier = "high")],
  ];

  it.each(edits)("changing the %s fails verification", (_label, edit) => {
    const path = signedManifest();
    const canonical = structuredClone(contractToCanonical(sampleContract()));
    edit(canonical);
    const tampered = ToolContractSchema.parse(canonical);
    const r = verifyContractIntegrity(tampered, path, { discovery });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
    if (!r.ok) expect(r.message).toContain("changed since it was signed");
  });

  it("an unsigned contract → ERR_INTEGRITY_UNSIGNED", () => {
    const path = join(tempDir(), "x.clad.toml");
    writeFileSync(path, "");
    expect(verifyContractIntegrity(sampleContract(), path, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_UNSIGNED",
    });
  });

  it("a signature file swapped in from another contract → ERR_INTEGRITY_SIGNATURE_MISMATCH", () => {
    const a = signedManifest(sampleContract({ name: "tool_a" }));
    const b = signedManifest(sampleContract({ name: "tool_b" }));
    writeFileSync(`${a}.sig`, readFileSync(`${b}.sig`));
    expect(verifyContractIntegrity(sampleContract({ name: "tool_a" }), a, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_MISMATCH",
    });
  });

  it("…and with its tool_name edited to match, the signature fails", () => {
    const a = signedManifest(sampleContract({ name: "tool_a" }));
    const b = signedManifest(sampleContract({ name: "tool_b" }));
    const swapped = JSON.parse(readFileSync(`${b}.sig`, "utf8"));
    swapped.tool_name = "tool_a";
    writeFileSync(`${a}.sig`, JSON.stringify(swapped));
    expect(verifyContractIntegrity(sampleContract({ name: "tool_a" }), a, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("a contract re-signed by an attacker's key fails under the publisher's discovery key", () => {
    const path = join(tempDir(), "t.clad.toml");
    signContractFile(sampleContract(), path, { privateKey: p256().privateKey, domain: DOMAIN });
    const r = verifyContractIntegrity(sampleContract(), path, { discovery });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_SIGNATURE_INVALID" });
    if (!r.ok) expect(r.message).toContain("claims key");
  });

  it("a signature file naming another domain than required → ERR_INTEGRITY_DOMAIN_MISMATCH", () => {
    expect(
      verifyContractIntegrity(sampleContract(), signedManifest(), { discovery, domain: "other.example" }),
    ).toMatchObject({ code: "ERR_INTEGRITY_DOMAIN_MISMATCH" });
  });

  it("a revoked signing key → ERR_INTEGRITY_KEY_REVOKED (discovery list and revocation document)", () => {
    const path = signedManifest();
    expect(
      verifyContractIntegrity(sampleContract(), path, {
        discovery: discoveryFor(signer, [discovery.fingerprint]),
      }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_REVOKED",
    });
    const rev = parseRevocationDocument(
      buildRevocationDocument(DOMAIN, [{ fingerprint: discovery.fingerprint, reason: "key_compromise" }]),
    );
    if (!rev.ok) throw new Error(rev.message);
    expect(
      verifyContractIntegrity(sampleContract(), path, { discovery, revocations: [rev.document] }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_REVOKED",
    });
  });

  it("TOFU: pins on first use, refuses a changed key, refuses an unpinned key under 'require'", () => {
    const pinsPath = join(tempDir(), "pins.json");
    const pins = PinStore.open(pinsPath);
    const path = signedManifest();
    expect(
      verifyContractIntegrity(sampleContract(), path, { discovery, pins, pinPolicy: "require" }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_KEY_NOT_PINNED",
    });
    expect(verifyContractIntegrity(sampleContract(), path, { discovery, pins })).toMatchObject({
      ok: true,
      pin: "first_use",
    });
    expect(PinStore.open(pinsPath).get("whois_lookup", DOMAIN)?.fingerprint).toBe(discovery.fingerprint);

    const rotated = p256();
    signContractFile(sampleContract(), path, { privateKey: rotated.privateKey, domain: DOMAIN });
    const r = verifyContractIntegrity(sampleContract(), path, {
      discovery: discoveryFor(rotated),
      pins: PinStore.open(pinsPath),
    });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_KEY_PIN_MISMATCH" });
  });

  it("a single-hash verifier rejects Warden's double-hash contract signature", () => {
    expect(
      verifyContractIntegrity(sampleContract(), signedManifest(), { discovery, hashMode: "single" }),
    ).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("refuses to sign with a P-384 key", () => {
    expect(() => signContract(sampleContract(), { privateKey: p384().privateKey, domain: DOMAIN })).toThrow(
      expect.objectContaining({ code: "ERR_INTEGRITY_KEY_TYPE" }),
    );
  });

  it.each([
    ["not JSON", () => "sig"],
    ["duplicate keys", () => '{"signature":"a","signature":"b"}'],
    ["an unknown field", (good: object) => JSON.stringify({ ...good, extra: 1 })],
    ["a bad fingerprint", (good: object) => JSON.stringify({ ...good, signer_fingerprint: "sha256:00" })],
  ])("a malformed signature file (%s) → ERR_INTEGRITY_SIGNATURE_FILE_INVALID", (_l, make) => {
    const path = signedManifest();
    writeFileSync(`${path}.sig`, make(JSON.parse(readFileSync(`${path}.sig`, "utf8"))));
    expect(readSignatureFile(path)).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
    });
    expect(verifyContractIntegrity(sampleContract(), path, { discovery })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
    });
  });

  it("a malformed signature inside a valid file → ERR_INTEGRITY_SIGNATURE_ENCODING", () => {
    const path = signedManifest();
    const sig = JSON.parse(readFileSync(`${path}.sig`, "utf8"));
    writeFileSync(`${path}.sig`, JSON.stringify({ ...sig, signature: "!!!" }));
    expect(verifyContractIntegrity(sampleContract(), path, { discovery })).toMatchObject({
      code: "ERR_INTEGRITY_SIGNATURE_ENCODING",
    });
  });

  it("a canonicalization other than schemapin-v1 → ERR_INTEGRITY_CANONICALIZATION_UNSUPPORTED", () => {
    const path = signedManifest();
    const sig = JSON.parse(readFileSync(`${path}.sig`, "utf8"));
    writeFileSync(`${path}.sig`, JSON.stringify({ ...sig, canonicalization: "rfc8785" }));
    expect(verifyContractIntegrity(sampleContract(), path, { discovery })).toMatchObject({
      code: "ERR_INTEGRITY_CANONICALIZATION_UNSUPPORTED",
    });
  });
});
