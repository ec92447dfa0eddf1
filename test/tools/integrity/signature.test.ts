// Signature encoding and mode attacks: malformed base64 and DER, another key, a wrong
// curve, and signatures presented in the other hash mode.
import { createHash, sign as nodeSign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hasErrorCode } from "../../../src/contracts/index.js";
import { decodeSignature, signSchemaPin, verifySignedSchema } from "../../../src/tools/integrity/index.js";
import { discoveryFor, p256, p384 } from "./helpers.js";

const schema = { name: "t", description: "d", parameters: { type: "object" } };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return hasErrorCode(err, "ERR_INTEGRITY_SIGNATURE_ENCODING") ||
      hasErrorCode(err, "ERR_INTEGRITY_KEY_TYPE")
      ? err.code
      : String(err);
  }
  return undefined;
}

describe("signSchemaPin / verification", () => {
  const pair = p256();
  const discovery = discoveryFor(pair);

  it("round-trips in both modes and the modes do not cross", () => {
    for (const mode of ["double", "single"] as const) {
      const other = mode === "double" ? "single" : "double";
      const signature = signSchemaPin(pair.privateKey, schema, mode);
      expect(verifySignedSchema({ schema, signature }, { discovery, hashMode: mode })).toMatchObject({
        ok: true,
      });
      expect(verifySignedSchema({ schema, signature }, { discovery, hashMode: other })).toMatchObject({
        ok: false,
        code: "ERR_INTEGRITY_SIGNATURE_INVALID",
      });
    }
  });

  it("double mode signs SHA-256 of the canonical bytes (independent check with node:crypto)", () => {
    const canonical = Buffer.from('{"description":"d","name":"t","parameters":{"type":"object"}}');
    const digest = createHash("sha256").update(canonical).digest();
    const signature = nodeSign("sha256", digest, { key: pair.privateKey, dsaEncoding: "der" }).toString(
      "base64",
    );
    expect(verifySignedSchema({ schema, signature }, { discovery })).toMatchObject({ ok: true });
  });

  it("rejects a tampered schema byte", () => {
    const signature = signSchemaPin(pair.privateKey, schema);
    const tampered = { ...schema, description: "D" };
    expect(verifySignedSchema({ schema: tampered, signature }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("rejects a signature made by another key", () => {
    const signature = signSchemaPin(p256().privateKey, schema);
    expect(verifySignedSchema({ schema, signature }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_INVALID",
    });
  });

  it("refuses to sign with a key that is not P-256", () => {
    expect(codeOf(() => signSchemaPin(p384().privateKey, schema))).toBe("ERR_INTEGRITY_KEY_TYPE");
  });

  it("a raw r||s (P1363) signature is an encoding error: SchemaPin is DER only", () => {
    const raw = nodeSign("sha256", Buffer.from("x"), { key: pair.privateKey, dsaEncoding: "ieee-p1363" });
    expect(codeOf(() => decodeSignature(raw.toString("base64")))).toBe("ERR_INTEGRITY_SIGNATURE_ENCODING");
  });

  it.each([
    ["empty", ""],
    ["not a string", 42],
    [
      "url-safe alphabet",
      "MEUCIQC7SDYfAPsozzmx1_81b8rPSPy0RICihQVkEmmvN4qrUAIgZMiGgpwhqdDVMYFpu1SMwXeLM105JmXL7-3hP6Imhp0=",
    ],
    ["whitespace", " MEUCIQ=="],
    ["missing padding", "MEUCIQC7SDYfAPsozzmx1"],
    ["non-canonical padding bits", "MEZ="],
    ["valid base64, not DER", Buffer.from("not a signature at all").toString("base64")],
    [
      "DER with trailing byte",
      Buffer.concat([
        Buffer.from(signSchemaPin(p256().privateKey, schema), "base64"),
        Buffer.from([0]),
      ]).toString("base64"),
    ],
    ["too long", "A".repeat(200)],
  ])("malformed signature (%s) → ERR_INTEGRITY_SIGNATURE_ENCODING", (_label, sig) => {
    expect(codeOf(() => decodeSignature(sig))).toBe("ERR_INTEGRITY_SIGNATURE_ENCODING");
    expect(verifySignedSchema({ schema, signature: sig }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_ENCODING",
    });
  });

  it("a DER integer with a negative sign bit is malformed", () => {
    const bad = Buffer.from([
      0x30,
      0x44,
      0x02,
      0x20,
      0x80,
      ...Buffer.alloc(31, 1),
      0x02,
      0x20,
      ...Buffer.alloc(32, 1),
    ]);
    expect(codeOf(() => decodeSignature(bad.toString("base64")))).toBe("ERR_INTEGRITY_SIGNATURE_ENCODING");
  });

  it("missing signature → ERR_INTEGRITY_UNSIGNED; wrong document shape → ERR_INTEGRITY_SIGNATURE_FILE_INVALID", () => {
    expect(verifySignedSchema({ schema }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_UNSIGNED",
    });
    expect(verifySignedSchema([schema], { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
    });
    expect(verifySignedSchema({ schema: "x", signature: "y" }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_SIGNATURE_FILE_INVALID",
    });
  });

  it("an unknown canonicalization is refused before any cryptography", () => {
    const signature = signSchemaPin(pair.privateKey, schema);
    expect(verifySignedSchema({ schema, signature, canonicalization: "jcs" }, { discovery })).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_CANONICALIZATION_UNSUPPORTED",
    });
    expect(
      verifySignedSchema({ schema, signature, canonicalization: "schemapin-v1" }, { discovery }),
    ).toMatchObject({
      ok: true,
    });
  });
});
