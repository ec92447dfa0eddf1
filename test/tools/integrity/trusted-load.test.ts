// Attacks on the contract directory under trust mode enforce (issue 17 #10): every one
// must make the whole load throw ContractLoadRefusedError with the reason's own code,
// return no registry, and write no pin. Mode off must load exactly as before.
import { copyFileSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fingerprintOf, type KeyPair } from "../../../src/crypto/index.js";
import {
  ContractLoadedBodySchema,
  ContractLoadRefusedError,
  ContractRefusedBodySchema,
  ContractRegistry,
  loadContract,
  loadContractsTrusted,
  type TrustConfig,
  type TrustedLoad,
  TrustStore,
} from "../../../src/tools/index.js";
import { signContractFile } from "../../../src/tools/integrity/index.js";
import { p256, tempDir } from "./helpers.js";

const whois = readFileSync(new URL("../fixtures/whois_lookup.clad.toml", import.meta.url), "utf8");
const DOMAIN = "tools.example";

function writeManifest(dir: string, name: string): string {
  const file = join(dir, `${name}.clad.toml`);
  writeFileSync(
    file,
    whois
      .replace('name = "whois_lookup"', `name = "${name}"`)
      .replace('template = "whois {target}"', 'template = "whois -H {target}"'),
  );
  return file;
}

function sign(file: string, key: KeyPair, domain = DOMAIN): void {
  const loaded = loadContract(file);
  if (!loaded.ok) throw new Error(loaded.message);
  signContractFile(loaded.tool.contract, file, { privateKey: key.privateKey, domain });
}

const pem = (k: KeyPair) => k.publicKey.export({ format: "pem", type: "spki" }).toString();

/** A directory with two contracts signed by `key`, and a store trusting `trusted`. */
function setup(key: KeyPair, config: Partial<TrustConfig> = {}, trusted: KeyPair[] = [key]) {
  const dir = tempDir();
  const a = writeManifest(dir, "alpha");
  const b = writeManifest(dir, "beta");
  sign(a, key);
  sign(b, key);
  const configDir = tempDir();
  const store = () =>
    TrustStore.fromConfig({ mode: "enforce", keys: trusted.map(pem), ...config }, { baseDir: configDir });
  return { dir, a, b, configDir, store };
}

/** Runs the load and returns its refusal; fails the test if a registry came back. */
function refusal(dir: string, store: TrustStore): ContractLoadRefusedError {
  let result: TrustedLoad | undefined;
  try {
    result = loadContractsTrusted(dir, store);
  } catch (err) {
    expect(result).toBeUndefined();
    if (err instanceof ContractLoadRefusedError) {
      expect(err.code).toBe("ERR_TOOL_REGISTRY_UNVERIFIED");
      for (const e of err.events) {
        const schema = e.outcome === "loaded" ? ContractLoadedBodySchema : ContractRefusedBodySchema;
        expect(schema.safeParse(e).success).toBe(true);
      }
      return err;
    }
    throw err;
  }
  throw new Error(`load was not refused; registered ${result.registry.names().join(",")}`);
}

