import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadContract, MAX_MANIFEST_BYTES, parseContract } from "../../src/tools/index.js";
import { compile, FIXTURES, failure, manifest } from "./helpers.js";

const base = (body: string) => `
[tool]
name = "t"
version = "1"
description = "d"
${body}
[output]
format = "text"
[output.schema]
type = "object"
`;

describe("manifest syntax and schema errors", () => {
  it("reports an unreadable file", () => {
    const r = loadContract(join(FIXTURES, "missing.clad.toml"));
    expect(r.ok === false && r.code).toBe("ERR_TOOL_REGISTRY_IO");
  });

  it("reports TOML syntax errors with the line", () => {
    const f = failure(`[tool]\nname = "t"\nversion = \n`);
    expect(f.code).toBe("ERR_TOOL_MANIFEST_SYNTAX");
    expect(f.line).toBe(3);
  });

  it("rejects duplicate TOML keys", () => {
    expect(failure(`[tool]\nname = "a"\nname = "b"\n`).code).toBe("ERR_TOOL_MANIFEST_SYNTAX");
  });

  it("rejects an unknown key and points at its line", () => {
    const text = manifest("", "").replace('type = "string"', 'type = "string"\npatern = "^a$"');
    const f = failure(text);
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.message).toContain("unknown key 'args.value.patern'");
    expect(text.split("\n")[(f.line ?? 0) - 1]).toContain("patern");
  });

  it("rejects an unknown top-level section", () => {
    const f = failure(manifest("[session]\nstartup_command = 'x'\n"));
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.message).toContain("session");
  });

  it("refuses session and browser modes", () => {
    const f = failure(manifest().replace('binary = "echo"', 'binary = "echo"\nmode = "session"'));
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.path).toEqual(["tool", "mode"]);
  });

  it("rejects a manifest without [output.schema]", () => {
    const f = failure(manifest().replace('[output.schema]\ntype = "object"\n', ""));
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.path).toEqual(["output", "schema"]);
  });

  it("rejects an oversized manifest before parsing it", () => {
    const f = failure(manifest(`# ${"x".repeat(MAX_MANIFEST_BYTES)}`));
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });

  it("rejects tool names MCP cannot carry and reserved argument names", () => {
    expect(failure(manifest().replace('name = "t"', 'name = "t t"')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(failure(manifest('[args._secret]\ntype = "string"\n')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(failure(manifest('[args.__proto__]\ntype = "string"\n')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });

  it("accepts a category and rejects an unknown one", () => {
    const withCat = (c: string) =>
      manifest().replace('binary = "echo"', `binary = "echo"\ncategory = "${c}"`);
    expect(compile(withCat("read_only")).contract.tool.category).toBe("read_only");
    expect(failure(withCat("dangerous")).code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });
});

describe("invalid combinations", () => {
  const arg = (spec: string) => manifest(`[args.x]\n${spec}\n`);
  const cases: [string, string, string][] = [
    ["allowed on a string", arg('type = "string"\nallowed = ["a"]'), "ERR_TOOL_MANIFEST_INVALID"],
    ["enum without allowed", arg('type = "enum"'), "ERR_TOOL_MANIFEST_INVALID"],
    ["regex_match without pattern", arg('type = "regex_match"'), "ERR_TOOL_MANIFEST_INVALID"],
    ["pattern on an integer", arg('type = "integer"\npattern = "^1$"'), "ERR_TOOL_MANIFEST_INVALID"],
    ["min above max", arg('type = "integer"\nmin = 5\nmax = 1'), "ERR_TOOL_MANIFEST_INVALID"],
    ["clamp without bounds", arg('type = "integer"\nclamp = true'), "ERR_TOOL_MANIFEST_INVALID"],
    ["min on a string", arg('type = "string"\nmin = 1'), "ERR_TOOL_MANIFEST_INVALID"],
    ["fractional integer bound", arg('type = "integer"\nmax = 1.5'), "ERR_TOOL_MANIFEST_INVALID"],
    ["schemes on a path", arg('type = "path"\nschemes = ["https"]'), "ERR_TOOL_MANIFEST_INVALID"],
    ["scope_check on a string", arg('type = "string"\nscope_check = true'), "ERR_TOOL_MANIFEST_INVALID"],
    [
      "required with a default",
      arg('type = "string"\nrequired = true\ndefault = "a"'),
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    [
      "a default its type rejects",
      arg('type = "integer"\nmax = 10\ndefault = 11'),
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    ["a default with a metacharacter", arg('type = "string"\ndefault = "a;b"'), "ERR_TOOL_MANIFEST_INVALID"],
    [
      "a credential_file default",
      arg('type = "credential_file"\ndefault = "a"'),
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    ["an unknown type", arg('type = "hostname"'), "ERR_TOOL_TYPE_UNKNOWN"],
    ["a pattern that does not compile", arg('type = "string"\npattern = "(a"'), "ERR_TOOL_MANIFEST_INVALID"],
    [
      "a catastrophic-backtracking pattern",
      arg('type = "string"\npattern = "^(a+)+$"'),
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    ["a duplicate position", arg('type = "string"\nposition = 1'), "ERR_TOOL_MANIFEST_INVALID"],
  ];
  it.each(cases)("rejects %s", (_name, text, code) => {
    const f = failure(text);
    expect(f.code).toBe(code);
    expect(f.path?.slice(0, 2)).toEqual(["args", "x"]);
  });

  it("rejects a custom type that shadows a built-in", () => {
    expect(failure(manifest('[types.url]\nbase = "string"\n')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });

  it("rejects a constraint defined by both the argument and its type", () => {
    const f = failure(
      manifest(
        '[types.slug]\nbase = "string"\npattern = "^[a-z]+$"\n[args.x]\ntype = "slug"\npattern = "^a$"\n',
      ),
    );
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.path).toEqual(["args", "x", "pattern"]);
  });

  it("rejects zero or two backends, and a dispatch that names the wrong one", () => {
    expect(failure(base("")).code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(
      failure(base('[mcp]\nserver = "s"\ntool = "t"\n[http]\nmethod = "GET"\nurl = "https://a.example/"\n'))
        .code,
    ).toBe("ERR_TOOL_MANIFEST_INVALID");
    const f = failure(base('dispatch = "http"\n[mcp]\nserver = "s"\ntool = "t"\n'));
    expect(f.code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(f.path).toEqual(["tool", "dispatch"]);
  });

  it("rejects binary on an HTTP tool", () => {
    expect(failure(base('binary = "curl"\n[http]\nmethod = "GET"\nurl = "https://a.example/"\n')).code).toBe(
      "ERR_TOOL_MANIFEST_INVALID",
    );
  });

  it("rejects a parser that disagrees with the format, and a custom parser script", () => {
    const m = manifest().replace('format = "text"', 'format = "json"\nparser = "builtin:csv"');
    expect(failure(m).code).toBe("ERR_TOOL_MANIFEST_INVALID");
    const s = manifest().replace('format = "text"', 'format = "json"\nparser = "scripts/parse.py"');
    expect(failure(s).code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });

  it("rejects an output schema that does not compile", () => {
    expect(failure(manifest('[output.schema.properties.a]\ntype = "strin"\n')).code).toBe(
      "ERR_TOOL_MANIFEST_INVALID",
    );
  });

  it("rejects a malformed scope entry", () => {
    expect(failure(manifest('[scope]\nallowed_cidrs = ["10.0.0.0/33"]\n')).code).toBe(
      "ERR_TOOL_MANIFEST_INVALID",
    );
    expect(failure(manifest('[scope]\nallowed_hosts = ["bad host"]\n')).code).toBe(
      "ERR_TOOL_MANIFEST_INVALID",
    );
  });

  it("reports a failure without a source when none is given", () => {
    const r = parseContract("[tool]\n");
    expect(r.ok === false && r.source).toBeUndefined();
  });
});
