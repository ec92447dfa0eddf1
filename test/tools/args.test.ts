import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ArgsResult, validateArgs } from "../../src/tools/index.js";
import { compile, manifest } from "./helpers.js";

/** A tool with one optional argument `x` of the given spec. */
const tool = (spec: string, extra = "") => compile(manifest(`[args.x]\n${spec}\n${extra}`));
const check = (spec: string, x: unknown, opts = {}) =>
  validateArgs(tool(spec), { value: "v", x }, { unrestrictedScope: true, ...opts });
const rejected = (r: ArgsResult) => {
  if (r.ok) throw new Error(`expected a rejection, got ${JSON.stringify(r.args)}`);
  return r;
};
const value = (r: ArgsResult) => {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.args.x;
};

describe("the argument object", () => {
  const t = tool('type = "string"');
  it("must be a plain JSON object", () => {
    for (const bad of [null, [], "x", 1, new Map()]) {
      expect(rejected(validateArgs(t, bad)).code).toBe("ERR_TOOL_ARGS_INVALID");
    }
  });
  it("may not carry undeclared arguments", () => {
    const r = rejected(validateArgs(t, { value: "a", extra: "b" }));
    expect(r).toMatchObject({ code: "ERR_TOOL_ARG_UNKNOWN", arg: "extra", rule: "unknown" });
  });
  it("must carry required arguments", () => {
    expect(rejected(validateArgs(t, {}))).toMatchObject({
      code: "ERR_TOOL_ARG_MISSING",
      arg: "value",
      rule: "required",
    });
    expect(rejected(validateArgs(t, { value: null })).code).toBe("ERR_TOOL_ARG_MISSING");
  });
  it("applies defaults and omits optional arguments without one", () => {
    const d = tool('type = "integer"\ndefault = 7');
    expect(validateArgs(d, { value: "a" })).toEqual({ ok: true, args: { value: "a", x: 7 } });
    expect(validateArgs(t, { value: "a" })).toEqual({ ok: true, args: { value: "a" } });
  });
  it("returns a frozen object", () => {
    const r = validateArgs(t, { value: "a" });
    expect(r.ok && Object.isFrozen(r.args)).toBe(true);
  });
  it("throws on a malformed deployment scope (a configuration fault)", () => {
    expect(() => validateArgs(t, { value: "a" }, { scope: { allowed_cidrs: ["nope"] } })).toThrow(
      /deployment scope/,
    );
  });
});

describe("string", () => {
  it("accepts and NFKC-normalises", () => {
    expect(value(check('type = "string"', "ｈｅｌｌｏ　world"))).toBe("hello world");
  });
  it("rejects non-strings", () => {
    expect(rejected(check('type = "string"', 5))).toMatchObject({
      code: "ERR_TOOL_ARG_TYPE",
      arg: "x",
      rule: "type",
    });
  });
  it("allows empty only when optional", () => {
    expect(value(check('type = "string"', ""))).toBe("");
    expect(rejected(validateArgs(tool('type = "string"'), { value: "" })).code).toBe("ERR_TOOL_ARG_FORMAT");
  });
  it("enforces pattern and max_length", () => {
    expect(rejected(check('type = "string"\npattern = "^[a-z]+$"', "abc1"))).toMatchObject({
      code: "ERR_TOOL_ARG_PATTERN",
      rule: "pattern",
    });
    expect(rejected(check('type = "string"\nmax_length = 3', "abcd"))).toMatchObject({
      code: "ERR_TOOL_ARG_TOO_LONG",
      rule: "too-long",
    });
  });
  it("rejects lone surrogates", () => {
    expect(rejected(check('type = "string"', "a\ud800b")).code).toBe("ERR_TOOL_ARG_INVISIBLE");
  });
});

