import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { SessionFacts } from "../../src/context/index.js";
import type { PolicySessionFacts } from "../../src/policy/index.js";

// Type-level: src/context's SessionFacts can be handed to policy as is (checked by tsc).
const sessionFactsFit = (s: SessionFacts): PolicySessionFacts => s;

const SRC = new URL("../../src/policy/", import.meta.url).pathname;
const ALLOWED = [
  /^\.\/[a-z-]+\.js$/,
  /^\.\.\/contracts\/index\.js$/,
  /^\.\.\/crypto\/index\.js$/,
  /^node:/,
  /^yaml$/,
  /^zod$/,
  /^@cedar-policy\/cedar-wasm\/nodejs$/,
];

describe("src/policy layering", () => {
  it("accepts src/context's SessionFacts where it wants PolicySessionFacts (a tsc error otherwise)", () => {
    expect(sessionFactsFit).toBeTypeOf("function");
  });

  it("imports only contracts, crypto, its own files and its chosen dependencies (never gate, loop, model or journal code)", () => {
    const files = readdirSync(SRC).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const text = readFileSync(`${SRC}${f}`, "utf8");
      const specs = [
        ...text.matchAll(/(?:import|export)\s[^;]*?from\s+"([^"]+)"/g),
        ...text.matchAll(/import\(\s*"([^"]+)"\s*\)/g),
      ].map((m) => m[1]!);
      for (const s of specs)
        expect(
          ALLOWED.some((re) => re.test(s)),
          `${f} imports ${s}`,
        ).toBe(true);
    }
  });
});
