// Issue 17 finding 4, written as the attack: without a strict contract an agent sends a
// value of another JSON type (an array, a numeric string, a boolean, ...) so that a
// numeric or string rule cannot read it, and the call slips past the rule. Every rule
// that cannot be evaluated must deny (RULE_NOT_EVALUABLE / CEDAR_EVALUATION_ERROR).
import { describe, expect, it } from "vitest";
import { loadPolicyBundle, type PolicyBundle, type PolicyOutcome } from "../../src/policy/index.js";
import { validateArgs } from "../../src/tools/index.js";
import { compile, manifest } from "../tools/helpers.js";
import { mkInput } from "./helpers.js";

function yaml(body: string): PolicyBundle {
  return loadPolicyBundle({ yaml: [{ name: "p.yaml", text: `name: t\nrules:\n${body}` }] });
}

const pay = (amount: unknown): ReturnType<typeof mkInput> =>
  mkInput("payment", "send", { amount, memo: "m" });

function expectNotEvaluable(r: PolicyOutcome): void {
  expect(r.decision).toBe("deny");
  expect(r.reasonCodes).toEqual(["RULE_NOT_EVALUABLE"]);
  expect(r.modify).toBeUndefined();
}

/** Values an agent can send instead of the number 50000; none of them is a JSON number. */
const DISGUISED = [
  [50000],
  "50000",
  "5e4",
  "50000.0000000001",
  " 5000 ",
  "0x1388",
  "5_000",
  "Infinity",
  "-Infinity",
  "NaN",
  "1e400",
  "-0",
  true,
  false,
  null,
  { value: 50000 },
  [],
  "",
];

describe("type confusion against YAML numeric rules", () => {
  const deny = yaml(`
  - {id: too-big, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {gt: 1000}}}, decision: deny, reason: r}
  - {id: pay, name: x, priority: 20, match: {toolClass: payment}, decision: allow, reason: r}
`);

  it("an array [50000] does not slip under amount > 1000", () => {
    expectNotEvaluable(deny.evaluate(pay([50000])));
  });

  it("numeric strings, NaN-ish, hex, padded, underscored, boolean, null and object amounts all deny", () => {
    for (const v of DISGUISED) {
      const r = deny.evaluate(pay(v));
      expect(r.reasonCodes, JSON.stringify(v)).toEqual(["RULE_NOT_EVALUABLE"]);
      expect(r.decision).toBe("deny");
    }
  });

  it("real numbers still compare: 50000 and 1e308 deny by the rule, 10 and -0 are allowed, absent is no match", () => {
    expect(deny.evaluate(pay(50000)).reasonCodes).toEqual(["RULE:too-big"]);
    expect(deny.evaluate(pay(1e308)).reasonCodes).toEqual(["RULE:too-big"]);
    expect(deny.evaluate(pay(10)).decision).toBe("allow");
    expect(deny.evaluate(pay(-0)).decision).toBe("allow");
    expect(deny.evaluate(mkInput("payment", "send", { memo: "m" })).decision).toBe("allow");
  });

  it("negative zero is zero: it neither trips nor dodges `amount < 0`", () => {
    const b = yaml(`
  - {id: negative, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {lt: 0}}}, decision: deny, reason: r}
  - {id: pay, name: x, priority: 20, match: {toolClass: payment, parameters: {amount: {gte: 0}}}, decision: allow, reason: r}
`);
    expect(b.evaluate(pay(-0)).decision).toBe("allow");
    expect(b.evaluate(pay(-0.01)).reasonCodes).toEqual(["RULE:negative"]);
    expectNotEvaluable(b.evaluate(pay("-5")));
  });

  for (const [op, bound, value] of [
    ["gt", 1000, [50000]],
    ["gte", 1000, "1000"],
    ["lt", 0, "-5"],
    ["lte", -1, [-5]],
  ] as const) {
    it(`a disguised ${JSON.stringify(value)} does not skip a step_up on amount ${op} ${bound} to reach an allow`, () => {
      const b = yaml(`
  - {id: check, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {${op}: ${bound}}}}, decision: step_up, reason: r}
  - {id: pay, name: x, priority: 20, match: {toolClass: payment}, decision: allow, reason: r}
`);
      expectNotEvaluable(b.evaluate(pay(value)));
    });
  }

  it("an allow rule with a comparison denies a value it cannot read instead of falling through", () => {
    const b = yaml(`
  - {id: small, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {gte: 0, lte: 1000}}}, decision: allow, reason: r}
  - {id: big, name: x, priority: 20, match: {toolClass: payment}, decision: step_up, reason: r}
`);
    expect(b.evaluate(pay(500)).decision).toBe("allow");
    expect(b.evaluate(pay(5000)).decision).toBe("step_up");
    expectNotEvaluable(b.evaluate(pay("500")));
  });

  it("a rule that does not apply to the call is not judged on the value (no deny from another tool's rule)", () => {
    expect(deny.evaluate(mkInput("http", "get", { amount: [50000] })).decision).toBe("deny");
    expect(deny.evaluate(mkInput("http", "get", { amount: [50000] })).reasonCodes).toEqual(["DEFAULT_DENY"]);
  });

  it("explain names the condition that could not be evaluated", () => {
    const e = deny.explain(pay("5e4"));
    expect(e.outcome.reasonCodes).toEqual(["RULE_NOT_EVALUABLE"]);
    expect(e.yaml).toEqual([
      expect.objectContaining({ id: "too-big", matched: true, notEvaluable: "parameters.amount.compare" }),
    ]);
  });
});

