import { describe, expect, it } from "vitest";
import { describeInvocation, prepareInvocation, resolveHttpRequest } from "../../src/tools/index.js";
import { compile, failure } from "./helpers.js";
import { argv, ok } from "./invocation-helpers.js";

const execTool = (command: string, args = "") =>
  `[tool]\nname = "e"\nversion = "1"\nbinary = "prog"\ndescription = "d"\n${args}\n${command}\n[output]\nformat = "text"\n[output.schema]\ntype = "object"\n`;
const A =
  '[args.a]\ntype = "string"\n[args.n]\ntype = "integer"\ndefault = 0\n[args.m]\ntype = "enum"\nallowed = ["x", "y"]\ndefault = "x"\n';

describe("exec templates", () => {
  it("an exec array substitutes each value into its own element; quoted-empty is kept", () => {
    const t = compile(
      execTool(
        '[command]\nexec = ["prog", "--a={a}", "{a}", "{_m}"]\n[command.mappings.m]\nx = ["-X"]\ny = "-Y --why"',
        A,
      ),
    );
    expect(argv(t, { a: "v w" })).toEqual(["prog", "--a=v w", "v w", "-X"]);
    expect(argv(t, { m: "y" })).toEqual(["prog", "--a=", "-Y", "--why"]);
    const q = compile(execTool("[command]\ntemplate = \"prog '{a}' {a}\"", A));
    expect(argv(q, {})).toEqual(["prog", ""]);
  });
  it("conditionals: and/or, parentheses and literals", () => {
    const t = compile(
      execTool(
        `[command]\ntemplate = "prog {_c}"\n[command.conditionals.c]\nwhen = "(a == 'go' or n != 0) and m == \\"y\\""\nexec = ["--n", "{n}"]`,
        A,
      ),
    );
    expect(argv(t, { a: "go", m: "y" })).toEqual(["prog", "--n", "0"]);
    expect(argv(t, { n: 3, m: "y" })).toEqual(["prog", "--n", "3"]);
    expect(argv(t, { a: "go", m: "x" })).toEqual(["prog"]);
    expect(argv(t, { a: "no", m: "y" })).toEqual(["prog"]);
  });
  const bad: [string, string, string][] = [
    ["an unknown placeholder", '[command]\ntemplate = "prog {nope}"', "ERR_TOOL_TEMPLATE_INVALID"],
    [
      "a secret in a command line",
      '[command]\ntemplate = "prog {_secret:token}"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    ["an unclosed brace", '[command]\ntemplate = "prog {a"', "ERR_TOOL_TEMPLATE_INVALID"],
    ["an unterminated quote", '[command]\ntemplate = "prog \'a"', "ERR_TOOL_TEMPLATE_INVALID"],
    ["a program that is not tool.binary", '[command]\ntemplate = "sh -c {a}"', "ERR_TOOL_TEMPLATE_INVALID"],
    ["a placeholder as the program", '[command]\nexec = ["{a}"]', "ERR_TOOL_TEMPLATE_INVALID"],
    ["both exec and template", '[command]\ntemplate = "prog"\nexec = ["prog"]', "ERR_TOOL_MANIFEST_INVALID"],
    [
      "a mapping inside a larger token",
      '[command]\ntemplate = "prog --x={_m}"\n[command.mappings.m]\nx = "1"\ny = "2"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    [
      "a quoted mapping",
      '[command]\ntemplate = "prog \'{_m}\'"\n[command.mappings.m]\nx = "1"\ny = "2"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    [
      "a mapping missing an allowed value",
      '[command]\ntemplate = "prog {_m}"\n[command.mappings.m]\nx = "1"',
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    [
      "a mapping for a value not allowed",
      '[command]\ntemplate = "prog {_m}"\n[command.mappings.m]\nx = "1"\ny = "2"\nz = "3"',
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    [
      "a mapping on a non-enum",
      '[command]\ntemplate = "prog {_a}"\n[command.mappings.a]\nx = "1"',
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    [
      "a placeholder in a mapping value",
      '[command]\ntemplate = "prog {_m}"\n[command.mappings.m]\nx = "{a}"\ny = "2"',
      "ERR_TOOL_MANIFEST_INVALID",
    ],
    [
      "an unused mapping",
      '[command]\ntemplate = "prog"\n[command.mappings.m]\nx = "1"\ny = "2"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    [
      "an unused conditional",
      '[command]\ntemplate = "prog"\n[command.conditionals.c]\nwhen = "a != \'\'"\ntemplate = "-a"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    [
      "a conditional that nests a fragment",
      '[command]\ntemplate = "prog {_c}"\n[command.mappings.m]\nx = "1"\ny = "2"\n[command.conditionals.c]\nwhen = "a != \'\'"\ntemplate = "{_m}"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    [
      "a bad when",
      '[command]\ntemplate = "prog {_c}"\n[command.conditionals.c]\nwhen = "a = 1"\ntemplate = "-a"',
      "ERR_TOOL_CONDITION_INVALID",
    ],
    [
      "a when on an unknown variable",
      '[command]\ntemplate = "prog {_c}"\n[command.conditionals.c]\nwhen = "zz == 1"\ntemplate = "-a"',
      "ERR_TOOL_CONDITION_INVALID",
    ],
    [
      "a default that shadows an argument",
      '[command]\ntemplate = "prog {a}"\n[command.defaults]\na = "1"',
      "ERR_TOOL_TEMPLATE_INVALID",
    ],
    ["a line break in a template", '[command]\ntemplate = "prog\\n{a}"', "ERR_TOOL_TEMPLATE_INVALID"],
  ];
  it.each(bad)("rejects %s at load time", (_n, command, code) => {
    expect(failure(execTool(command, A)).code).toBe(code);
  });
});

const httpTool = (
  http: string,
  args = '[args.id]\ntype = "string"\nrequired = true\n[args.n]\ntype = "integer"\ndefault = 1\n',
) =>
  `[tool]\nname = "h"\nversion = "1"\ndescription = "d"\n${args}\n[http]\n${http}\n[output]\nformat = "json"\n[output.schema]\ntype = "object"\n`;

describe("http invocations", () => {
  const t = compile(
    httpTool(
      `method = "POST"\nurl = "https://api.example.com/v1/items/{id}?n={n}&key={_secret:api_key}"\nheaders = { "Authorization" = "Bearer {_secret:token}", "X-Item" = "{id}" }\nbody_template = '{"id": "{id}", "count": "{n}", "note": "item {id}", "auth": "{_secret:token}", "fixed": [1, true, null]}'\nsuccess_status = [200, 201]`,
    ),
  );
  const http = (args: unknown) => {
    const inv = ok(prepareInvocation(t, args));
    if (inv.kind !== "http") throw new Error("http expected");
    return inv;
  };
  it("URL-encodes path and query values and JSON-encodes body values", () => {
    const inv = http({ id: 'a b/c?d#e=f"g\\h', n: 2 });
    const r = resolveHttpRequest(inv, { TOOLCLAD_SECRET_API_KEY: "k&y=1", TOOLCLAD_SECRET_TOKEN: 'tok"en' });
    if (!r.ok) throw new Error(r.message);
    expect(r.request.url).toBe(
      "https://api.example.com/v1/items/a%20b%2Fc%3Fd%23e%3Df%22g%5Ch?n=2&key=k%26y%3D1",
    );
    expect(new URL(r.request.url).pathname).toBe("/v1/items/a%20b%2Fc%3Fd%23e%3Df%22g%5Ch");
    const body = JSON.parse(r.request.body ?? "");
    expect(body).toEqual({
      id: 'a b/c?d#e=f"g\\h',
      count: 2,
      note: 'item a b/c?d#e=f"g\\h',
      auth: 'tok"en',
      fixed: [1, true, null],
    });
    expect(r.request.headers).toEqual({ Authorization: 'Bearer tok"en', "X-Item": 'a b/c?d#e=f"g\\h' });
    expect(r.request.method).toBe("POST");
    expect(inv.successStatus).toEqual([200, 201]);
  });
  it("a body value cannot break out of its JSON string", () => {
    const inv = http({ id: '", "admin": true, "x": "' });
    const r = resolveHttpRequest(inv, { TOOLCLAD_SECRET_API_KEY: "k", TOOLCLAD_SECRET_TOKEN: "t" });
    if (!r.ok) throw new Error(r.message);
    const body = JSON.parse(r.request.body ?? "");
    expect(Object.keys(body).sort()).toEqual(["auth", "count", "fixed", "id", "note"]);
    expect(body.admin).toBeUndefined();
  });
  it("refuses a dot segment in the URL path", () => {
    for (const id of ["..", "."]) {
      expect(prepareInvocation(t, { id })).toMatchObject({
        ok: false,
        code: "ERR_TOOL_ARG_TRAVERSAL",
        arg: "id",
        rule: "url-dot-segment",
      });
    }
  });
  it("resolves secrets only at execution time and reports a missing one by name", () => {
    const inv = http({ id: "1" });
    expect(inv.secrets).toEqual(["api_key", "token"]);
    expect(JSON.stringify(describeInvocation(inv))).toContain("{_secret:token}");
    expect(resolveHttpRequest(inv, { TOOLCLAD_SECRET_TOKEN: "t" })).toMatchObject({
      ok: false,
      code: "ERR_TOOL_SECRET_MISSING",
      secret: "api_key",
    });
  });
  it("refuses a secret that would split a header", () => {
    const r = resolveHttpRequest(http({ id: "1" }), {
      TOOLCLAD_SECRET_API_KEY: "k",
      TOOLCLAD_SECRET_TOKEN: "t\r\nX-Evil: 1",
    });
    expect(r).toMatchObject({ ok: false, code: "ERR_TOOL_SECRET_INVALID", secret: "token" });
  });
  const bad: [string, string][] = [
    ["a placeholder in the host", 'method = "GET"\nurl = "https://{id}.example.com/"'],
    ["a placeholder for the whole URL", 'method = "GET"\nurl = "{id}"'],
    ["a non-http scheme", 'method = "GET"\nurl = "file:///etc/{id}"'],
    ["a body on GET", 'method = "GET"\nurl = "https://a.example/"\nbody_template = \'{"a": 1}\''],
    [
      "a body that is not JSON",
      'method = "POST"\nurl = "https://a.example/"\nbody_template = \'{"a": {id}}\'',
    ],
    [
      "a placeholder in a body key",
      'method = "POST"\nurl = "https://a.example/"\nbody_template = \'{"{id}": 1}\'',
    ],
    ["an unknown placeholder", 'method = "GET"\nurl = "https://a.example/{nope}"'],
  ];
  it.each(bad)("rejects %s at load time", (_n, http) => {
    const f = failure(httpTool(http));
    expect(f.code).toMatch(/ERR_TOOL_(TEMPLATE|MANIFEST)_INVALID/);
    expect(f.path?.[0]).toBe("http");
  });
});

describe("mcp invocations", () => {
  const mcp = (extra: string) =>
    `[tool]\nname = "m"\nversion = "1"\ndescription = "d"\n[args.repo]\ntype = "string"\nrequired = true\npattern = "^[a-z]+/[a-z]+$"\n[args.title]\ntype = "string"\nrequired = true\n[args.labels]\ntype = "string"\n[mcp]\nserver = "github"\ntool = "create_issue"\n${extra}\n[output]\nformat = "json"\n[output.schema]\ntype = "object"\n`;
  it("maps argument names onto the upstream fields; unmapped names pass through", () => {
    const t = compile(mcp('[mcp.field_map]\nrepo = "repository"'));
    const inv = ok(prepareInvocation(t, { repo: "acme/app", title: "Bug" }));
    expect(inv).toEqual({
      kind: "mcp",
      tool: "m",
      server: "github",
      upstreamTool: "create_issue",
      arguments: { repository: "acme/app", title: "Bug" },
      timeoutMs: 60_000,
    });
  });
  it("rejects a field_map for an undeclared argument and two arguments on one field", () => {
    expect(failure(mcp('[mcp.field_map]\nnope = "x"')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
    expect(failure(mcp('[mcp.field_map]\nrepo = "title"')).code).toBe("ERR_TOOL_MANIFEST_INVALID");
  });
});
