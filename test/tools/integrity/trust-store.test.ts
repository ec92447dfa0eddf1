// The trust store's config section: a broken trust configuration must fail at start-up
// with a code, never degrade to "nothing enforced"; and the summary `warden sidecar
// --check` prints.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IntegrityError } from "../../../src/contracts/index.js";
import { fingerprintOf } from "../../../src/crypto/index.js";
import { TrustConfigSchema, TrustStore } from "../../../src/tools/index.js";
import { p256, p384, tempDir } from "./helpers.js";

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof IntegrityError) return err.code;
    throw err;
  }
  return "no error";
}

const pemOf = (k: import("node:crypto").KeyObject) => k.export({ format: "pem", type: "spki" }).toString();

describe("TrustStore.fromConfig", () => {
  it("no trust section means mode off with nothing trusted", () => {
    expect(TrustStore.fromConfig(undefined).summary()).toEqual({
      mode: "off",
      keys: 0,
      key_fingerprints: [],
      pins: { path: null, entries: 0, policy: "tofu" },
      revocations: 0,
      domain: null,
    });
    expect(TrustConfigSchema.parse({}).mode).toBe("off");
  });

  it("reads keys inline and from files relative to the config directory, and summarises them", () => {
    const dir = tempDir();
    const a = p256();
    const b = p256();
    writeFileSync(join(dir, "b.pub.pem"), pemOf(b.publicKey));
    const revoked = fingerprintOf(p256().publicKey);
    const store = TrustStore.fromConfig(
      {
        mode: "enforce",
        keys: [pemOf(a.publicKey), "b.pub.pem", pemOf(a.publicKey)],
        pins: "pins.json",
        pin_policy: "require",
        revocations: [revoked],
        domain: "tools.example",
      },
      { baseDir: dir },
    );
    expect(store.summary()).toEqual({
      mode: "enforce",
      keys: 2,
      key_fingerprints: [fingerprintOf(a.publicKey), fingerprintOf(b.publicKey)].sort(),
      pins: { path: join(dir, "pins.json"), entries: 0, policy: "require" },
      revocations: 1,
      domain: "tools.example",
    });
  });

  it("enforce without any key is a configuration error, not an empty trust set", () => {
    expect(codeOf(() => TrustStore.fromConfig({ mode: "enforce" }))).toBe("ERR_INTEGRITY_TRUST_CONFIG");
  });

  it.each([
    ["an unknown field (a typo must not silently disable a rule)", { mode: "enforce", key: ["x"] }],
    ["an unknown mode", { mode: "audit" }],
    ["a malformed fingerprint revocation", { revocations: ["sha256:abc"] }],
    ["a missing key file", { mode: "enforce", keys: ["missing.pem"] }],
    ["a missing revocation document", { revocations: ["missing.json"] }],
  ])("refuses %s with ERR_INTEGRITY_TRUST_CONFIG", (_label, config) => {
    expect(codeOf(() => TrustStore.fromConfig(config, { baseDir: tempDir() }))).toBe(
      "ERR_INTEGRITY_TRUST_CONFIG",
    );
  });

  it("a private key given as a trust key is refused, not reduced to its public half", () => {
    const pem = p256().privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    expect(codeOf(() => TrustStore.fromConfig({ mode: "enforce", keys: [pem] }))).toBe(
      "ERR_INTEGRITY_KEY_INVALID",
    );
  });

  it("a key of another curve is refused", () => {
    expect(codeOf(() => TrustStore.fromConfig({ mode: "enforce", keys: [pemOf(p384().publicKey)] }))).toBe(
      "ERR_INTEGRITY_KEY_TYPE",
    );
  });

  it("a malformed revocation document fails closed", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "rev.json"), JSON.stringify({ revoked_keys: "all" }));
    expect(codeOf(() => TrustStore.fromConfig({ revocations: ["rev.json"] }, { baseDir: dir }))).toBe(
      "ERR_INTEGRITY_REVOCATION_INVALID",
    );
  });

  it.skipIf(process.platform === "win32")("a pin store writable by others is refused", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "pins.json"), JSON.stringify({ warden_pin_store: 1, pins: [] }));
    chmodSync(join(dir, "pins.json"), 0o666);
    expect(
      codeOf(() =>
        TrustStore.fromConfig(
          { mode: "enforce", keys: [pemOf(p256().publicKey)], pins: "pins.json" },
          { baseDir: dir },
        ),
      ),
    ).toBe("ERR_INTEGRITY_PIN_STORE");
  });

  it("any config value either builds a store or fails with an integrity code (property)", () => {
    const dir = tempDir();
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          const store = TrustStore.fromConfig(value, { baseDir: dir });
          // Whatever was accepted, enforce always has keys to check against.
          if (store.mode === "enforce") expect(store.keys.length).toBeGreaterThan(0);
        } catch (err) {
          expect(err).toBeInstanceOf(IntegrityError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
