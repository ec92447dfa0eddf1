import { createHash, generateKeyPairSync } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { calculateJwkThumbprint } from "jose";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import {
  fingerprintOf,
  generateKeyPair,
  Keyring,
  keyIdOf,
  loadPrivateKeyFile,
  loadPublicKeyFile,
  parsePrivateKey,
  parsePublicKey,
  publicKeyInfo,
  saveKeyPair,
} from "../../src/crypto/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "warden-keys-"));

function expectCode(fn: () => unknown, code: string): void {
  try {
    fn();
  } catch (err) {
    expect(hasErrorCode(err, code as never), String(err)).toBe(true);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe("key generation and ids", () => {
  for (const type of ["ed25519", "p256"] as const) {
    it(`${type}: key id is the RFC 7638 thumbprint (checked with jose)`, async () => {
      const pair = generateKeyPair(type);
      const jwk = pair.publicKey.export({ format: "jwk" });
      expect(pair.keyId).toBe(await calculateJwkThumbprint(jwk as never, "sha256"));
      expect(keyIdOf(pair.privateKey)).toBe(pair.keyId);
    });

    it(`${type}: fingerprint is sha256 of the SPKI DER`, () => {
      const pair = generateKeyPair(type);
      const der = pair.publicKey.export({ format: "der", type: "spki" });
      expect(fingerprintOf(pair.publicKey)).toBe(`sha256:${createHash("sha256").update(der).digest("hex")}`);
      expect(fingerprintOf(pair.publicKey)).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    it(`${type}: save and load round-trips via PEM and JWK`, () => {
      const dir = tmp();
      const pair = generateKeyPair(type);
      const files = saveKeyPair(pair, dir);
      expect(statSync(files.privatePem).mode & 0o777).toBe(0o600);
      expect(statSync(files.privateJwk).mode & 0o777).toBe(0o600);
      expect(loadPrivateKeyFile(files.privatePem).keyId).toBe(pair.keyId);
      expect(loadPrivateKeyFile(files.privateJwk).keyId).toBe(pair.keyId);
      expect(keyIdOf(loadPublicKeyFile(files.publicPem))).toBe(pair.keyId);
      expect(keyIdOf(loadPublicKeyFile(files.publicJwk))).toBe(pair.keyId);
      const pubJwk = JSON.parse(readFileSync(files.publicJwk, "utf8"));
      expect(pubJwk.d).toBeUndefined();
      expect(pubJwk.kid).toBe(pair.keyId);
    });
  }

  it("rejects a group-readable private key file", () => {
    const dir = tmp();
    const files = saveKeyPair(generateKeyPair("ed25519"), dir);
    chmodSync(files.privatePem, 0o640);
    expectCode(() => loadPrivateKeyFile(files.privatePem), "ERR_CRYPTO_KEY_FILE_PERMISSIONS");
  });

  it("rejects a world-readable private JWK file", () => {
    const dir = tmp();
    const files = saveKeyPair(generateKeyPair("p256"), dir);
    chmodSync(files.privateJwk, 0o604);
    expectCode(() => loadPrivateKeyFile(files.privateJwk), "ERR_CRYPTO_KEY_FILE_PERMISSIONS");
  });

  it("refuses to overwrite an existing key file", () => {
    const dir = tmp();
    saveKeyPair(generateKeyPair("ed25519"), dir);
    expectCode(() => saveKeyPair(generateKeyPair("ed25519"), dir), "ERR_CRYPTO_KEY_FILE_EXISTS");
  });

  it("refuses a public key where a private key is required", () => {
    const dir = tmp();
    const files = saveKeyPair(generateKeyPair("ed25519"), dir);
    expectCode(() => loadPrivateKeyFile(files.publicPem), "ERR_CRYPTO_KEY_NOT_PRIVATE");
    expectCode(() => loadPrivateKeyFile(files.publicJwk), "ERR_CRYPTO_KEY_NOT_PRIVATE");
  });

  it("rejects unsupported key types (RSA, P-384, X25519)", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    expectCode(
      () => parsePublicKey(rsa.publicKey.export({ format: "pem", type: "spki" }).toString()),
      "ERR_CRYPTO_KEY_TYPE",
    );
    const p384 = generateKeyPairSync("ec", { namedCurve: "secp384r1" });
    expectCode(
      () => parsePrivateKey(p384.privateKey.export({ format: "pem", type: "pkcs8" }).toString()),
      "ERR_CRYPTO_KEY_TYPE",
    );
    const x = generateKeyPairSync("x25519");
    expectCode(() => parsePublicKey(x.publicKey.export({ format: "jwk" })), "ERR_CRYPTO_KEY_TYPE");
  });

  it("rejects garbage key material", () => {
    expectCode(
      () => parsePublicKey("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"),
      "ERR_CRYPTO_KEY_INVALID",
    );
    expectCode(() => parsePrivateKey("not a key"), "ERR_CRYPTO_KEY_INVALID");
    expectCode(() => parsePublicKey('{"kty":"OKP","crv":"Ed25519","x":"!!"}'), "ERR_CRYPTO_KEY_INVALID");
  });

  it("rejects a private key file given as a public JWK text written with a private mode", () => {
    const dir = tmp();
    const p = join(dir, "pub-as-priv.json");
    writeFileSync(p, JSON.stringify(generateKeyPair("ed25519").publicKey.export({ format: "jwk" })), {
      mode: 0o600,
    });
    expectCode(() => loadPrivateKeyFile(p), "ERR_CRYPTO_KEY_NOT_PRIVATE");
  });

  it("publicKeyInfo never contains private material", () => {
    const pair = generateKeyPair("p256");
    const info = publicKeyInfo(pair.privateKey);
    expect(JSON.stringify(info)).not.toContain(String(pair.privateKey.export({ format: "jwk" }).d));
    expect(info.publicKeyPem).toContain("BEGIN PUBLIC KEY");
  });

  it("keyring resolves keys by id", () => {
    const a = generateKeyPair("ed25519");
    const b = generateKeyPair("p256");
    const ring = new Keyring([a.publicKey, b.privateKey]);
    expect(ring.size).toBe(2);
    expect(ring.get(a.keyId)).toBeDefined();
    expect(ring.get(b.keyId)?.type).toBe("public");
    expect(ring.has("nope")).toBe(false);
  });
});
