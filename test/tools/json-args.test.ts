// Structured (`json`) arguments: allowed only in [mcp] contracts, validated against their
// pinned schema (strict ajv, nothing outside the schema), bounded, no prototype keys; and
// [mcp] string arguments are screened without the shell metacharacter rule while process
// contracts keep every rule.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledTool,
  compileContract,
  JSON_ARG_LIMITS,
  ToolContractSchema,
  validateArgs,
} from "../../src/tools/index.js";
import { compile, failure, manifest } from "./helpers.js";

const ENTITIES = {
  type: "array",
  items: {
    type: "object",
    properties: {
      name: { type: "string" },
      observations: { type: "array", items: { type: "string" } },
      extra: {},
    },
    required: ["name", "observations"],
    additionalProperties: false,
  },
};

function mcpContract(args: Record<string, unknown>) {
  return compileContract(
    ToolContractSchema.parse({
      tool: { name: "m", version: "1", description: "m" },
      args,
      mcp: { server: "s", tool: "m" },
      output: { format: "json", schema: { type: "object" } },
    }),
  );
}

function mcpTool(args: Record<string, unknown>): CompiledTool {
  const r = mcpContract(args);
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.tool;
}

const tool = mcpTool({
  entities: { type: "json", required: true, schema: ENTITIES },
  note: { type: "string" },
});

const code = (args: unknown) => {
  const r = validateArgs(tool, args);
  return r.ok ? "ok" : r.code;
};

const deep = (n: number): unknown => (n === 0 ? "leaf" : { x: deep(n - 1) });

describe("json arguments at load", () => {
  it("a process contract declaring a json argument is refused", () => {
    const f = failure(manifest('\n[args.obj]\ntype = "json"\n[args.obj.schema]\ntype = "object"\n'));
    expect(f.code).toBe("ERR_TOOL_ARG_JSON_CONTRACT");
  });

  it("an http contract declaring a json argument is refused", () => {
    const r = compileContract(
      ToolContractSchema.parse({
        tool: { name: "h", version: "1", description: "h" },
        args: { obj: { type: "json", schema: { type: "object" } } },
        http: { method: "POST", url: "https://example.com/x" },
        output: { format: "json", schema: { type: "object" } },
      }),
    );
    expect(r.ok ? "ok" : r.code).toBe("ERR_TOOL_ARG_JSON_CONTRACT");
  });

  it.each([
    ["a remote $ref", { $ref: "https://evil.example/schema.json" }],
    ["a relative $ref outside the schema", { type: "object", properties: { a: { $ref: "other.json#/x" } } }],
    ["an $id that rebases references", { $id: "https://evil.example/", type: "object" }],
    ["a meta-schema switch", { $schema: "https://evil.example/meta", type: "object" }],
    ["an unknown keyword (strict mode)", { type: "object", frobnicate: true }],
    ["an unknown format (strict mode)", { type: "string", format: "made-up" }],
    ["an unresolvable internal $ref", { $ref: "#/definitions/missing" }],
  ])("a schema with %s is refused at load", (_what, schema) => {
    const r = mcpContract({ obj: { type: "json", schema } });
    expect(r.ok ? "ok" : r.code).toBe("ERR_TOOL_ARG_JSON_CONTRACT");
  });

  it("a schema pattern with nested unbounded quantifiers (ReDoS) is refused at load", () => {
    const r = mcpContract({ obj: { type: "json", schema: { type: "string", pattern: "(a+)+$" } } });
    expect(r.ok).toBe(false);
  });

  it("json needs a schema, takes no default, and 'schema' is refused on other types", () => {
    expect(mcpContract({ obj: { type: "json" } })).toMatchObject({
      ok: false,
      code: "ERR_TOOL_ARG_JSON_CONTRACT",
    });
    expect(mcpContract({ obj: { type: "json", schema: { type: "string" }, default: "x" } }).ok).toBe(false);
    expect(mcpContract({ s: { type: "string", schema: { type: "string" } } }).ok).toBe(false);
  });

  it("internal references inside the schema compile", () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/definitions/s" } },
      definitions: { s: { type: "string" } },
    };
    const t = mcpTool({ obj: { type: "json", schema } });
    expect(validateArgs(t, { obj: { a: "x" } }).ok).toBe(true);
    expect(validateArgs(t, { obj: { a: 1 } })).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_JSON_SCHEMA" });
  });
});

