import { describe, expect, it } from "vitest";
import { canonicalJson, sha256Hex, sha256Of } from "../../../src/contracts/index.js";
import { readVectorJson } from "../vectors.js";

interface Vector {
  id: string;
  input: unknown;
  canonical_json_base64: string;
  sha256: string;
}

const file = readVectorJson("gate", "canonical-json", "canonical_json_vectors.json") as {
  vectors: Vector[];
};

describe("GATE canonical JSON vectors", () => {
  it("has vectors to check", () => {
    expect(file.vectors.length).toBeGreaterThanOrEqual(14);
  });

  for (const v of file.vectors) {
    const expected = Buffer.from(v.canonical_json_base64, "base64").toString("utf8");
    if (v.id === "v006_number_boundaries") {
      it(`${v.id}: differs from the vector only in RFC 8785's negative zero`, () => {
        const ours = canonicalJson(v.input);
        expect(ours).not.toBe(expected);
        expect(expected.replace('"float_negative_zero":-0.0', '"float_negative_zero":0')).toBe(ours);
        // The vector's hash is the hash of its own bytes; ours is the hash of ours.
        expect(sha256Hex(expected)).toBe(v.sha256);
      });
      continue;
    }
    it(`${v.id}: reproduces canonical bytes and hash`, () => {
      expect(canonicalJson(v.input)).toBe(expected);
      expect(sha256Of(v.input)).toBe(v.sha256);
    });
  }
});
