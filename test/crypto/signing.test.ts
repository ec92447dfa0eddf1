import { createVerify } from "node:crypto";
import fc from "fast-check";
import { CompactSign, compactVerify, importSPKI } from "jose";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import {
  ecdsaDerToRaw,
  ecdsaRawToDer,
  generateKeyPair,
  sign,
  signCanonical,
  verify,
  verifyCanonical,
} from "../../src/crypto/index.js";

const msg = Buffer.from("the model proposes, warden disposes");

describe("Ed25519", () => {
  const pair = generateKeyPair("ed25519");

  it("signs and verifies", () => {
    const sig = sign(pair.privateKey, msg);
    expect(sig.length).toBe(64);
    expect(verify(pair.publicKey, msg, sig)).toBe(true);
  });

  it("rejects a tampered message, a tampered signature, a wrong key, and a truncated signature", () => {
    const sig = sign(pair.privateKey, msg);
    const other = generateKeyPair("ed25519");
    const flipped = Buffer.from(sig);
    flipped[10]! ^= 1;
    expect(verify(pair.publicKey, Buffer.from("the model proposes, warden disposes!"), sig)).toBe(false);
    expect(verify(pair.publicKey, msg, flipped)).toBe(false);
    expect(verify(other.publicKey, msg, sig)).toBe(false);
    expect(verify(pair.publicKey, msg, sig.subarray(0, 63))).toBe(false);
    expect(verify(pair.publicKey, msg, Buffer.alloc(0))).toBe(false);
  });

  it("interoperates with jose (EdDSA JWS)", async () => {
    const jws = await new CompactSign(msg).setProtectedHeader({ alg: "EdDSA" }).sign(pair.privateKey);
    const res = await compactVerify(jws, pair.publicKey);
    expect(Buffer.from(res.payload).toString()).toBe(msg.toString());
  });

  it("signs canonical JSON independently of key order", () => {
    const sig = signCanonical(pair.privateKey, { b: 1, a: [1, "x"] });
    expect(verifyCanonical(pair.publicKey, { a: [1, "x"], b: 1 }, sig)).toBe(true);
    expect(verifyCanonical(pair.publicKey, { a: [1, "x"], b: 2 }, sig)).toBe(false);
    expect(verifyCanonical(pair.publicKey, { a: [1, "x"], b: 1 }, `${sig}=`)).toBe(false);
  });

  it("refuses to sign with a public key", () => {
    try {
      sign(pair.publicKey, msg);
      throw new Error("signed");
    } catch (err) {
      expect(hasErrorCode(err, "ERR_CRYPTO_KEY_NOT_PRIVATE")).toBe(true);
    }
  });
});

describe("ES256", () => {
  const pair = generateKeyPair("p256");

  it("signs in DER by default, verifiable by a plain X.509-style verifier", () => {
    const sig = sign(pair.privateKey, msg);
    expect(sig[0]).toBe(0x30);
    const v = createVerify("sha256").update(msg);
    expect(v.verify(pair.publicKey, sig)).toBe(true);
    expect(verify(pair.publicKey, msg, sig)).toBe(true);
  });

  it("signs raw (IEEE P1363) r||s, interoperable with jose ES256", async () => {
    const sig = sign(pair.privateKey, msg, { ecdsaEncoding: "raw" });
    expect(sig.length).toBe(64);
    expect(verify(pair.publicKey, msg, sig, { ecdsaEncoding: "raw" })).toBe(true);
    const header = Buffer.from(JSON.stringify({ alg: "ES256" })).toString("base64url");
    const input = `${header}.${msg.toString("base64url")}`;
    const jwsSig = sign(pair.privateKey, Buffer.from(input), { ecdsaEncoding: "raw" }).toString("base64url");
    const spki = pair.publicKey.export({ format: "pem", type: "spki" }).toString();
    const res = await compactVerify(`${input}.${jwsSig}`, await importSPKI(spki, "ES256"));
    expect(res.protectedHeader.alg).toBe("ES256");
  });

  it("converts between DER and raw losslessly", () => {
    for (let i = 0; i < 50; i++) {
      const der = sign(pair.privateKey, Buffer.from(`m${i}`));
      const raw = ecdsaDerToRaw(der);
      expect(raw.length).toBe(64);
      expect(ecdsaRawToDer(raw).equals(der)).toBe(true);
      expect(verify(pair.publicKey, Buffer.from(`m${i}`), raw, { ecdsaEncoding: "raw" })).toBe(true);
    }
  });

  it("does not accept a raw signature as DER or the reverse", () => {
    const raw = sign(pair.privateKey, msg, { ecdsaEncoding: "raw" });
    const der = sign(pair.privateKey, msg);
    expect(verify(pair.publicKey, msg, raw)).toBe(false);
    expect(verify(pair.publicKey, msg, der, { ecdsaEncoding: "raw" })).toBe(false);
  });

  it("rejects malformed DER with a coded error", () => {
    for (const bad of [
      Buffer.from([0x31, 0]),
      Buffer.from([0x30, 5, 2, 1, 1]),
      Buffer.from([0x30, 6, 2, 1, 0x80, 2, 1, 1]),
    ]) {
      try {
        ecdsaDerToRaw(bad);
        throw new Error("accepted");
      } catch (err) {
        expect(hasErrorCode(err, "ERR_CRYPTO_SIGNATURE_ENCODING")).toBe(true);
      }
    }
    try {
      ecdsaRawToDer(Buffer.alloc(63));
      throw new Error("accepted");
    } catch (err) {
      expect(hasErrorCode(err, "ERR_CRYPTO_SIGNATURE_ENCODING")).toBe(true);
    }
  });

  it("never throws on garbage signatures (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (sig) => {
        expect(verify(pair.publicKey, msg, sig)).toBe(false);
        expect(verify(pair.publicKey, msg, sig, { ecdsaEncoding: "raw" })).toBe(false);
      }),
      { numRuns: 200 },
    );
  });
});