describe("numeric strings are coerced only by a contract that types the argument", () => {
  const b = yaml(`
  - {id: too-big, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {gt: 1000}}}, decision: deny, reason: r}
  - {id: pay, name: x, priority: 20, match: {toolClass: payment}, decision: allow, reason: r}
`);
  const typed = compile(manifest('[args.amount]\ntype = "number"'));

  it('a contract `number` turns "5e4" into 50000 before policy, so the rule itself denies', () => {
    const v = validateArgs(typed, { value: "v", amount: "5e4" });
    if (!v.ok) throw new Error(v.message);
    expect(v.args.amount).toBe(50000);
    expect(b.evaluate(mkInput("payment", "send", { ...v.args })).reasonCodes).toEqual(["RULE:too-big"]);
  });

  it('a contract rejects what it cannot type ([50000], "0x1388") before policy is asked', () => {
    for (const amount of [[50000], "0x1388", "5_000", "Infinity"]) {
      expect(validateArgs(typed, { value: "v", amount }).ok, JSON.stringify(amount)).toBe(false);
    }
  });
});

describe("type confusion against modify / clamp", () => {
  const clamp = yaml(`
  - {id: cap, name: x, priority: 10, match: {toolClass: payment}, decision: modify, reason: r, modify: {clamp: {amount: {max: 1000}}}}
`);

  it('a clamp cannot be dodged with [50000] or "50000": the call is denied, not executed unclamped', () => {
    for (const v of DISGUISED) {
      const r = clamp.evaluate(pay(v));
      expect(r.decision, JSON.stringify(v)).toBe("deny");
      expect(r.reasonCodes).toEqual(["RULE_NOT_EVALUABLE"]);
      expect(r.modify).toBeUndefined();
    }
    const ok = clamp.evaluate(pay(50000));
    expect(ok.decision).toBe("modify");
    expect(ok.modify!.parameters.amount).toBe(1000);
  });

  it("a conditional clamp (amount > 1000 → modify) cannot be skipped to reach an allow", () => {
    const b = yaml(`
  - {id: cap, name: x, priority: 10, match: {toolClass: payment, parameters: {amount: {gt: 1000}}}, decision: modify, reason: r, modify: {clamp: {amount: {max: 1000}}}}
  - {id: pay, name: x, priority: 20, match: {toolClass: payment}, decision: allow, reason: r}
`);
    expectNotEvaluable(b.evaluate(pay([50000])));
    expect(b.evaluate(pay(50000)).modify!.parameters.amount).toBe(1000);
  });

  it("a maxLength clamp does not pass an array of long strings; a redaction hidden under an array denies", () => {
    const b = yaml(`
  - {id: trim, name: x, priority: 10, match: {toolClass: mail}, decision: modify, reason: r, modify: {clamp: {body: {maxLength: 4}}, redact: [headers.Authorization]}}
`);
    const long = "x".repeat(100);
    expect(b.evaluate(mkInput("mail", "send", { body: [long] })).reasonCodes).toEqual(["RULE_NOT_EVALUABLE"]);
    const hidden = b.evaluate(
      mkInput("mail", "send", { body: "ok", headers: [{ Authorization: "Bearer s3cret" }] }),
    );
    expectNotEvaluable(hidden);
    expect(JSON.stringify(hidden)).not.toContain("s3cret");
    expect(b.evaluate(mkInput("mail", "send", { body: long })).modify!.parameters.body).toBe("xxxx");
  });
});

