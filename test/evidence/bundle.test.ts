// The pinned bundle's document: a canonical round trip for any file contents, one hash for
// one content, and a materialization that never writes outside its private directory
// whatever names a (tampered) bundle holds.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bundleBytes, collectBundle, materializeBundle, parseBundle } from "../../src/evidence/bundle.js";
import { sha256Bytes } from "../../src/evidence/store.js";

function files(policy: Uint8Array, contracts: Record<string, Uint8Array>) {
  const dir = mkdtempSync(join(tmpdir(), "warden-bundle-t-"));
  mkdirSync(join(dir, "c"));
  writeFileSync(join(dir, "p.yaml"), policy);
  for (const [n, b] of Object.entries(contracts)) writeFileSync(join(dir, "c", n), b);
  return dir;
}

describe("decision bundle", () => {
  it("round-trips any file contents through its canonical bytes, and the hash follows the content", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), (a, b) => {
        const dir = files(a, { "t.clad.toml": b });
        try {
          const bundle = collectBundle({ policy: [join(dir, "p.yaml")], contractsDir: join(dir, "c") });
          const bytes = bundleBytes(bundle);
          expect(parseBundle(bytes)).toEqual(bundle);
          const m = materializeBundle(parseBundle(bytes));
          expect(readFileSync(m.policy[0]!)).toEqual(Buffer.from(a));
          expect(readFileSync(join(m.contractsDir, "t.clad.toml"))).toEqual(Buffer.from(b));
          rmSync(m.dir, { recursive: true });
          writeFileSync(join(dir, "p.yaml"), Buffer.concat([Buffer.from(a), Buffer.from("x")]));
          const changed = collectBundle({ policy: [join(dir, "p.yaml")], contractsDir: join(dir, "c") });
          expect(sha256Bytes(bundleBytes(changed))).not.toBe(sha256Bytes(bytes));
        } finally {
          rmSync(dir, { recursive: true });
        }
      }),
      { numRuns: 40 },
    );
  });

  it("a tampered bundle naming a file outside its directory is refused (ERR_EVIDENCE_BUNDLE_TAMPERED)", () => {
    fc.assert(
      fc.property(fc.constantFrom("../escape", "a/b", "..", ".", "../../etc/x"), (name) => {
        const bundle = {
          schema: "warden.bundle.v1" as const,
          policies: [{ name, data_b64: "eA==" }],
          contracts: [],
          gate_config: null,
          trust: null,
        };
        expect(() => materializeBundle(bundle)).toThrow(
          expect.objectContaining({ code: "ERR_EVIDENCE_BUNDLE_TAMPERED" }),
        );
        expect(existsSync(join(tmpdir(), "escape"))).toBe(false);
      }),
    );
  });

  it("a bundle document that is not the schema is refused, whatever it holds", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(() => parseBundle(Buffer.from(text))).toThrow();
      }),
      { numRuns: 100 },
    );
  });
});
