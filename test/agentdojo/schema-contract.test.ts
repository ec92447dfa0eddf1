// contractFromSchema (src/tools): a function-calling tool's JSON Schema as a Warden
// contract. Properties: every derived contract compiles; a value of the declared type is
// accepted, a value of another type or an undeclared argument is refused; a required
// argument cannot be left out.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileContract, contractFromSchema, usableToolName, validateArgs } from "../../src/tools/index.js";

type Kind =
  | "string"
  | "integer"
  | "number"
  | "boolean"
  | "enum"
  | "array"
  | "nullable-string"
  | "nullable-integer";

const schemaOf = (k: Kind): Record<string, unknown> => {
  switch (k) {
    case "enum":
      return { type: "string", enum: ["a", "b"] };
    case "array":
      return { type: "array", items: { type: "string" } };
    case "nullable-string":
      return { anyOf: [{ type: "string" }, { type: "null" }], default: null };
    case "nullable-integer":
      return { anyOf: [{ type: "integer" }, { type: "null" }], default: null };
    default:
      return { type: k, title: "T", description: "d" };
  }
};
const good = (k: Kind): unknown =>
  ({
    string: "x y",
    integer: 7,
    number: 1.5,
    boolean: true,
    enum: "a",
    array: ["p", "q"],
    "nullable-string": "v",
    "nullable-integer": 3,
  })[k];
const bad = (k: Kind): unknown =>
  ({
    string: 5,
    integer: "seven",
    number: "x",
    boolean: "yes",
    enum: "c",
    array: "p",
    "nullable-string": 5,
    "nullable-integer": 2.5,
  })[k];

const KINDS: Kind[] = [
  "string",
  "integer",
  "number",
  "boolean",
  "enum",
  "array",
  "nullable-string",
  "nullable-integer",
];
const argName = fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/);
const props = fc.dictionary(argName, fc.constantFrom(...KINDS), { minKeys: 1, maxKeys: 6 });

function derive(p: Record<string, Kind>, required: string[]) {
  const properties = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, schemaOf(v)]));
  const { contract, unsupported } = contractFromSchema(
    { name: "some_tool", description: "A tool.", parameters: { type: "object", properties, required } },
    { server: "sim" },
  );
  const c = compileContract(contract);
  if (!c.ok) throw new Error(`${c.code}: ${c.message}`);
  return { tool: c.tool, unsupported };
}

describe("contractFromSchema", () => {
  it("every derived contract compiles and accepts values of the declared types", () => {
    fc.assert(
      fc.property(props, (p) => {
        const { tool, unsupported } = derive(p, Object.keys(p));
        expect(unsupported).toEqual([]);
        const args = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, good(v)]));
        expect(validateArgs(tool, args).ok).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("a value of another type is refused", () => {
    fc.assert(
      fc.property(props, fc.nat(), (p, pick) => {
        const names = Object.keys(p);
        const victim = names[pick % names.length]!;
        const { tool } = derive(p, []);
        const args = Object.fromEntries(names.map((k) => [k, k === victim ? bad(p[k]!) : good(p[k]!)]));
        expect(validateArgs(tool, args).ok).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it("an argument the schema does not declare is refused, and a required one cannot be left out", () => {
    fc.assert(
      fc.property(props, (p) => {
        const names = Object.keys(p);
        const { tool } = derive(p, names);
        const args = Object.fromEntries(names.map((k) => [k, good(p[k]!)]));
        expect(validateArgs(tool, { ...args, zz_extra_arg: "x" }).ok).toBe(false);
        const { [names[0]!]: _dropped, ...rest } = args;
        expect(validateArgs(tool, rest).ok).toBe(false);
      }),
      { numRuns: 100 },
    );
  });

  it("a nested model behind a local $ref is validated against the tool's $defs", () => {
    const { contract, unsupported } = contractFromSchema(
      {
        name: "book",
        description: "Books a trip.",
        parameters: {
          type: "object",
          $defs: { Leg: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
          properties: {
            legs: { type: "array", items: { $ref: "#/$defs/Leg" } },
            first: { anyOf: [{ $ref: "#/$defs/Leg" }, { type: "null" }], default: null },
          },
          required: ["legs"],
        },
      },
      { server: "sim" },
    );
    expect(unsupported).toEqual([]);
    const c = compileContract(contract);
    if (!c.ok) throw new Error(c.message);
    expect(validateArgs(c.tool, { legs: [{ city: "Rome" }], first: { city: "Oslo" } }).ok).toBe(true);
    expect(validateArgs(c.tool, { legs: [{ town: "Rome" }] }).ok).toBe(false);
    expect(validateArgs(c.tool, { legs: [], first: { town: "Oslo" } }).ok).toBe(false);
  });

  it("what the format cannot express is named and left out (so passing it is refused)", () => {
    const { contract, unsupported } = contractFromSchema(
      {
        name: "odd",
        description: null,
        parameters: {
          type: "object",
          properties: {
            "bad name": { type: "string" },
            either: { anyOf: [{ type: "string" }, { type: "integer" }] },
            ok: { type: "string" },
          },
        },
      },
      { server: "sim" },
    );
    expect(unsupported.sort()).toEqual(["bad name", "either"]);
    expect(Object.keys(contract.args)).toEqual(["ok"]);
    expect(contract.tool.description).toBe("odd");
    expect(usableToolName("odd")).toBe(true);
    expect(usableToolName("has space")).toBe(false);
  });
});
