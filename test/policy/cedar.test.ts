import { readFileSync } from "node:fs";
import * as cedarWasm from "@cedar-policy/cedar-wasm/nodejs";
import { describe, expect, it } from "vitest";
import { hasErrorCode, type WardenErrorCode } from "../../src/contracts/index.js";
import {
  buildEvalContext,
  CedarEngine,
  cedarSchemaText,
  DEFAULT_CLASSIFICATION_LEVELS,
  loadPolicyBundle,
  type PolicyBundle,
} from "../../src/policy/index.js";
import { emptySession, mkInput, taint } from "./helpers.js";

function cedarBundle(text: string, cedarActions: string[] = []): PolicyBundle {
  return loadPolicyBundle({ cedar: [{ name: "p.cedar", text }] }, { cedarActions });
}

function expectCode(fn: () => unknown, code: WardenErrorCode, part?: string): void {
  try {
    fn();
  } catch (err) {
    expect(hasErrorCode(err, code), `got ${(err as Error).message}`).toBe(true);
    if (part !== undefined) expect((err as Error).message).toContain(part);
    return;
  }
  expect.unreachable(`expected ${code}`);
}

describe("Cedar schema", () => {
  it("the shipped policies/warden.cedarschema is the schema the engine validates against", () => {
    const shipped = readFileSync(new URL("../../policies/warden.cedarschema", import.meta.url), "utf8");
    expect(shipped).toBe(cedarSchemaText());
    expect(cedarWasm.checkParseSchema(shipped)).toEqual({ type: "success" });
  });
});

describe("Cedar load errors", () => {
  it("syntax errors", () => {
    expectCode(() => cedarBundle("permit(principal, action, resource"), "ERR_POLICY_CEDAR_PARSE");
  });
  it("policies that do not validate against the schema (unknown attribute, unknown action, type errors)", () => {
    expectCode(
      () => cedarBundle("permit(principal, action, resource) when { context.nope == 1 };"),
      "ERR_POLICY_CEDAR_VALIDATION",
    );
    expectCode(
      () => cedarBundle('permit(principal, action == Warden::Action::"payment:send", resource);'),
      "ERR_POLICY_CEDAR_VALIDATION",
      "payment:send",
    );
    expectCode(
      () => cedarBundle('permit(principal, action, resource) when { context.counters.denied == "3" };'),
      "ERR_POLICY_CEDAR_VALIDATION",
    );
    // Optional attributes must be guarded with `has` in strict mode.
    expectCode(
      () => cedarBundle('permit(principal, action, resource) when { context.riskTier == "low" };'),
      "ERR_POLICY_CEDAR_VALIDATION",
    );
  });
  it("an action declared through cedarActions validates", () => {
    const b = cedarBundle('permit(principal, action == Warden::Action::"payment:send", resource);', [
      "payment:send",
    ]);
    expect(b.evaluate(mkInput("payment", "send")).decision).toBe("allow");
    expectCode(
      () => cedarBundle("permit(principal, action, resource);", ['bad"name']),
      "ERR_POLICY_CEDAR_SCHEMA",
    );
  });
  it("bad annotations", () => {
    const cases: [string, string][] = [
      ['@decision("step_up") forbid(principal, action, resource);', "forbid"],
      ['@decision("perhaps") permit(principal, action, resource);', "@decision"],
      ['@decision("modify") permit(principal, action, resource);', "@modify"],
      ['@modify("{}") permit(principal, action, resource);', "@modify"],
      ['@decision("modify") @modify("not json") permit(principal, action, resource);', "JSON"],
      [
        '@decision("modify") @modify("{\\"redact\\":[\\"__proto__\\"]}") permit(principal, action, resource);',
        "@modify",
      ],
      ['@timeout("30s") permit(principal, action, resource);', "@timeout"],
      ['@decision("defer") @timeout("soon") permit(principal, action, resource);', "@timeout"],
      ['@approverRole("x") permit(principal, action, resource);', "@approverRole"],
      ['@reasonCode("lower") permit(principal, action, resource);', "@reasonCode"],
      ['@obligations("log, bad name") permit(principal, action, resource);', "@obligations"],
    ];
    for (const [text, part] of cases)
      expectCode(() => cedarBundle(text), "ERR_POLICY_CEDAR_ANNOTATION", part);
  });
  it("duplicate @id and templates", () => {
    expectCode(
      () =>
        cedarBundle(
          '@id("a") permit(principal, action, resource);\n@id("a") forbid(principal, action, resource);',
        ),
      "ERR_POLICY_DUPLICATE_RULE",
    );
    expectCode(
      () => cedarBundle("permit(principal == ?principal, action, resource);"),
      "ERR_POLICY_CEDAR_PARSE",
      "template",
    );
  });
});

