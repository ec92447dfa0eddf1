// The contract registry with requireSignatures: unsigned, tampered, unpinned-key and
// revoked-key contracts are not registered, and each is reported with its code.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ContractRegistry, loadContract } from "../../../src/tools/index.js";
import {
  buildDiscoveryDocument,
  buildRevocationDocument,
  PinStore,
  parseRevocationDocument,
  parseTrustBundle,
  signContractFile,
} from "../../../src/tools/integrity/index.js";
import { FIXTURES } from "../helpers.js";
import { discoveryFor, p256, tempDir } from "./helpers.js";

const whois = readFileSync(join(FIXTURES, "whois_lookup.clad.toml"), "utf8");

function writeManifest(dir: string, name: string): string {
  const file = join(dir, `${name}.clad.toml`);
  writeFileSync(file, whois.replace('name = "whois_lookup"', `name = "${name}"`));
  return file;
}

function sign(file: string, key: ReturnType<typeof p256>, domain: string): void {
  const loaded = loadContract(file);
  if (!loaded.ok) throw new Error(loaded.message);
  signContractFile(loaded.tool.contract, file, { privateKey: key.privateKey, domain });
}

describe("ContractRegistry with requireSignatures", () => {
  it("registers only verified contracts and reports why the others were refused", () => {
    const dir = tempDir();
    const current = p256();
    const old = p256();
    const fpCurrent = discoveryFor(current).fingerprint;
    const fpOld = discoveryFor(old).fingerprint;

    sign(writeManifest(dir, "good"), current, "a.example");
    writeManifest(dir, "unsigned");
    const tampered = writeManifest(dir, "tampered");
    sign(tampered, current, "a.example");
    writeFileSync(
      tampered,
      readFileSync(tampered, "utf8").replace('risk_tier = "low"', 'risk_tier = "high"'),
    );
    sign(writeManifest(dir, "revoked"), old, "b.example");
    sign(writeManifest(dir, "unpinned"), current, "a.example");

    const bundle = parseTrustBundle({
      schemapin_bundle_version: "1.2",
      created_at: "2026-01-01T00:00:00Z",
      documents: [
        {
          domain: "a.example",
          ...buildDiscoveryDocument({ publicKey: current.publicKey, developerName: "A" }),
        },
        { domain: "b.example", ...buildDiscoveryDocument({ publicKey: old.publicKey, developerName: "B" }) },
      ],
      revocations: [],
    });
    const revocation = parseRevocationDocument(
      buildRevocationDocument("b.example", [{ fingerprint: fpOld, reason: "key_compromise" }]),
    );
    if (!bundle.ok || !revocation.ok) throw new Error("fixture");
    const pins = PinStore.inMemory();
    pins.pin("good", "a.example", fpCurrent);
    pins.pin("tampered", "a.example", fpCurrent);
    pins.pin("revoked", "b.example", fpOld);

    const registry = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { bundle: bundle.bundle, revocations: [revocation.document], pins, pinPolicy: "require" },
    });
    expect(registry.names()).toEqual(["good"]);
    const reasons = Object.fromEntries(
      registry.rejected.map((r) => [r.file.slice(dir.length + 1).replace(".clad.toml", ""), r.code]),
    );
    expect(reasons).toEqual({
      revoked: "ERR_INTEGRITY_KEY_REVOKED",
      tampered: "ERR_INTEGRITY_SIGNATURE_INVALID",
      unpinned: "ERR_INTEGRITY_KEY_NOT_PINNED",
      unsigned: "ERR_INTEGRITY_UNSIGNED",
    });
    expect(pins.entries()).toHaveLength(3);
  });

  it("without any trust input every contract is refused (fail closed)", () => {
    const dir = tempDir();
    sign(writeManifest(dir, "good"), p256(), "a.example");
    const registry = ContractRegistry.load(dir, { requireSignatures: true });
    expect(registry.names()).toEqual([]);
    expect(registry.rejected.map((r) => r.code)).toEqual(["ERR_INTEGRITY_KEY_UNKNOWN"]);
  });
});
