// Issue 17 #5: option injection. A string argument that starts with '-' would be read as
// an option by the program its argv element reaches (`git log --output=/tmp/x` writes a
// file, `sort -o FILE` overwrites one). String types refuse a leading dash unless the
// contract opts in, and an opted-in argument must follow a literal `--` in the command.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prepareInvocation, validateArgs } from "../../src/tools/index.js";
import { compile, failure } from "./helpers.js";

/** An exec contract with one required argument `v` of `type`. */
function tool(exec: string, type = "string", extra = ""): string {
  return `
[tool]
name = "t"
version = "1.0.0"
description = "test tool"

[args.v]
position = 1
required = true
type = "${type}"
${extra}

[command]
${exec}

[output]
format = "text"

[output.schema]
type = "object"
`;
}

const gitLog = compile(tool('exec = ["git", "log", "{v}"]'));
const gitLogPath = compile(tool('exec = ["git", "log", "{v}"]', "path"));
const sort = compile(tool('exec = ["sort", "{v}"]'));

const argv = (t: ReturnType<typeof compile>, v: unknown): readonly string[] => {
  const r = prepareInvocation(t, { v }, { unrestrictedScope: true });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  if (r.invocation.kind !== "exec") throw new Error("expected exec");
  return r.invocation.argv;
};
const refused = (t: ReturnType<typeof compile>, v: unknown) => {
  const r = validateArgs(t, { v }, { unrestrictedScope: true });
  expect(r, JSON.stringify(v)).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_FORMAT", rule: "option-like" });
};

describe("option injection through string arguments", () => {
  it("a path argument '--output=/tmp/x' cannot become a git option", () => {
    refused(gitLog, "--output=/tmp/x");
    expect(validateArgs(gitLogPath, { v: "--output=/tmp/x" }, { unrestrictedScope: true })).toMatchObject({
      ok: false,
      code: "ERR_TOOL_ARG_FORMAT",
    });
  });

  it("'-o' cannot reach sort as an option", () => {
    refused(sort, "-o");
    refused(sort, "-o/tmp/victim");
    expect(argv(sort, "data.txt")).toEqual(["sort", "data.txt"]);
  });

  it("'--' and '-' alone are refused", () => {
    refused(gitLog, "--");
    refused(gitLog, "-");
  });

  it("leading whitespace then '-' is refused (tools that trim would see an option)", () => {
    for (const v of [" -o", "  --output=x", "\u00a0-o", "\u3000-o", "\u2003-o"]) refused(sort, v);
  });

  it("Unicode dashes that fold or could be read as '-' are refused", () => {
    // U+FE63 and U+FF0D fold to '-' under NFKC; U+207B/U+208B fold to U+2212.
    const dashes = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"];
    const folding = ["\ufe63", "\uff0d", "\u207b", "\u208b", "\ufe58", "\ufe31"];
    for (const d of [...dashes, ...folding]) refused(sort, `${d}o/tmp/x`);
  });

  it("a dash inside a value is plain text", () => {
    expect(argv(gitLog, "main..feature-x")).toEqual(["git", "log", "main..feature-x"]);
    expect(argv(sort, "a -o b")).toEqual(["sort", "a -o b"]);
  });

  it("enum values are the author's literal choices and may start with '-'", () => {
    const t = compile(tool('exec = ["ls", "{v}"]', "enum", 'allowed = ["-l", "-a"]'));
    expect(argv(t, "-l")).toEqual(["ls", "-l"]);
  });

  it("property: any string type refuses a value whose first non-space character is a dash", () => {
    const lead = fc.constantFrom("", " ", "\u00a0", "\u3000");
    const dash = fc.constantFrom("-", "\u2010", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d", "\u207b");
    const rest = fc.string({ unit: fc.constantFrom("a", "o", "=", "/", "x", "-", " "), maxLength: 12 });
    fc.assert(
      fc.property(lead, dash, rest, (l, d, r) => {
        const res = validateArgs(sort, { v: `${l}${d}${r}` }, { unrestrictedScope: true });
        expect(res.ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe("allow_leading_dash: the contract opts in and places '--'", () => {
  it("an opted-in argument after '--' may start with '-' and stays an operand", () => {
    const grep = compile(
      tool('exec = ["grep", "-n", "--", "{v}", "file.txt"]', "string", "allow_leading_dash = true"),
    );
    expect(argv(grep, "-v")).toEqual(["grep", "-n", "--", "-v", "file.txt"]);
    const t = compile(tool('template = "git log -- {v}"', "string", "allow_leading_dash = true"));
    expect(argv(t, "--output=/tmp/x")).toEqual(["git", "log", "--", "--output=/tmp/x"]);
  });

  it("an opted-in argument before '--' is refused at load", () => {
    const f = failure(tool('exec = ["sort", "{v}"]', "string", "allow_leading_dash = true"));
    expect(f.code).toBe("ERR_TOOL_TEMPLATE_INVALID");
    expect(failure(tool('exec = ["sort", "{v}", "--"]', "string", "allow_leading_dash = true")).code).toBe(
      "ERR_TOOL_TEMPLATE_INVALID",
    );
  });

  it("an opted-in argument glued behind an empty placeholder still counts as leading", () => {
    const text = tool('exec = ["sort", "{w}{v}"]', "string", "allow_leading_dash = true").replace(
      "[command]",
      '[args.w]\ntype = "string"\ndefault = ""\n\n[command]',
    );
    expect(failure(text).code).toBe("ERR_TOOL_TEMPLATE_INVALID");
  });

  it("an opted-in argument behind a literal prefix cannot start an element", () => {
    const t = compile(tool('exec = ["grep", "--regexp={v}", "f"]', "string", "allow_leading_dash = true"));
    expect(argv(t, "-x")).toEqual(["grep", "--regexp=-x", "f"]);
  });

  it("a conditional carrying an opted-in argument is checked where it stands", () => {
    const cond = (exec: string) =>
      tool(exec, "string", 'allow_leading_dash = true\n[args.on]\ntype = "boolean"\ndefault = false').replace(
        "[output]",
        '[command.conditionals.pat]\nwhen = "on == true"\nexec = ["{v}"]\n\n[output]',
      );
    expect(failure(cond('exec = ["grep", "{_pat}", "--", "f"]')).code).toBe("ERR_TOOL_TEMPLATE_INVALID");
    compile(cond('exec = ["grep", "--", "{_pat}"]'));
  });

  it("only free-text types can opt in", () => {
    expect(failure(tool('exec = ["cat", "--", "{v}"]', "path", "allow_leading_dash = true")).code).toBe(
      "ERR_TOOL_MANIFEST_INVALID",
    );
  });
});
