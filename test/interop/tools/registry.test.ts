import { copyFileSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fingerprintOf, generateKeyPair } from "../../../src/crypto/index.js";
import { ContractRegistry, loadContract, loadProjectTypes } from "../../../src/tools/index.js";
import {
  buildRevocationDocument,
  PinStore,
  parseRevocationDocument,
  signContractFile,
} from "../../../src/tools/integrity/index.js";
import { FIXTURES } from "../../tools/helpers.js";
import { EXAMPLES } from "./examples.js";

const NAMES = ["curl_fetch", "dig_lookup", "nikto_scan", "nmap_scan", "whois_lookup"];

function exampleDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-registry-"));
  for (const n of NAMES) copyFileSync(join(EXAMPLES, `${n}.clad.toml`), join(dir, `${n}.clad.toml`));
  copyFileSync(join(FIXTURES, "toolclad.toml"), join(dir, "toolclad.toml"));
  return dir;
}

function sign(dir: string, name: string, key = generateKeyPair("p256")) {
  const file = join(dir, `${name}.clad.toml`);
  const r = loadContract(file, { types: loadProjectTypes(join(dir, "toolclad.toml")) });
  if (!r.ok) throw new Error(r.message);
  signContractFile(r.tool.contract, file, { privateKey: key.privateKey, domain: "tools.example.com" });
  return key;
}

describe("ContractRegistry", () => {
  it("loads a directory with its project types", () => {
    const reg = ContractRegistry.load(exampleDir());
    expect(reg.names()).toEqual(NAMES);
    expect(reg.rejected).toEqual([]);
    expect(reg.get("nmap_scan")?.contract.tool.binary).toBe("nmap");
    expect(reg.has("nope")).toBe(false);
    expect(reg.modelTools().map((t) => t.name)).toEqual(NAMES);
  });

  it("reports a broken manifest and keeps the rest", () => {
    const dir = exampleDir();
    writeFileSync(join(dir, "broken.clad.toml"), "[tool\n");
    const reg = ContractRegistry.load(dir);
    expect(reg.names()).toEqual(NAMES);
    expect(reg.rejected).toMatchObject([
      { file: join(dir, "broken.clad.toml"), code: "ERR_TOOL_MANIFEST_SYNTAX" },
    ]);
  });

  it("registers neither of two manifests that claim the same tool name", () => {
    const dir = exampleDir();
    copyFileSync(join(dir, "dig_lookup.clad.toml"), join(dir, "zz_dig_copy.clad.toml"));
    const reg = ContractRegistry.load(dir);
    expect(reg.has("dig_lookup")).toBe(false);
    expect(reg.rejected.map((r) => r.code)).toEqual([
      "ERR_TOOL_REGISTRY_DUPLICATE",
      "ERR_TOOL_REGISTRY_DUPLICATE",
    ]);
  });

  it("skips a symlinked manifest", () => {
    const dir = exampleDir();
    symlinkSync(join(EXAMPLES, "dig_lookup.clad.toml"), join(dir, "link.clad.toml"));
    const reg = ContractRegistry.load(dir);
    expect(reg.rejected).toMatchObject([{ file: join(dir, "link.clad.toml"), code: "ERR_TOOL_REGISTRY_IO" }]);
  });

  it("throws ERR_TOOL_REGISTRY_IO for a missing directory", () => {
    expect(() => ContractRegistry.load(join(tmpdir(), "warden-no-such-dir-x"))).toThrow(/cannot read/);
  });
});

describe("ContractRegistry with requireSignatures", () => {
  it("registers only contracts whose signatures verify against a trusted key", () => {
    const dir = exampleDir();
    const key = generateKeyPair("p256");
    sign(dir, "dig_lookup", key);
    sign(dir, "whois_lookup", key);
    const reg = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [key.publicKey] },
    });
    expect(reg.names()).toEqual(["dig_lookup", "whois_lookup"]);
    const unsigned = reg.rejected.map((r) => r.code);
    expect(unsigned).toEqual(["ERR_INTEGRITY_UNSIGNED", "ERR_INTEGRITY_UNSIGNED", "ERR_INTEGRITY_UNSIGNED"]);
  });

  it("rejects a contract changed after signing (tampered)", () => {
    const dir = exampleDir();
    const key = sign(dir, "dig_lookup");
    const file = join(dir, "dig_lookup.clad.toml");
    writeFileSync(file, readFileSync(file, "utf8").replace('"ANY"]', '"ANY", "AXFR"]'));
    const reg = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [key.publicKey] },
    });
    expect(reg.has("dig_lookup")).toBe(false);
    expect(reg.rejected.find((r) => r.file === file)?.code).toBe("ERR_INTEGRITY_SIGNATURE_INVALID");
  });

  it("rejects a contract signed by an untrusted key, an unpinned key under require, and a revoked key", () => {
    const dir = exampleDir();
    const trusted = generateKeyPair("p256");
    sign(dir, "dig_lookup", generateKeyPair("p256"));
    const reg = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [trusted.publicKey] },
    });
    expect(reg.has("dig_lookup")).toBe(false);
    expect(reg.rejected.find((r) => r.file.endsWith("dig_lookup.clad.toml"))?.code).toBe(
      "ERR_INTEGRITY_SIGNATURE_INVALID",
    );

    sign(dir, "dig_lookup", trusted);
    const pins = PinStore.inMemory();
    const strict = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [trusted.publicKey], pins, pinPolicy: "require" },
    });
    expect(strict.has("dig_lookup")).toBe(false);
    expect(strict.rejected.find((r) => r.file.endsWith("dig_lookup.clad.toml"))?.code).toBe(
      "ERR_INTEGRITY_KEY_NOT_PINNED",
    );

    const revoked = parseRevocationDocument(
      buildRevocationDocument("tools.example.com", [
        { fingerprint: fingerprintOf(trusted.publicKey), reason: "key_compromise" },
      ]),
    );
    if (!revoked.ok) throw new Error(revoked.message);
    const withRevocation = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [trusted.publicKey], revocations: [revoked.document] },
    });
    expect(withRevocation.has("dig_lookup")).toBe(false);
    expect(withRevocation.rejected.find((r) => r.file.endsWith("dig_lookup.clad.toml"))?.code).toBe(
      "ERR_INTEGRITY_KEY_REVOKED",
    );
    const accepted = ContractRegistry.load(dir, {
      requireSignatures: true,
      integrity: { trustedKeys: [trusted.publicKey] },
    });
    expect(accepted.has("dig_lookup")).toBe(true);
  });

  it("fails closed with no trust configuration at all", () => {
    const dir = exampleDir();
    sign(dir, "dig_lookup");
    const reg = ContractRegistry.load(dir, { requireSignatures: true });
    expect(reg.names()).toEqual([]);
    expect(reg.rejected).toHaveLength(5);
  });
});
