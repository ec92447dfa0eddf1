// redactCredentials is copy-on-write: the journal scans every body, most hold no
// credential, and copying them all was a measurable part of an append.
import { describe, expect, it } from "vitest";
import { redactCredentials } from "../../src/journal/index.js";

describe("redactCredentials copy on write", () => {
  it("returns a clean value as it is, and never modifies the input when masking", () => {
    const clean = { a: "hello", b: [1, { c: "x" }], d: null };
    expect(redactCredentials(clean)).toEqual({ value: clean, redactions: [] });
    expect(redactCredentials(clean).value).toBe(clean);

    const input = {
      keep: { n: 1 },
      list: ["ok", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "ok"],
      nested: { password: "hunter2", other: "fine" },
    };
    const before = structuredClone(input);
    const { value, redactions } = redactCredentials(input);
    expect(input).toEqual(before);
    expect(value).toEqual({
      keep: { n: 1 },
      list: ["ok", "token [REDACTED:github_token]", "ok"],
      nested: { password: "[REDACTED:secret_field]", other: "fine" },
    });
    // Untouched branches are shared, changed ones are fresh.
    expect(value.keep).toBe(input.keep);
    expect(value.list).not.toBe(input.list);
    expect(value.nested).not.toBe(input.nested);
    expect(redactions).toEqual([
      { path: "/list/1", kind: "github_token" },
      { path: "/nested/password", kind: "secret_field" },
    ]);
  });
});