describe("json argument values", () => {
  it("accepts a schema-valid entities array and returns a fresh copy", () => {
    const input = { entities: [{ name: "a", observations: ["x; y | z $(w)"] }] };
    const r = validateArgs(tool, input);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.args.entities).toEqual(input.entities);
    expect(r.args.entities).not.toBe(input.entities);
  });

  it("a schema violation is refused with ERR_TOOL_ARG_JSON_SCHEMA", () => {
    expect(code({ entities: [{ name: "a" }] })).toBe("ERR_TOOL_ARG_JSON_SCHEMA");
    expect(code({ entities: [{ name: "a", observations: [], smuggled: 1 }] })).toBe(
      "ERR_TOOL_ARG_JSON_SCHEMA",
    );
    expect(code({ entities: "not an array" })).toBe("ERR_TOOL_ARG_JSON_SCHEMA");
  });

  it("an agent smuggling a __proto__ key (as JSON.parse keeps it) is refused", () => {
    const evil = JSON.parse(
      '{"entities":[{"name":"a","observations":[],"extra":{"__proto__":{"admin":true}}}]}',
    );
    expect(code(evil)).toBe("ERR_TOOL_ARG_JSON_UNSAFE_KEY");
    expect(
      code({ entities: [{ name: "a", observations: [], extra: { constructor: { prototype: 1 } } }] }),
    ).toBe("ERR_TOOL_ARG_JSON_UNSAFE_KEY");
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it("two keys that NFKC folds to the same key are refused", () => {
    const extra = { ﬁle: 1, file: 2 };
    expect(code({ entities: [{ name: "a", observations: [], extra }] })).toBe("ERR_TOOL_ARG_JSON_UNSAFE_KEY");
  });

  it("an oversized array, a too-deep object, too many keys and too many bytes are refused with codes", () => {
    const many = Array.from({ length: JSON_ARG_LIMITS.maxItems + 1 }, () => ({
      name: "a",
      observations: [],
    }));
    expect(code({ entities: many })).toBe("ERR_TOOL_ARG_JSON_TOO_MANY");
    const extra = deep(JSON_ARG_LIMITS.maxDepth + 1);
    expect(code({ entities: [{ name: "a", observations: [], extra }] })).toBe("ERR_TOOL_ARG_JSON_TOO_DEEP");
    const wide = Object.fromEntries(
      Array.from({ length: JSON_ARG_LIMITS.maxKeys + 1 }, (_, i) => [`k${i}`, i]),
    );
    expect(code({ entities: [{ name: "a", observations: [], extra: wide }] })).toBe(
      "ERR_TOOL_ARG_JSON_TOO_MANY",
    );
    const big = Array.from({ length: 8 }, () => "x".repeat(JSON_ARG_LIMITS.maxBytes / 8));
    expect(code({ entities: [{ name: "a", observations: big }] })).toBe("ERR_TOOL_ARG_JSON_TOO_LARGE");
  });

  it("a value of many small nodes (a million zeros in bounded arrays) is refused by the byte budget", () => {
    const anyTool = mcpTool({ v: { type: "json", required: true, schema: {} } });
    const v = Array.from({ length: JSON_ARG_LIMITS.maxItems }, () =>
      new Array(JSON_ARG_LIMITS.maxItems).fill(0),
    );
    expect(validateArgs(anyTool, { v })).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_JSON_TOO_LARGE" });
  });

  it("control, bidi and invisible characters in nested strings or keys are refused", () => {
    expect(code({ entities: [{ name: "a\u202eb", observations: [] }] })).toBe("ERR_TOOL_ARG_INVISIBLE");
    expect(code({ entities: [{ name: "a", observations: ["x\u0000"] }] })).toBe("ERR_TOOL_ARG_INVISIBLE");
    expect(code({ entities: [{ name: "a", observations: [], extra: { "k\u200b": 1 } }] })).toBe(
      "ERR_TOOL_ARG_INVISIBLE",
    );
  });

  it("non-JSON values (functions, class instances, non-finite numbers) are refused", () => {
    expect(code({ entities: [{ name: "a", observations: [], extra: () => 1 }] })).toBe("ERR_TOOL_ARG_TYPE");
    expect(code({ entities: [{ name: "a", observations: [], extra: new Date() }] })).toBe(
      "ERR_TOOL_ARG_TYPE",
    );
    expect(code({ entities: [{ name: "a", observations: [], extra: Number.NaN }] })).toBe(
      "ERR_TOOL_ARG_TYPE",
    );
  });

  it("property: any JSON value is either accepted as an equal-shaped copy or refused with a code", () => {
    const anyTool = mcpTool({ v: { type: "json", required: true, schema: {} } });
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 20 }), (v) => {
        const r = validateArgs(anyTool, { v });
        if (r.ok) expect(JSON.stringify(r.args.v)).toBe(JSON.stringify(v).normalize("NFKC"));
        else expect(r.code).toMatch(/^ERR_TOOL_ARG_/);
      }),
      { numRuns: 300 },
    );
  });
});

describe("text rules by backend", () => {
  it("[mcp] string arguments may carry shell metacharacters, line feeds and tabs, but no other control or bidi character", () => {
    expect(code({ entities: [], note: "a; b | c $(d) `e` <f>" })).toBe("ok");
    expect(code({ entities: [], note: "line one\n\tline two\n" })).toBe("ok");
    for (const c of ["\r", "\u0000", "\u001b[31m", "\u0085", "\u2028"]) {
      expect(code({ entities: [], note: `a${c}b` })).toBe("ERR_TOOL_ARG_INVISIBLE");
    }
    expect(code({ entities: [], note: "a\u202eb" })).toBe("ERR_TOOL_ARG_INVISIBLE");
    expect(code({ entities: [], note: "x".repeat(5000) })).toBe("ERR_TOOL_ARG_TOO_LONG");
  });

  it("a process contract still refuses every shell metacharacter in a string argument", () => {
    const t = compile(manifest());
    for (const v of ["a;b", "a|b", "$(id)", "`id`", "a>b", "a&b", "a\nb"]) {
      const r = validateArgs(t, { value: v });
      expect(r.ok ? "ok" : r.code).toMatch(/^ERR_TOOL_ARG_(METACHAR|INVISIBLE)$/);
    }
    expect(validateArgs(t, { value: "a;b" })).toMatchObject({ ok: false, code: "ERR_TOOL_ARG_METACHAR" });
  });
});
