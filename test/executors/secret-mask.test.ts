import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MASK, SecretMasker, secretForms } from "../../src/executors/secret-mask.js";

// Secrets made of mask characters could be re-formed by the mask itself; real secrets are not "***".
const secretArb = fc
  .string({ minLength: 1, maxLength: 40, unit: "grapheme" })
  .filter((s) => !s.includes("*"));
const textArb = fc.string({ maxLength: 60, unit: "grapheme" });

describe("secret masking", () => {
  it("no spelling of a secret survives masking, whatever surrounds it (text)", () => {
    fc.assert(
      fc.property(secretArb, textArb, textArb, fc.nat(4), (secret, before, after, pick) => {
        const forms = secretForms(secret);
        const form = forms[pick % forms.length] ?? secret;
        const out = new SecretMasker([secret]).text(`${before}${form}${after}`);
        expect(out).not.toContain(secret);
        expect(out).toContain(MASK);
      }),
    );
  });

  it("no spelling of a secret survives masking in bytes, and each occurrence is counted", () => {
    fc.assert(
      fc.property(secretArb, textArb, fc.integer({ min: 1, max: 3 }), (secret, filler, times) => {
        const raw = Buffer.from(Array.from({ length: times }, () => `${filler}${secret}`).join("") + filler);
        const { bytes, count } = new SecretMasker([secret]).bytes(raw);
        expect(bytes.includes(Buffer.from(secret))).toBe(false);
        expect(count).toBeGreaterThanOrEqual(times);
      }),
    );
  });

  it("a secret of 4+ bytes is found inside any base64 blob, at any alignment", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 4, maxLength: 32 }).map((b) => Buffer.from(b).toString("latin1")),
        fc.uint8Array({ maxLength: 8 }),
        fc.uint8Array({ maxLength: 8 }),
        fc.constantFrom("base64" as const, "base64url" as const),
        (secret, pre, post, alphabet) => {
          const blob = Buffer.concat([pre, Buffer.from(secret, "utf8"), post]).toString(alphabet);
          expect(new SecretMasker([secret]).contains(blob)).toBe(true);
        },
      ),
    );
  });

  it("leaves text without the secret alone and has no forms for an empty secret", () => {
    const m = new SecretMasker(["hunter2-long"]);
    expect(m.text("nothing to see")).toBe("nothing to see");
    expect(m.bytes(Buffer.from("abc"))).toEqual({ bytes: Buffer.from("abc"), count: 0 });
    expect(new SecretMasker([""]).empty).toBe(true);
    expect(secretForms("a b/c")).toEqual(
      expect.arrayContaining(["a b/c", "a%20b%2Fc", "a%20b%2fc", "a+b%2Fc"]),
    );
  });
});
