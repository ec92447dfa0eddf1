// An entry's hash is SHA-256 over the UTF-8 bytes of its canonical text without `hash` and
// `signature` (docs/journal.md §1). entryHash writes those bytes into a reused buffer instead of
// joining the text first: it must give the digest of exactly that text, for any body (non-ASCII,
// astral, empty, larger than the buffer) and whatever entry was hashed before it.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contracts/index.js";
import { entryHash, hashedText } from "../../src/journal/entry.js";

const reference = (e: Parameters<typeof entryHash>[0], bodyJson: string) =>
  `sha256:${createHash("sha256").update(hashedText(e, bodyJson), "utf8").digest("hex")}`;

const fields = fc.record({
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  time: fc.constant("2026-12-05T23:28:15.837Z"),
  type: fc.constantFrom("warden.gate.decision", "warden.gate.result"),
  run_id: fc.oneof(fc.constant(null), fc.string({ minLength: 1, maxLength: 20 })),
  trace_id: fc.oneof(fc.constant(null), fc.constant("aa74a77993123e00812471a94f839c79")),
  prev_hash: fc.constant(`sha256:${"ab".repeat(32)}`),
  key_id: fc.constant("k".repeat(43)),
});

describe("entryHash", () => {
  it("is SHA-256 of the hashed text's UTF-8 bytes, body after body (property)", () => {
    const body = fc.dictionary(
      fc.string({ unit: "grapheme", maxLength: 5 }),
      fc.oneof(fc.string({ unit: "grapheme", maxLength: 200 }), fc.jsonValue({ maxDepth: 2 })),
      { maxKeys: 5 },
    );
    fc.assert(
      fc.property(fields, fc.array(body, { minLength: 1, maxLength: 4 }), (f, bodies) => {
        for (const b of bodies) {
          const json = canonicalJson(b);
          expect(entryHash(f, json)).toBe(reference(f, json));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("hashes a body larger than its buffer, then a small one, like the joined text", () => {
    const f = {
      seq: 1,
      time: "2026-12-05T23:28:15.837Z",
      type: "t",
      run_id: null,
      trace_id: null,
      prev_hash: `sha256:${"0".repeat(64)}`,
      key_id: "k".repeat(43),
    } as const;
    for (const body of [{ big: "é".repeat(400_000) }, { mid: "x".repeat(40_000) }, { small: "ü🙂" }, {}]) {
      const json = canonicalJson(body);
      expect(entryHash(f, json)).toBe(reference(f, json));
    }
  });
});
