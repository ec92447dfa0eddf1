// The contract's parameters as zod: the framework's first check must never be looser than
// the model's JSON Schema of the same contract (checked with ajv over generated contracts
// and values), and the Gate still refuses what the contract refuses.
import { Ajv2020 } from "ajv/dist/2020.js";
import ajvFormats from "ajv-formats";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withoutNulls, zodOfTool } from "../../src/adapters/index.js";
import { parseContract, toModelTool } from "../../src/tools/index.js";

const ARG_KINDS = [
  'type = "string"\nmax_length = 12',
  'type = "string"\npattern = "^[a-z]{1,5}$"',
  'type = "integer"\nmin = 1\nmax = 9',
  'type = "number"',
  'type = "boolean"',
  'type = "enum"\nallowed = ["red", "green"]',
];

function contractText(args: { kind: number; required: boolean }[]): string {
  const sections = args
    .map((a, i) => `[args.a${i}]\n${ARG_KINDS[a.kind]}\nrequired = ${a.required}\nposition = ${i + 1}\n`)
    .join("\n");
  const argv = args.map((_, i) => `"{a${i}}"`).join(", ");
  return `[tool]\nname = "gen_tool"\nversion = "1.0.0"\ndescription = "generated"\n\n${sections}\n[command]\nexec = ["echo", ${argv}]\n\n[output]\nformat = "text"\nschema = { type = "object" }\n`;
}

const argsArb = fc.array(fc.record({ kind: fc.nat({ max: ARG_KINDS.length - 1 }), required: fc.boolean() }), {
  minLength: 1,
  maxLength: 4,
});
const valueArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer({ min: -5, max: 20 }),
  fc.double({ noNaN: true, min: -5, max: 20 }),
  fc.boolean(),
  fc.constantFrom("red", "green", "blue", "abc", null),
);

describe("contract parameters as zod", () => {
  it("zod never accepts an argument object the contract's JSON Schema refuses", () => {
    const ajv = new Ajv2020({ strict: false });
    ajvFormats.default(ajv);
    fc.assert(
      fc.property(
        argsArb,
        fc.dictionary(fc.constantFrom("a0", "a1", "a2", "a3", "extra"), valueArb),
        (args, input) => {
          const parsed = parseContract(contractText(args));
          if (!parsed.ok) throw new Error(parsed.message);
          const model = toModelTool(parsed.tool);
          const zodOk = zodOfTool(model).safeParse(input).success;
          const jsonOk = ajv.validate(model.inputSchema, input);
          if (zodOk) expect(jsonOk).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the nullable form refuses nothing more than null for an optional argument, which is then dropped", () => {
    const parsed = parseContract(
      contractText([
        { kind: 0, required: true },
        { kind: 2, required: false },
      ]),
    );
    if (!parsed.ok) throw new Error(parsed.message);
    const model = toModelTool(parsed.tool);
    const nullable = zodOfTool(model, { optional: "nullable" });
    expect(nullable.safeParse({ a0: "x", a1: null }).success).toBe(true);
    expect(nullable.safeParse({ a0: null, a1: 3 }).success).toBe(false);
    expect(withoutNulls(model, { a0: "x", a1: null })).toEqual({ a0: "x" });
    expect(withoutNulls(model, { a0: null })).toEqual({ a0: null }); // a required null stays, for the Gate to refuse
  });

  it("unknown members are refused (the contract is an allow-list of arguments)", () => {
    const parsed = parseContract(contractText([{ kind: 0, required: true }]));
    if (!parsed.ok) throw new Error(parsed.message);
    expect(zodOfTool(toModelTool(parsed.tool)).safeParse({ a0: "x", command: "rm -rf /" }).success).toBe(
      false,
    );
  });
});
