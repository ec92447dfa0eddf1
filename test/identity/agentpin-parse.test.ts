// Parsing attacks and properties: the JWT parser, the strict base64 decoders and the DER
// signature path never throw and never accept a second spelling of the same bytes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeBase64Std,
  decodeBase64Url,
  encodeBase64Url,
  MAX_CREDENTIAL_LENGTH,
  parseCredential,
  verifyDerSignature,
} from "../../src/identity/index.js";
import { issue, makeDomain, verify, withClaims } from "./agentpin-fixture.js";

const acme = makeDomain("acme.example");

describe("AgentPin parsing attacks", () => {
  it("an oversized credential is ALGORITHM_REJECTED before it is decoded", async () => {
    const big = withClaims(issue(acme), (c) => {
      c.nonce = "x".repeat(MAX_CREDENTIAL_LENGTH);
    });
    expect((await verify(big, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("duplicate claim keys (two parsers, two readings) are ALGORITHM_REJECTED", async () => {
    const [h, p, s] = issue(acme).split(".") as [string, string, string];
    const json = Buffer.from(p, "base64url")
      .toString()
      .replace('"iss":"acme.example"', '"iss":"acme.example","iss":"evil.example"');
    const t = `${h}.${Buffer.from(json).toString("base64url")}.${s}`;
    expect((await verify(t, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("a padded or non-canonical header or payload is ALGORITHM_REJECTED; a mangled signature SIGNATURE_INVALID", async () => {
    const [h, p, s] = issue(acme).split(".") as [string, string, string];
    expect((await verify(`${h}=.${p}.${s}`, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
    expect((await verify(`${h}.${p}=.${s}`, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
    // As in every SDK, a signature that does not decode is the signature's failure (step 5).
    expect((await verify(`${h}.${p}.${s}==`, [acme.doc])).result.error_code).toBe("SIGNATURE_INVALID");
    expect((await verify(`${h}.${p}.${s.slice(0, -1)}!`, [acme.doc])).result.error_code).toBe(
      "SIGNATURE_INVALID",
    );
  });

  it("claims of the wrong type (exp as a string) are ALGORITHM_REJECTED", async () => {
    const t = withClaims(issue(acme), (c) => {
      c.exp = String(c.exp);
    });
    expect((await verify(t, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
  });

  it("a header without kid is ALGORITHM_REJECTED", async () => {
    const [, p, s] = issue(acme).split(".") as [string, string, string];
    const h = encodeBase64Url(JSON.stringify({ alg: "ES256", typ: "agentpin-credential+jwt" }));
    expect((await verify(`${h}.${p}.${s}`, [acme.doc])).result.error_code).toBe("ALGORITHM_REJECTED");
  });
});

describe("AgentPin parser properties", () => {
  it("parseCredential never throws and rejects anything not three canonical parts", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (s) => {
        const r = parseCredential(s);
        if (!r.ok) expect(r.code).toBe("ALGORITHM_REJECTED");
      }),
    );
  });

  it("a one-character mutation never gives a second spelling of the same signature bytes", () => {
    const token = issue(acme);
    fc.assert(
      fc.property(fc.nat(token.length - 1), fc.constantFrom("=", "+", "/", " ", ".", "A"), (i, ch) => {
        const mutated = token.slice(0, i) + ch + token.slice(i + 1);
        const r = parseCredential(mutated);
        if (r.ok && r.value.signature !== null) {
          expect(encodeBase64Url(r.value.signature)).toBe(mutated.split(".")[2]);
        }
      }),
    );
  });

  it("base64url: decoding inverts encoding, and only the canonical spelling decodes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
        expect(decodeBase64Url(encodeBase64Url(bytes))).toEqual(Buffer.from(bytes));
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (s) => {
        const d = decodeBase64Url(s);
        if (d !== null) expect(encodeBase64Url(d)).toBe(s);
      }),
    );
  });

  it("standard base64: only the canonical padded spelling decodes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
        expect(decodeBase64Std(Buffer.from(bytes).toString("base64"))).toEqual(Buffer.from(bytes));
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), (s) => {
        const d = decodeBase64Std(s);
        if (d !== null) expect(d.toString("base64")).toBe(s);
      }),
    );
  });

  it("DER signature verification never throws on arbitrary bytes and never accepts them", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        expect(verifyDerSignature(acme.key, "a.b", bytes)).toBe(false);
      }),
    );
  });
});