describe("type confusion against YAML string rules (in / notIn / pattern)", () => {
  const b = yaml(`
  - {id: currencies, name: x, priority: 10, match: {toolClass: payment, parameters: {currency: {notIn: [USD, EUR]}}}, decision: deny, reason: r}
  - {id: blocked, name: x, priority: 20, match: {toolClass: payment, parameters: {to: {in: [mallory]}}}, decision: deny, reason: r}
  - {id: evil-url, name: x, priority: 30, match: {toolClass: payment, parameters: {url: {pattern: "evil"}}}, decision: deny, reason: r}
  - {id: pay, name: x, priority: 40, match: {toolClass: payment}, decision: allow, reason: r}
`);
  it('["GBP"], ["mallory"] and ["https://evil"] do not slip past notIn / in / pattern deny rules', () => {
    expectNotEvaluable(b.evaluate(mkInput("payment", "send", { currency: ["GBP"] })));
    expectNotEvaluable(b.evaluate(mkInput("payment", "send", { to: ["mallory"] })));
    expectNotEvaluable(b.evaluate(mkInput("payment", "send", { url: ["https://evil.example"] })));
    expectNotEvaluable(b.evaluate(mkInput("payment", "send", { to: null })));
    expectNotEvaluable(b.evaluate(mkInput("payment", "send", { url: { href: "https://evil.example" } })));
  });
  it("scalars keep Ari's string reading", () => {
    expect(b.evaluate(mkInput("payment", "send", { currency: "USD", to: "bob" })).decision).toBe("allow");
    expect(b.evaluate(mkInput("payment", "send", { currency: "GBP" })).reasonCodes).toEqual([
      "RULE:currencies",
    ]);
    expect(b.evaluate(mkInput("payment", "send", { currency: true })).reasonCodes).toEqual([
      "RULE:currencies",
    ]);
  });
});

describe("type confusion against Cedar numeric and string policies", () => {
  const b = loadPolicyBundle({
    cedar: [
      {
        name: "p.cedar",
        text: `
@id("allow-all") permit(principal, action, resource);
@id("too-big") forbid(principal, action, resource)
  when { context.numParams.hasTag("amount") && context.numParams.getTag("amount") > 1000 };
@id("evil") forbid(principal, action, resource)
  when { context.params.hasTag("url") && context.params.getTag("url") like "*evil*" };
`,
      },
    ],
  });

  it('an array [50000], "50000" or 50000.5 does not slip under numParams amount > 1000', () => {
    for (const v of [...DISGUISED, 50000.5, 1e300]) {
      const r = b.evaluate(pay(v));
      expect(r.decision, JSON.stringify(v)).toBe("deny");
      expect(r.reasonCodes).toEqual(["CEDAR_EVALUATION_ERROR"]);
    }
    expect(b.evaluate(pay(50000)).reasonCodes).toEqual(["CEDAR:too-big"]);
    expect(b.evaluate(pay(10)).decision).toBe("allow");
  });

  it('["https://evil"] does not slip past a `like` forbid', () => {
    const r = b.evaluate(mkInput("http", "get", { url: ["https://evil.example"] }));
    expect(r.decision).toBe("deny");
    expect(r.reasonCodes).toEqual(["CEDAR_EVALUATION_ERROR"]);
    expect(b.evaluate(mkInput("http", "get", { url: "https://ok.example" })).decision).toBe("allow");
  });

  it("a permit whose numeric condition cannot be evaluated denies rather than abstaining", () => {
    const p = loadPolicyBundle({
      cedar: [
        {
          name: "p.cedar",
          text: `
@id("small") permit(principal, action, resource)
  when { context.numParams.hasTag("amount") && context.numParams.getTag("amount") <= 1000 };
@id("reads") permit(principal, action, resource) when { context.toolClass == "payment" };
`,
        },
      ],
    });
    expect(p.evaluate(pay(10)).decision).toBe("allow");
    const r = p.evaluate(pay("10"));
    expect(r.decision).toBe("deny");
    expect(r.reasonCodes).toEqual(["CEDAR_EVALUATION_ERROR"]);
  });
});