describe("Cedar decisions", () => {
  const b = cedarBundle(
    `
@id("readers-read")
permit(principal in Warden::Role::"reader", action in Warden::Action::"read", resource)
when { context.params.hasTag("url") && context.params.getTag("url") like "https://*" };

@id("pay-step-up") @decision("step_up") @approverRole("finance") @timeout("2m") @reasonCode("BIG_PAYMENT")
permit(principal, action == Warden::Action::"payment:send", resource)
when { context.numParams.hasTag("amount") && context.numParams.getTag("amount") > 1000 };

@id("pay-small")
permit(principal, action == Warden::Action::"payment:send", resource)
when { context.numParams.hasTag("amount") && context.numParams.getTag("amount") <= 1000 };

@id("tool-defer") @decision("defer") @timeout("45s")
permit(principal, action, resource == Warden::Tool::"crm")
when { context has riskTier && context.riskTier == "medium" };

@id("redact-mail") @decision("modify") @modify("{\\"redact\\":[\\"cc\\"]}") @obligations("log,notify")
permit(principal, action == Warden::Action::"message:send", resource);

@id("no-web-egress") @reason("no egress after web content")
forbid(principal, action in Warden::Action::"egress", resource) when { context.taint.contains("web") };

@id("no-secret-egress")
forbid(principal, action in Warden::Action::"egress", resource) when { context.classificationLevel >= 3 };

@id("trusted") permit(principal, action == Warden::Action::"memory:read", resource)
when { context has trustScore && context.trustScore >= 800 };
`,
    ["payment:send", "crm:update"],
  );
  const reader = { principal: { id: "agent-1", roles: ["reader"] } };

  it("permit → allow, through role parents and action groups", () => {
    const r = b.evaluate(mkInput("http", "get", { url: "https://x.example" }, reader));
    expect(r.decision).toBe("allow");
    expect(r.matchedRules).toEqual([{ id: "readers-read", source: "cedar", decision: "allow" }]);
    expect(r.reasonCodes).toEqual(["CEDAR:readers-read"]);
  });

  it("nothing satisfied → the bundle's default deny", () => {
    expect(b.evaluate(mkInput("http", "get", { url: "https://x.example" })).reasonCodes).toEqual([
      "DEFAULT_DENY",
    ]);
    expect(b.evaluate(mkInput("http", "get", { url: "http://x.example" }, reader)).decision).toBe("deny");
    expect(b.evaluate(mkInput("unknown-class", "x", {}, reader)).decision).toBe("deny");
  });

  it("@decision annotations express step_up, defer and modify with their payloads", () => {
    const pay = b.evaluate(mkInput("payment", "send", { amount: 5000 }));
    expect(pay.decision).toBe("step_up");
    expect(pay.stepUp).toEqual({ approverRole: "finance", timeoutMs: 120_000 });
    expect(pay.reasonCodes).toEqual(["BIG_PAYMENT"]);
    expect(b.evaluate(mkInput("payment", "send", { amount: 20 })).decision).toBe("allow");
    const d = b.evaluate(mkInput("crm", "update", {}, { tool: { name: "crm", riskTier: "medium" } }));
    expect(d.decision).toBe("defer");
    expect(d.defer).toEqual({ timeoutMs: 45_000 });
    const m = b.evaluate(mkInput("message", "send", { to: "a@b", cc: "leak@evil" }));
    expect(m.decision).toBe("modify");
    expect(m.modify!.parameters).toEqual({ to: "a@b", cc: "[REDACTED]" });
    expect(m.obligations).toEqual([{ type: "log" }, { type: "notify" }]);
  });

  it("forbid → deny, and beats a satisfied permit", () => {
    const r = b.evaluate(mkInput("message", "send", { to: "x" }, { taint: taint("web") }));
    expect(r.decision).toBe("deny");
    expect(r.matchedRules).toEqual([
      { id: "no-web-egress", source: "cedar", decision: "deny", reason: "no egress after web content" },
    ]);
    const secret = { session: emptySession({ dataClassificationsSeen: ["secret"] }) };
    expect(b.evaluate(mkInput("http", "post", {}, secret)).matchedRules[0]!.id).toBe("no-secret-egress");
  });

  it("trust scores reach Cedar as thousandths", () => {
    expect(b.evaluate(mkInput("memory", "read", {}, { trustScore: 0.85 })).decision).toBe("allow");
    expect(b.evaluate(mkInput("memory", "read", {}, { trustScore: 0.5 })).decision).toBe("deny");
    expect(b.evaluate(mkInput("memory", "read", {})).decision).toBe("deny");
  });

  it("a contract's [tool.cedar] action and resource replace the defaults", () => {
    const r = b.evaluate(
      mkInput(
        "custom",
        "whatever",
        { amount: 10 },
        { tool: { name: "pay", cedarAction: "payment:send", cedarResource: "bank" } },
      ),
    );
    expect(r.decision).toBe("allow");
  });

  it("a role or principal named in the request parameters is not a Cedar parent", () => {
    const r = b.evaluate(
      mkInput("http", "get", { url: "https://x.example", roles: ["reader"], principal: "reader" }),
    );
    expect(r.decision).toBe("deny");
  });

  it("maps the input onto the documented request shape", () => {
    const engine = b.cedar!;
    const input = mkInput(
      "http",
      "get",
      { url: "https://x", n: 3, f: 1.5, ok: true, nested: { a: 1 } },
      { ...reader, taint: taint("rag"), tool: { name: "fetch", riskTier: "low" } },
    );
    const req = engine.request(buildEvalContext(input, DEFAULT_CLASSIFICATION_LEVELS));
    expect(req.principal).toEqual({ type: "Warden::Principal", id: "agent-1" });
    expect(req.action).toEqual({ type: "Warden::Action", id: "http:get" });
    expect(req.resource).toEqual({ type: "Warden::Tool", id: "fetch" });
    expect(req.context).toMatchObject({
      toolClass: "http",
      action: "get",
      taint: ["rag"],
      riskTier: "low",
      paramKeys: ["url", "n", "f", "ok", "nested"],
    });
    const tags = Object.fromEntries(req.entities.map((e) => [JSON.stringify(e.uid), e.tags]));
    // Every parameter has a tag; a value the tag type cannot carry gets a marker that makes
    // any comparison on it an evaluation error (a deny), never an absent tag.
    const marker = { notEvaluable: true };
    expect(tags[JSON.stringify({ type: "Warden::Params", id: "request" })]).toEqual({
      url: "https://x",
      n: "3",
      f: "1.5",
      ok: "true",
      nested: marker,
    });
    expect(tags[JSON.stringify({ type: "Warden::NumParams", id: "request" })]).toEqual({
      url: marker,
      n: 3,
      f: marker,
      ok: marker,
      nested: marker,
    });
    expect(req.entities[0]!.parents).toEqual([{ type: "Warden::Role", id: "reader" }]);
  });
});

