// OATS C1 runs the TypeScript compiler on Gate-skipping code paths: against Warden's loop
// every one is a compile error; against a loop without the typestate they compile and the
// check fails naming them.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ILLEGAL_PATHS, phaseOrderCompiles } from "../../src/conformance/index.js";

describe("OATS C1: compile-time phase order", () => {
  it("Warden's loop: every illegal transition is a compile error and the legal path compiles", async () => {
    const r = await phaseOrderCompiles();
    expect(r.ran).toBe(true);
    expect(r.observed).toMatch(/5 illegal transitions are compile errors/);
    expect(r.pass).toBe(true);
  }, 180_000);

  it("a loop without the typestate lets Reason → Act compile: the check fails", async () => {
    const r = await phaseOrderCompiles(join(import.meta.dirname, "fixtures", "loose-loop.js"));
    expect(r.pass).toBe(false);
    expect(r.observed).toContain("compiles (must not)");
    expect(r.observed).toContain(ILLEGAL_PATHS[0]?.what);
  }, 180_000);
});