describe("loadContractsTrusted, mode enforce", () => {
  it("loads a directory whose every contract verifies, with one journalable event per contract", () => {
    const key = p256();
    const { dir, store } = setup(key, { pins: "pins.json" });
    const { registry, events } = loadContractsTrusted(dir, store());
    expect(registry.names()).toEqual(["alpha", "beta"]);
    expect(events.map((e) => [e.outcome, e.tool])).toEqual([
      ["loaded", "alpha"],
      ["loaded", "beta"],
    ]);
    for (const e of events) {
      expect(ContractLoadedBodySchema.parse(e)).toMatchObject({
        verified: true,
        trust_mode: "enforce",
        key_fingerprint: fingerprintOf(key.publicKey),
        domain: DOMAIN,
        pin: "first_use",
      });
    }
    expect(events[0]).toMatchObject({ file: "alpha.clad.toml" });
    // The first-use pins reached the file only after the whole load succeeded.
    expect(store().summary().pins.entries).toBe(2);
  });

  it("a tampered signed contract (one byte of an argument pattern changed) is refused", () => {
    const key = p256();
    const { dir, a, store } = setup(key, { pins: "pins.json" });
    // One byte loosens the argument's pattern: "+" becomes "*", so an empty target passes.
    const original = readFileSync(a, "utf8");
    const tampered = original.replace('pattern = "^[a-z0-9.-]+$"', 'pattern = "^[a-z0-9.-]*$"');
    expect(tampered).not.toBe(original);
    writeFileSync(a, tampered);
    const err = refusal(dir, store());
    expect(err.refused).toMatchObject([{ file: "alpha.clad.toml", code: "ERR_INTEGRITY_SIGNATURE_INVALID" }]);
    expect(err.refused[0]?.message).toContain("changed since it was signed");
    // beta verified, but a refused load pins nothing.
    expect(store().summary().pins.entries).toBe(0);
  });

  it("an unsigned contract dropped into the directory is refused", () => {
    const { dir, store } = setup(p256());
    writeManifest(dir, "dropped");
    expect(refusal(dir, store()).refused).toMatchObject([
      { file: "dropped.clad.toml", tool: "dropped", code: "ERR_INTEGRITY_UNSIGNED" },
    ]);
    // Events name files, not the deployment's directory.
    expect(JSON.stringify(refusal(dir, store()).events)).not.toContain(dir);
  });

  it("a contract signed by a key that is not in the trust store is refused", () => {
    const trusted = p256();
    const { dir, store } = setup(trusted);
    sign(writeManifest(dir, "gamma"), p256());
    const err = refusal(dir, store());
    expect(err.refused).toMatchObject([{ tool: "gamma", code: "ERR_INTEGRITY_SIGNATURE_INVALID" }]);
    expect(err.refused[0]?.message).toContain("claims key");
  });

  it("a contract signed by a revoked key is refused (fingerprint or revocation document)", () => {
    const key = p256();
    const fp = fingerprintOf(key.publicKey);
    const byFingerprint = setup(key, { revocations: [fp] });
    expect(refusal(byFingerprint.dir, byFingerprint.store()).refused.map((r) => r.code)).toEqual([
      "ERR_INTEGRITY_KEY_REVOKED",
      "ERR_INTEGRITY_KEY_REVOKED",
    ]);
    const byDocument = setup(key, { revocations: ["revoked.json"] });
    writeFileSync(
      join(byDocument.configDir, "revoked.json"),
      JSON.stringify({
        schemapin_version: "1.2",
        domain: DOMAIN,
        updated_at: "2026-05-15T00:00:00Z",
        revoked_keys: [{ fingerprint: fp, revoked_at: "2026-05-15T00:00:00Z", reason: "key_compromise" }],
      }),
    );
    expect(refusal(byDocument.dir, byDocument.store()).refused[0]?.code).toBe("ERR_INTEGRITY_KEY_REVOKED");
  });

  it("a contract re-keyed against its TOFU pin is refused, even by a key the store trusts", () => {
    const first = p256();
    const second = p256();
    const { dir, a, store } = setup(first, { pins: "pins.json" }, [first, second]);
    loadContractsTrusted(dir, store());
    sign(a, second);
    const err = refusal(dir, store());
    expect(err.refused).toMatchObject([{ tool: "alpha", code: "ERR_INTEGRITY_KEY_PIN_MISMATCH" }]);
    const pins = store().pins?.entries() ?? [];
    expect(pins.find((p) => p.toolId === "alpha")?.fingerprint).toBe(fingerprintOf(first.publicKey));
  });

  it("a re-keyed contract is refused against a pin kept in SchemaPin's own pin store format", () => {
    const first = p256();
    const second = p256();
    const { dir, a, configDir, store } = setup(first, { pins: "pins.json" }, [first, second]);
    writeFileSync(
      join(configDir, "pins.json"),
      JSON.stringify({
        [`alpha@${DOMAIN}`]: fingerprintOf(first.publicKey),
        [`beta@${DOMAIN}`]: fingerprintOf(first.publicKey),
      }),
      { mode: 0o644 },
    );
    expect(loadContractsTrusted(dir, store()).events.map((e) => e.outcome === "loaded" && e.pin)).toEqual([
      "pinned",
      "pinned",
    ]);
    sign(a, second);
    expect(refusal(dir, store()).refused[0]?.code).toBe("ERR_INTEGRITY_KEY_PIN_MISMATCH");
  });

  it("a key not pinned yet is refused under pin_policy require", () => {
    const { dir, store } = setup(p256(), { pins: "pins.json", pin_policy: "require" });
    expect(refusal(dir, store()).refused[0]?.code).toBe("ERR_INTEGRITY_KEY_NOT_PINNED");
  });

  it("a signature file swapped between two contracts is refused", () => {
    const { dir, a, b, store } = setup(p256());
    copyFileSync(`${b}.sig`, `${a}.sig`);
    expect(refusal(dir, store()).refused).toMatchObject([
      { tool: "alpha", code: "ERR_INTEGRITY_SIGNATURE_MISMATCH" },
    ]);
    // Renaming the swapped file's tool_name does not help: the signature covers beta.
    const sig = JSON.parse(readFileSync(`${b}.sig`, "utf8"));
    writeFileSync(`${a}.sig`, JSON.stringify({ ...sig, tool_name: "alpha" }));
    expect(refusal(dir, store()).refused[0]?.code).toBe("ERR_INTEGRITY_SIGNATURE_INVALID");
  });

  it("a symlinked contract file pointing outside the directory is refused, even if correctly signed", () => {
    const key = p256();
    const { dir, store } = setup(key);
    const outside = tempDir();
    const target = writeManifest(outside, "gamma");
    sign(target, key);
    symlinkSync(target, join(dir, "gamma.clad.toml"));
    copyFileSync(`${target}.sig`, join(dir, "gamma.clad.toml.sig"));
    expect(refusal(dir, store()).refused).toMatchObject([
      { file: "gamma.clad.toml", code: "ERR_TOOL_REGISTRY_IO" },
    ]);
  });

  it("a symlinked signature file is refused", () => {
    const key = p256();
    const { dir, a, store } = setup(key);
    const outside = join(tempDir(), "alpha.sig");
    copyFileSync(`${a}.sig`, outside);
    rmSync(`${a}.sig`);
    symlinkSync(outside, `${a}.sig`);
    expect(refusal(dir, store()).refused[0]?.code).toBe("ERR_INTEGRITY_SIGNATURE_FILE_INVALID");
  });

  it("a signature naming another domain than trust.domain is refused", () => {
    const { dir, store } = setup(p256(), { domain: "other.example" });
    expect(refusal(dir, store()).refused[0]?.code).toBe("ERR_INTEGRITY_DOMAIN_MISMATCH");
  });

  it("a duplicate tool name or a manifest that does not parse refuses the whole load", () => {
    const key = p256();
    const dup = setup(key);
    const copy = join(dup.dir, "alpha2.clad.toml");
    copyFileSync(dup.a, copy);
    sign(copy, key);
    expect(refusal(dup.dir, dup.store()).refused.map((r) => r.code)).toEqual([
      "ERR_TOOL_REGISTRY_DUPLICATE",
      "ERR_TOOL_REGISTRY_DUPLICATE",
    ]);
    const broken = setup(key);
    writeFileSync(join(broken.dir, "broken.clad.toml"), "[tool\nname=");
    expect(refusal(broken.dir, broken.store()).refused[0]?.code).toBe("ERR_TOOL_MANIFEST_SYNTAX");
  });
});

