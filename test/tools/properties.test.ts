// Property tests: whatever string the model sends, an accepted value has no shell
// metacharacter or invisible character after normalisation, and each argument value
// lands in exactly one argv element (never split, never merged with another).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hasShellMetacharacter, prepareInvocation, validateArgs } from "../../src/tools/index.js";
import { compile, manifest } from "./helpers.js";

const STRING_TYPES = ["string", "path", "scope_target", "duration", "ip_address", "cidr", "url"];
const tool = compile(manifest(STRING_TYPES.map((t) => `[args.${t}_arg]\ntype = "${t}"\n`).join("")));

// Strings biased towards the dangerous: metacharacters, their full-width and small forms,
// invisible characters, dots, slashes, digits and arbitrary Unicode.
const nasty = fc.constantFrom(
  ..."；｜＆＄｀（）｛｝［］＜＞！﹔﹩﹠\n\r\0\u200b\u202e\u2066\ufeff\u00ad\uff0e\u2024\uff0f".split(""),
  ..."; | & $ ` ( ) { } [ ] < > ! . / \\ - : % a z 0 9 ".split(" "),
);
const hostile = fc.oneof(
  fc.string({ unit: fc.oneof(nasty, fc.constantFrom("a", "b", "1", ".", "-")), maxLength: 24 }),
  fc.string({ unit: "grapheme", maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
);
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe("properties", () => {
  it("no accepted string argument contains a metacharacter or invisible character after normalisation", () => {
    fc.assert(
      fc.property(fc.constantFrom(...STRING_TYPES), hostile, (type, s) => {
        const r = validateArgs(tool, { value: "v", [`${type}_arg`]: s }, { unrestrictedScope: true });
        if (!r.ok) return;
        const accepted = r.args[`${type}_arg`];
        expect(typeof accepted).toBe("string");
        const v = accepted as string;
        expect(hasShellMetacharacter(v)).toBe(false);
        expect(hasShellMetacharacter(v.normalize("NFKC"))).toBe(false);
        expect(INVISIBLE.test(v)).toBe(false);
        expect(v.normalize("NFKC")).toBe(v);
      }),
      { numRuns: 3000 },
    );
  });

  const argvTool = compile(`
[tool]
name = "argv_probe"
version = "1"
binary = "probe"
description = "d"
[args.a]
type = "string"
required = true
[args.b]
type = "string"
required = true
[args.c]
type = "string"
required = true
[command]
template = "probe --first {a} -x '{b}' --last={c}"
[output]
format = "text"
[output.schema]
type = "object"
`);
  const value = fc.string({
    unit: fc.oneof(nasty, fc.constantFrom(" ", "\t", "'", '"', "=", "a", "-")),
    minLength: 1,
    maxLength: 16,
  });

  it("exec argv never splits or merges an argument", () => {
    fc.assert(
      fc.property(value, value, value, (a, b, c) => {
        const r = prepareInvocation(argvTool, { a, b, c });
        if (!r.ok) return;
        if (r.invocation.kind !== "exec") throw new Error("exec expected");
        const { args } = r;
        expect(r.invocation.argv).toEqual(["probe", "--first", args.a, "-x", args.b, `--last=${args.c}`]);
      }),
      { numRuns: 3000 },
    );
  });
});