describe("numbers", () => {
  it("integer: accepts numbers and digit strings (full-width digits normalise)", () => {
    expect(value(check('type = "integer"', 42))).toBe(42);
    expect(value(check('type = "integer"', "１２"))).toBe(12);
  });
  it("integer: rejects fractions, unsafe values and junk", () => {
    for (const bad of [1.5, "1.5", "0x10", "1e3", 2 ** 60, true, "", " 1"]) {
      expect(rejected(check('type = "integer"', bad)).code).toBe("ERR_TOOL_ARG_TYPE");
    }
  });
  it("integer: bounds reject, clamp clamps", () => {
    expect(rejected(check('type = "integer"\nmin = 1\nmax = 10', 0))).toMatchObject({
      code: "ERR_TOOL_ARG_RANGE",
      rule: "min",
    });
    expect(rejected(check('type = "integer"\nmin = 1\nmax = 10', 11))).toMatchObject({
      code: "ERR_TOOL_ARG_RANGE",
      rule: "max",
    });
    expect(value(check('type = "integer"\nmin = 1\nmax = 10\nclamp = true', 99))).toBe(10);
    expect(value(check('type = "integer"\nmin = 1\nmax = 10\nclamp = true', -5))).toBe(1);
  });
  it("number: finite decimals only", () => {
    expect(value(check('type = "number"', "2.5"))).toBe(2.5);
    expect(value(check('type = "number"\nmax = 1\nclamp = true', 3))).toBe(1);
    for (const bad of ["NaN", "Infinity", "1e999", Number.NaN, "1,5"]) {
      expect(rejected(check('type = "number"', bad)).code).toBe("ERR_TOOL_ARG_TYPE");
    }
  });
  it("port: 1-65535", () => {
    expect(value(check('type = "port"', "443"))).toBe(443);
    expect(rejected(check('type = "port"', 0))).toMatchObject({ code: "ERR_TOOL_ARG_RANGE", rule: "port" });
    expect(rejected(check('type = "port"', 65536)).code).toBe("ERR_TOOL_ARG_RANGE");
  });
  it("boolean: true/false only", () => {
    expect(value(check('type = "boolean"', "true"))).toBe(true);
    expect(value(check('type = "boolean"', false))).toBe(false);
    for (const bad of ["yes", 1, "TRUE"])
      expect(rejected(check('type = "boolean"', bad)).code).toBe("ERR_TOOL_ARG_TYPE");
  });
});

describe("enum", () => {
  const spec = 'type = "enum"\nallowed = ["GET", "POST"]';
  it("matches exactly (no case folding, no trimming)", () => {
    expect(value(check(spec, "GET"))).toBe("GET");
    for (const bad of ["get", "GET ", "GE"]) {
      expect(rejected(check(spec, bad))).toMatchObject({ code: "ERR_TOOL_ARG_ENUM", rule: "allowed" });
    }
  });
});

describe("network types", () => {
  it("ip_address", () => {
    expect(value(check('type = "ip_address"', "192.0.2.1"))).toBe("192.0.2.1");
    expect(value(check('type = "ip_address"', "2001:db8::1"))).toBe("2001:db8::1");
    for (const bad of [
      "256.1.1.1",
      "010.0.0.1",
      "1.2.3",
      "0x7f.0.0.1",
      "fe80::1%eth0",
      "1:2:3:4:5:6:7:8:9",
    ]) {
      expect(rejected(check('type = "ip_address"', bad)).code).toMatch(/ERR_TOOL_ARG_(FORMAT|METACHAR)/);
    }
  });
  it("cidr", () => {
    expect(value(check('type = "cidr"', "10.0.0.0/8"))).toBe("10.0.0.0/8");
    for (const bad of ["10.0.0.0/33", "10.0.0.0", "10.0.0.0/08", "::/129"]) {
      expect(rejected(check('type = "cidr"', bad))).toMatchObject({
        code: "ERR_TOOL_ARG_FORMAT",
        rule: "cidr",
      });
    }
  });
  it("scope_target rejects punycode, numeric TLDs and slashes outside CIDR", () => {
    const s = 'type = "scope_target"';
    expect(rejected(check(s, "xn--80ak6aa92e.com")).rule).toBe("hostname-punycode");
    expect(rejected(check(s, "10.0.1.999")).rule).toBe("hostname-numeric");
    expect(rejected(check(s, "example.com/path")).rule).toBe("cidr");
    expect(rejected(check(s, "-oG.example.com")).code).toBe("ERR_TOOL_ARG_FORMAT");
  });
  it("url: scheme, userinfo, ascii, backslash", () => {
    const u = 'type = "url"\nschemes = ["https"]';
    expect(value(check(u, "https://api.example.com/a?b=c"))).toBe("https://api.example.com/a?b=c");
    expect(rejected(check(u, "http://api.example.com/"))).toMatchObject({
      code: "ERR_TOOL_ARG_SCHEME",
      rule: "scheme",
    });
    expect(rejected(check(u, "https://api.example.com@evil.example/")).rule).toBe("url-userinfo");
    expect(rejected(check(u, "https:\\\\evil.example\\")).rule).toBe("url-backslash");
    expect(rejected(check(u, "not a url")).code).toBe("ERR_TOOL_ARG_FORMAT");
    expect(rejected(check('type = "url"', "file:///etc/passwd")).code).toBe("ERR_TOOL_ARG_SCHEME");
    expect(rejected(check('type = "url"', "javascript:alert(1)")).code).toBe("ERR_TOOL_ARG_METACHAR");
  });
  it("url: the scope check uses the host a fetch would use", () => {
    const u = 'type = "url"\nscope_check = true';
    const scope = { scope: { allowed_cidrs: ["10.0.0.0/8"], allowed_hosts: ["api.example.com"] } };
    // 0x7f.1 is 127.0.0.1 to a WHATWG URL parser: checked (and returned) as 127.0.0.1.
    expect(rejected(check(u, "http://0x7f.1/", scope)).code).toBe("ERR_TOOL_ARG_OUT_OF_SCOPE");
    expect(value(check(u, "http://0x0a.1/", scope))).toBe("http://10.0.0.1/");
    expect(value(check(u, "https://API.example.com/", scope))).toBe("https://api.example.com/");
  });
});