describe("Cedar fails closed", () => {
  it("a forbid policy whose evaluation errors counts as a deny (Cedar alone would skip it)", () => {
    const b = cedarBundle(`
@id("allow-all") permit(principal, action, resource);
@id("overflow") forbid(principal, action, resource) when { context.numParams.hasTag("n") && context.numParams.getTag("n") * 1000000000 > 5 };
`);
    expect(b.evaluate(mkInput("http", "get", { n: 1 })).decision).toBe("deny");
    const r = b.evaluate(mkInput("http", "get", { n: 9_000_000_000_000 }));
    expect(r.decision).toBe("deny");
    expect(r.reasonCodes).toEqual(["CEDAR_EVALUATION_ERROR"]);
    expect(b.evaluate(mkInput("http", "get", {})).decision).toBe("allow");
  });

  it("explain lists every policy with satisfied / errored flags", () => {
    const b = cedarBundle(
      '@id("p") permit(principal, action, resource);\n@id("f") forbid(principal, action, resource) when { context.quarantined };',
    );
    const e = b.explain(mkInput("x", "y", {}, { session: emptySession({ quarantined: true }) }));
    expect(e.outcome.decision).toBe("deny");
    expect(e.cedar).toEqual([
      { id: "p", effect: "permit", decision: "allow", satisfied: false, errored: false },
      { id: "f", effect: "forbid", decision: "deny", satisfied: true, errored: false },
    ]);
  });

  it("two engines with different policies do not share a preparsed set", () => {
    const a = new CedarEngine([{ name: "a", text: "permit(principal, action, resource);" }]);
    const d = new CedarEngine([{ name: "d", text: "forbid(principal, action, resource);" }]);
    const ctx = buildEvalContext(mkInput("x", "y"), DEFAULT_CLASSIFICATION_LEVELS);
    expect(a.evaluate(ctx).map((o) => o.rule.decision)).toEqual(["allow"]);
    expect(d.evaluate(ctx).map((o) => o.rule.decision)).toEqual(["deny"]);
  });
});