describe("loadContractsTrusted, mode off", () => {
  it("loads as ContractRegistry.load does: unsigned and tampered contracts register, unverified", () => {
    const { dir, a } = setup(p256());
    writeManifest(dir, "unsigned");
    writeFileSync(a, readFileSync(a, "utf8").replace("whois -H {target}", "whois -h {target}"));
    const { registry, events } = loadContractsTrusted(dir, TrustStore.fromConfig(undefined));
    expect(registry.names()).toEqual(ContractRegistry.load(dir).names());
    expect(registry.names()).toEqual(["alpha", "beta", "unsigned"]);
    expect(events).toHaveLength(3);
    for (const e of events) {
      expect(ContractLoadedBodySchema.parse(e)).toMatchObject({
        trust_mode: "off",
        verified: false,
        key_fingerprint: null,
      });
    }
  });

  it("reports what it did not register as refused events instead of throwing", () => {
    const dir = tempDir();
    writeManifest(dir, "ok");
    writeFileSync(join(dir, "broken.clad.toml"), "[tool\nname=");
    const { registry, events } = loadContractsTrusted(dir, TrustStore.off());
    expect(registry.names()).toEqual(["ok"]);
    expect(events.map((e) => e.outcome)).toEqual(["loaded", "refused"]);
    expect(ContractRefusedBodySchema.parse(events[1])).toMatchObject({ file: "broken.clad.toml" });
  });
});