describe("deployment scope", () => {
  const s = 'type = "scope_target"';
  const scope = {
    allowed_cidrs: ["10.0.0.0/16"],
    allowed_hosts: ["*.example.com"],
    denied_cidrs: ["10.0.9.0/24"],
    denied_hosts: ["db.example.com"],
  };
  it("accepts targets inside it", () => {
    for (const v of ["10.0.1.1", "10.0.2.0/24", "app.example.com"])
      expect(value(check(s, v, { scope }))).toBe(v);
  });
  it("rejects targets outside it or denied", () => {
    for (const v of [
      "10.1.0.1",
      "10.0.0.0/8",
      "10.0.9.7",
      "10.0.8.0/23",
      "db.example.com",
      "example.com",
      "evil.com",
    ]) {
      expect(rejected(check(s, v, { scope }))).toMatchObject({
        code: "ERR_TOOL_ARG_OUT_OF_SCOPE",
        rule: "scope",
        arg: "x",
      });
    }
  });
  it("checks IPv4-mapped IPv6 as the IPv4 address", () => {
    expect(rejected(check(s, "::ffff:10.0.9.7", { scope })).code).toBe("ERR_TOOL_ARG_OUT_OF_SCOPE");
    expect(value(check(s, "::ffff:10.0.1.7", { scope }))).toBe("::ffff:10.0.1.7");
  });
  it("fails closed when no scope is configured", () => {
    const r = validateArgs(tool(s), { value: "v", x: "10.0.0.1" });
    expect(rejected(r)).toMatchObject({ code: "ERR_TOOL_ARG_OUT_OF_SCOPE", rule: "no-scope" });
  });
  it("applies the contract's own scope and the deployment scope together", () => {
    const t = tool(s, '[scope]\nallowed_cidrs = ["10.0.0.0/8"]\n');
    expect(validateArgs(t, { value: "v", x: "10.5.0.1" }).ok).toBe(true);
    expect(
      rejected(validateArgs(t, { value: "v", x: "10.5.0.1" }, { scope: { allowed_cidrs: ["10.0.0.0/16"] } }))
        .code,
    ).toBe("ERR_TOOL_ARG_OUT_OF_SCOPE");
    expect(rejected(validateArgs(t, { value: "v", x: "192.0.2.1" }, { unrestrictedScope: true })).code).toBe(
      "ERR_TOOL_ARG_OUT_OF_SCOPE",
    );
  });
  it("re-checks a default target against the scope", () => {
    const t = tool('type = "scope_target"\ndefault = "10.9.9.9"');
    expect(rejected(validateArgs(t, { value: "v" }, { scope })).code).toBe("ERR_TOOL_ARG_OUT_OF_SCOPE");
  });
});

