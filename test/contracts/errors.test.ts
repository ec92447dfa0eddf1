import { describe, expect, it } from "vitest";
import {
  CanonicalJsonError,
  ERROR_CODES,
  isWardenErrorCode,
  WardenError,
} from "../../src/contracts/index.js";

describe("error model", () => {
  it("codes are unique, upper snake case and prefixed ERR_", () => {
    const all = Object.values(ERROR_CODES).flat() as string[];
    expect(new Set(all).size).toBe(all.length);
    for (const c of all) expect(c).toMatch(/^ERR_[A-Z0-9_]+$/);
  });

  it("subclasses carry their code, name and details", () => {
    const e = new CanonicalJsonError("ERR_CANON_CYCLE", "cycle", { details: { path: "$.a" } });
    expect(e).toBeInstanceOf(WardenError);
    expect(e.name).toBe("CanonicalJsonError");
    expect(e.code).toBe("ERR_CANON_CYCLE");
    expect(e.details).toEqual({ path: "$.a" });
    expect(isWardenErrorCode("ERR_CANON_CYCLE")).toBe(true);
    expect(isWardenErrorCode("ERR_NOPE")).toBe(false);
  });
});