describe("duration and regex_match", () => {
  it("duration", () => {
    for (const ok of ["30", "5m", "1h30m", "45s", "500ms", "2h"])
      expect(value(check('type = "duration"', ok))).toBe(ok);
    for (const bad of ["5 m", "m", "1d", "-5s", "1.5h"]) {
      expect(rejected(check('type = "duration"', bad))).toMatchObject({
        code: "ERR_TOOL_ARG_FORMAT",
        rule: "duration",
      });
    }
  });
  it("regex_match", () => {
    const spec = 'type = "regex_match"\npattern = "^(exploit|auxiliary)/[a-z_/]+$"';
    expect(value(check(spec, "exploit/unix/ftp"))).toBe("exploit/unix/ftp");
    expect(rejected(check(spec, "post/x")).code).toBe("ERR_TOOL_ARG_PATTERN");
  });
});

describe("path and credential_file", () => {
  it("path accepts relative paths", () => {
    expect(value(check('type = "path"', "wordlists/common.txt"))).toBe("wordlists/common.txt");
    expect(value(check('type = "path"', "./a/b..c"))).toBe("./a/b..c");
  });
  it("path rejects absolute, drive, traversal, encoded and option-like values", () => {
    const cases: [string, string, string][] = [
      ["/etc/passwd", "ERR_TOOL_ARG_ABSOLUTE_PATH", "absolute"],
      ["\\\\server\\share", "ERR_TOOL_ARG_ABSOLUTE_PATH", "absolute"],
      ["C:\\Windows", "ERR_TOOL_ARG_ABSOLUTE_PATH", "drive"],
      ["c:relative", "ERR_TOOL_ARG_ABSOLUTE_PATH", "drive"],
      ["../secret", "ERR_TOOL_ARG_TRAVERSAL", "traversal"],
      ["a/../../b", "ERR_TOOL_ARG_TRAVERSAL", "traversal"],
      ["a\\..\\b", "ERR_TOOL_ARG_TRAVERSAL", "traversal"],
      ["..", "ERR_TOOL_ARG_TRAVERSAL", "traversal"],
      ["%2e%2e/secret", "ERR_TOOL_ARG_TRAVERSAL", "percent-encoding"],
      ["--output=x", "ERR_TOOL_ARG_FORMAT", "option-like"],
      ["", "ERR_TOOL_ARG_FORMAT", "empty"],
    ];
    for (const [v, code, rule] of cases)
      expect(rejected(check('type = "path"', v))).toMatchObject({ code, rule, arg: "x" });
  });
  it("credential_file must exist inside the base directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-cred-"));
    mkdirSync(join(dir, "creds"));
    writeFileSync(join(dir, "creds", "users.txt"), "root\n");
    const outside = mkdtempSync(join(tmpdir(), "warden-out-"));
    writeFileSync(join(outside, "shadow"), "x");
    symlinkSync(join(outside, "shadow"), join(dir, "creds", "link"));
    const spec = 'type = "credential_file"';
    expect(value(check(spec, "creds/users.txt", { baseDir: dir }))).toBe("creds/users.txt");
    expect(rejected(check(spec, "creds/none.txt", { baseDir: dir }))).toMatchObject({
      code: "ERR_TOOL_ARG_FILE",
      rule: "not-found",
    });
    expect(rejected(check(spec, "creds", { baseDir: dir }))).toMatchObject({
      code: "ERR_TOOL_ARG_FILE",
      rule: "not-a-file",
    });
    expect(rejected(check(spec, "creds/link", { baseDir: dir }))).toMatchObject({
      code: "ERR_TOOL_ARG_TRAVERSAL",
      rule: "symlink-escape",
    });
    expect(rejected(check(spec, "/etc/passwd", { baseDir: dir })).code).toBe("ERR_TOOL_ARG_ABSOLUTE_PATH");
  });
});

describe("custom types", () => {
  it("apply their base type and constraints", () => {
    const t = compile(
      manifest('[types.rate]\nbase = "integer"\nmin = 1\nmax = 100\n[args.x]\ntype = "rate"\n'),
    );
    expect(validateArgs(t, { value: "v", x: 50 }).ok).toBe(true);
    expect(rejected(validateArgs(t, { value: "v", x: 500 })).code).toBe("ERR_TOOL_ARG_RANGE");
  });
  it("a string-based custom type still refuses metacharacters, whatever its pattern allows", () => {
    const t = compile(manifest('[types.loose]\nbase = "string"\npattern = ".*"\n[args.x]\ntype = "loose"\n'));
    expect(rejected(validateArgs(t, { value: "v", x: "a;b" })).code).toBe("ERR_TOOL_ARG_METACHAR");
  });
});
