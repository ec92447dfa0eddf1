import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hasErrorCode, type WardenErrorCode } from "../../src/contracts/index.js";
import {
  loadPolicyBundle,
  MAX_POLICY_FILE_BYTES,
  type PolicyBundle,
  parsePolicyYaml,
} from "../../src/policy/index.js";
import { emptySession, mkInput, taint } from "./helpers.js";

const ARI = new URL("./fixtures/arikernel.policy.yaml", import.meta.url).pathname;

function yamlBundle(text: string, overrides?: string): PolicyBundle {
  return loadPolicyBundle({
    yaml: [{ name: "p.yaml", text }],
    ...(overrides === undefined ? {} : { overrides: [{ name: "o.yaml", text: overrides }] }),
  });
}

function rules(body: string): string {
  return `name: t\nrules:\n${body}`;
}

function expectCode(fn: () => unknown, code: WardenErrorCode, messagePart?: string): void {
  try {
    fn();
  } catch (err) {
    expect(hasErrorCode(err, code), `got ${(err as Error).message}`).toBe(true);
    if (messagePart !== undefined) expect((err as Error).message).toContain(messagePart);
    return;
  }
  expect.unreachable(`expected ${code}`);
}

describe("Ari Kernel compatibility", () => {
  const ari = loadPolicyBundle([ARI]);

  it("loads the policy file from the Ari Kernel architecture §7 unchanged", () => {
    expect(readFileSync(ARI, "utf8")).toContain("decision: require-approval");
    expect(ari.summary.sources).toEqual([
      { name: "arikernel.policy.yaml", kind: "yaml", layer: "project", rules: 3 },
    ]);
  });

  it("allows HTTP GET to the known APIs and denies others by default", () => {
    expect(ari.evaluate(mkInput("http", "get", { url: "https://api.github.com/repos/x" })).decision).toBe(
      "allow",
    );
    const other = ari.evaluate(mkInput("http", "get", { url: "https://evil.example/api.github.com" }));
    expect(other.decision).toBe("deny");
    expect(other.reasonCodes).toEqual(["DEFAULT_DENY"]);
    expect(ari.evaluate(mkInput("http", "post", { url: "https://api.github.com/x" })).decision).toBe("deny");
  });

  it("denies tainted shell commands", () => {
    const r = ari.evaluate(mkInput("shell", "exec", { command: "ls" }, { taint: taint("email") }));
    expect(r.decision).toBe("deny");
    expect(r.matchedRules.map((m) => m.id)).toEqual(["deny-tainted-shell"]);
  });

  it("reads require-approval as step_up with the default approver and timeout", () => {
    const r = ari.evaluate(mkInput("file", "write", { path: "notes.txt" }));
    expect(r.decision).toBe("step_up");
    expect(r.stepUp).toEqual({ approverRole: "approver", timeoutMs: 300_000 });
  });
});

describe("YAML loading rejects bad files with codes", () => {
  it("unknown keys, with their path", () => {
    expectCode(
      () =>
        parsePolicyYaml(
          rules("  - {id: a, name: a, priority: 1, match: {toolClas: http}, decision: allow, reason: r}"),
        ),
      "ERR_POLICY_SCHEMA",
      "rules[0].match",
    );
    expectCode(() => parsePolicyYaml("rules: []\nextra: 1\n"), "ERR_POLICY_SCHEMA", "extra");
  });

  it("missing fields, bad decisions, out-of-range priorities", () => {
    expectCode(
      () => parsePolicyYaml(rules("  - {id: a, priority: 1, match: {}, decision: allow, reason: r}")),
      "ERR_POLICY_SCHEMA",
      "name",
    );
    expectCode(
      () =>
        parsePolicyYaml(rules("  - {id: a, name: a, priority: 1, match: {}, decision: maybe, reason: r}")),
      "ERR_POLICY_SCHEMA",
      "decision",
    );
    expectCode(
      () =>
        parsePolicyYaml(rules("  - {id: a, name: a, priority: 1000, match: {}, decision: allow, reason: r}")),
      "ERR_POLICY_SCHEMA",
      "priority",
    );
    expectCode(
      () =>
        parsePolicyYaml(
          rules(
            "  - {id: a, name: a, priority: 1, match: {taintSources: [internet]}, decision: deny, reason: r}",
          ),
        ),
      "ERR_POLICY_SCHEMA",
    );
  });

  it("payloads that do not fit the decision", () => {
    const r = (extra: string, decision: string) =>
      rules(`  - {id: a, name: a, priority: 1, match: {}, decision: ${decision}, reason: r, ${extra}}`);
    expectCode(() => parsePolicyYaml(r("stepUp: {approverRole: x}", "allow")), "ERR_POLICY_SCHEMA", "stepUp");
    expectCode(() => parsePolicyYaml(r("defer: {timeout: 5s}", "deny")), "ERR_POLICY_SCHEMA", "defer");
    expectCode(() => parsePolicyYaml(r("tags: []", "modify")), "ERR_POLICY_SCHEMA", "modify");
    expectCode(() => parsePolicyYaml(r("modify: {redact: [x]}", "allow")), "ERR_POLICY_SCHEMA", "modify");
    expectCode(() => parsePolicyYaml(r("defer: {timeout: 9d}", "defer")), "ERR_POLICY_SCHEMA");
    expectCode(() => parsePolicyYaml(r("defer: {timeout: 200h}", "defer")), "ERR_POLICY_SCHEMA", "7 days");
  });

  it("YAML syntax errors, duplicate keys, custom tags and alias bombs", () => {
    expectCode(() => parsePolicyYaml("rules: [\n"), "ERR_POLICY_YAML_SYNTAX");
    expectCode(() => parsePolicyYaml("rules: []\nrules: []\n"), "ERR_POLICY_YAML_SYNTAX", "DUPLICATE_KEY");
    expectCode(
      () => parsePolicyYaml("name: !!js/function 'x'\nrules: []\n"),
      "ERR_POLICY_YAML_SYNTAX",
      "TAG",
    );
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
      "rules: []",
    ].join("\n");
    expectCode(() => parsePolicyYaml(bomb), "ERR_POLICY_YAML_SYNTAX");
  });

  it("__proto__ keys anywhere (prototype pollution through YAML)", () => {
    expectCode(
      () => parsePolicyYaml("__proto__: {polluted: true}\nrules: []\n"),
      "ERR_POLICY_SCHEMA",
      "__proto__",
    );
    expectCode(
      () =>
        parsePolicyYaml(
          rules(
            "  - {id: a, name: a, priority: 1, match: {parameters: {__proto__: {in: [x]}}}, decision: allow, reason: r}",
          ),
        ),
      "ERR_POLICY_SCHEMA",
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("modify paths that reach prototypes", () => {
    for (const p of ["__proto__.x", "a.constructor", "a..b", "a.prototype"]) {
      expectCode(
        () =>
          parsePolicyYaml(
            rules(
              `  - {id: a, name: a, priority: 1, match: {}, decision: modify, reason: r, modify: {redact: ["${p}"]}}`,
            ),
          ),
        "ERR_POLICY_SCHEMA",
      );
    }
  });

  it("files over the size cap", () => {
    expectCode(
      () => parsePolicyYaml(`# ${"x".repeat(MAX_POLICY_FILE_BYTES)}\nrules: []\n`),
      "ERR_POLICY_TOO_LARGE",
    );
  });

  it("duplicate rule ids across files, and priorities outside the layer", () => {
    const one = rules("  - {id: a, name: a, priority: 100, match: {}, decision: allow, reason: r}");
    expectCode(
      () =>
        loadPolicyBundle({
          yaml: [
            { name: "x.yaml", text: one },
            { name: "y.yaml", text: one },
          ],
        }),
      "ERR_POLICY_DUPLICATE_RULE",
      "x.yaml",
    );
    expectCode(
      () => yamlBundle(rules("  - {id: a, name: a, priority: 950, match: {}, decision: allow, reason: r}")),
      "ERR_POLICY_PRIORITY_LAYER",
    );
    expectCode(() => yamlBundle("rules: []\n", one), "ERR_POLICY_PRIORITY_LAYER", "override");
    expectCode(
      () =>
        yamlBundle(
          "rules: []\n",
          rules("  - {id: a, name: a, priority: 999, match: {}, decision: allow, reason: r}"),
        ),
      "ERR_POLICY_PRIORITY_LAYER",
    );
  });

  it("unsafe regex patterns at load, naming the rule", () => {
    expectCode(
      () =>
        yamlBundle(
          rules(
            '  - {id: bad, name: a, priority: 1, match: {parameters: {url: {pattern: "(a+)+$"}}}, decision: deny, reason: r}',
          ),
        ),
      "ERR_POLICY_REGEX_UNSAFE",
      "bad",
    );
  });

  it("classification levels the bundle does not know", () => {
    expectCode(
      () =>
        yamlBundle(
          rules(
            "  - {id: a, name: a, priority: 1, match: {classificationAtLeast: topsecret}, decision: deny, reason: r}",
          ),
        ),
      "ERR_POLICY_SCHEMA",
      "topsecret",
    );
  });

  it("an empty bundle and unknown file types", () => {
    expectCode(() => loadPolicyBundle({}), "ERR_POLICY_EMPTY_BUNDLE");
    expectCode(
      () => loadPolicyBundle([new URL("./helpers.ts", import.meta.url).pathname]),
      "ERR_POLICY_FILE",
    );
    expectCode(() => loadPolicyBundle(["/nonexistent/p.yaml"]), "ERR_POLICY_FILE");
  });
});

describe("YAML evaluation", () => {
  it("lower priority first, first match wins, file order breaks ties", () => {
    const b = yamlBundle(
      rules(`
  - {id: late-allow, name: x, priority: 300, match: {toolClass: http}, decision: allow, reason: r}
  - {id: early-deny, name: x, priority: 100, match: {toolClass: http, action: post}, decision: deny, reason: r}
  - {id: tie-first, name: x, priority: 200, match: {toolClass: http, action: get}, decision: defer, reason: r}
  - {id: tie-second, name: x, priority: 200, match: {toolClass: http, action: get}, decision: allow, reason: r}
`),
    );
    expect(b.evaluate(mkInput("http", "post")).matchedRules[0]!.id).toBe("early-deny");
    expect(b.evaluate(mkInput("http", "get")).matchedRules[0]!.id).toBe("tie-first");
    expect(b.evaluate(mkInput("http", "head")).matchedRules[0]!.id).toBe("late-allow");
  });

  it("runtime overrides come after project rules and before the built-in deny-all", () => {
    const b = yamlBundle(
      rules(
        "  - {id: p, name: x, priority: 800, match: {toolClass: http, action: get}, decision: allow, reason: r}",
      ),
      rules("  - {id: o, name: x, priority: 900, match: {toolClass: http}, decision: step_up, reason: r}"),
    );
    expect(b.evaluate(mkInput("http", "get")).matchedRules[0]!.id).toBe("p");
    expect(b.evaluate(mkInput("http", "post")).matchedRules[0]!.id).toBe("o");
    expect(b.evaluate(mkInput("file", "read")).reasonCodes).toEqual(["DEFAULT_DENY"]);
  });

  it("rules without a toolClass apply to every class, including unknown ones", () => {
    const b = yamlBundle(
      rules(`
  - {id: any-tainted, name: x, priority: 10, match: {taintSources: [web]}, decision: deny, reason: r}
  - {id: http, name: x, priority: 20, match: {toolClass: [http, mcp]}, decision: allow, reason: r}
  - {id: catch, name: x, priority: 30, match: {}, decision: defer, reason: r}
`),
    );
    expect(b.evaluate(mkInput("http", "get", {}, { taint: taint("web") })).matchedRules[0]!.id).toBe(
      "any-tainted",
    );
    expect(b.evaluate(mkInput("weird-class", "x", {}, { taint: taint("web") })).decision).toBe("deny");
    expect(b.evaluate(mkInput("mcp", "call")).decision).toBe("allow");
    expect(b.evaluate(mkInput("weird-class", "x")).decision).toBe("defer");
  });

  describe("parameters (Ari pattern / in / notIn, plus comparisons and exists)", () => {
    const b = yamlBundle(
      rules(`
  - id: big-payment
    name: x
    priority: 10
    match: {toolClass: payment, parameters: {amount: {gt: 1000}}}
    decision: step_up
    reason: r
  - id: allowed-host
    name: x
    priority: 20
    match: {toolClass: http, parameters: {host: {in: [a.example, b.example]}, method: {notIn: [DELETE]}}}
    decision: allow
    reason: r
  - id: needs-no-body
    name: x
    priority: 30
    match: {toolClass: mail, parameters: {bcc: {exists: false}, to: {pattern: "@corp\\\\.example$"}}}
    decision: allow
    reason: r
  - id: payment-ok
    name: x
    priority: 40
    match: {toolClass: payment, parameters: {amount: {gte: 0, lte: 1000}}}
    decision: allow
    reason: r
`),
    );
    it("numeric comparisons read finite JSON numbers only; anything else denies (not evaluable)", () => {
      expect(b.evaluate(mkInput("payment", "send", { amount: 5000 })).decision).toBe("step_up");
      // A numeric string is coerced only by a contract that types the argument (issue 17 #4).
      expect(b.evaluate(mkInput("payment", "send", { amount: "5000" })).decision).toBe("deny");
      expect(b.evaluate(mkInput("payment", "send", { amount: "5000" })).reasonCodes).toEqual([
        "RULE_NOT_EVALUABLE",
      ]);
      expect(b.evaluate(mkInput("payment", "send", { amount: 10 })).decision).toBe("allow");
      expect(b.evaluate(mkInput("payment", "send", { amount: { value: 5000 } })).decision).toBe("deny");
      expect(b.evaluate(mkInput("payment", "send", { amount: "5e3" })).decision).toBe("deny");
    });
    it("in / notIn compare scalar values as strings; a missing parameter never matches", () => {
      expect(b.evaluate(mkInput("http", "get", { host: "a.example", method: "GET" })).decision).toBe("allow");
      expect(b.evaluate(mkInput("http", "get", { host: "a.example", method: "DELETE" })).decision).toBe(
        "deny",
      );
      expect(b.evaluate(mkInput("http", "get", { host: "c.example", method: "GET" })).decision).toBe("deny");
      expect(b.evaluate(mkInput("http", "get", { host: "a.example" })).decision).toBe("deny");
      expect(b.evaluate(mkInput("http", "get", { host: ["a.example"], method: "GET" })).decision).toBe(
        "deny",
      );
    });
    it("exists and pattern", () => {
      expect(b.evaluate(mkInput("mail", "send", { to: "bob@corp.example" })).decision).toBe("allow");
      expect(b.evaluate(mkInput("mail", "send", { to: "bob@corp.example", bcc: "eve@evil" })).decision).toBe(
        "deny",
      );
      expect(b.evaluate(mkInput("mail", "send", { to: "bob@corp.example.evil" })).decision).toBe("deny");
    });
    it("a parameter named like a prototype member is just a missing parameter", () => {
      const p = yamlBundle(
        rules(
          "  - {id: a, name: x, priority: 1, match: {parameters: {toString: {exists: true}}}, decision: allow, reason: r}",
        ),
      );
      expect(p.evaluate(mkInput("http", "get", {})).decision).toBe("deny");
      expect(p.evaluate(mkInput("http", "get", { toString: "x" })).decision).toBe("allow");
    });
  });

  describe("pattern input length cap (fail closed)", () => {
    const b = loadPolicyBundle(
      {
        yaml: [
          {
            name: "p.yaml",
            text: rules(`
  - {id: deny-evil, name: x, priority: 10, match: {toolClass: http, parameters: {url: {pattern: "evil\\\\.example"}}}, decision: deny, reason: r}
  - {id: allow-https, name: x, priority: 20, match: {toolClass: http, parameters: {url: {pattern: "^https://"}}}, decision: allow, reason: r}
`),
          },
        ],
      },
      { maxPatternInputLength: 64 },
    );
    it("an over-long value cannot dodge a deny rule by padding", () => {
      const url = `https://evil.example/${"a".repeat(100)}`;
      const r = b.evaluate(mkInput("http", "get", { url }));
      expect(r.decision).toBe("deny");
      expect(r.matchedRules[0]!.id).toBe("deny-evil");
    });
    it("an over-long value never satisfies an allow pattern", () => {
      const b2 = yamlBundle(
        rules(
          `  - {id: allow-https, name: x, priority: 20, match: {parameters: {url: {pattern: "^https://"}}}, decision: allow, reason: r}`,
        ),
      );
      const long = `https://ok.example/${"a".repeat(3000)}`;
      expect(b2.evaluate(mkInput("http", "get", { url: long })).decision).toBe("deny");
      expect(b2.evaluate(mkInput("http", "get", { url: "https://ok.example/" })).decision).toBe("allow");
    });
    it("explain marks the undetermined condition", () => {
      const e = b.explain(mkInput("http", "get", { url: `https://x/${"a".repeat(100)}` }));
      expect(e.yaml[0]).toMatchObject({ id: "deny-evil", matched: true, undetermined: true });
    });
  });

  describe("Warden extensions", () => {
    it("roles, principalId and tool metadata (risk tier, category, human approval)", () => {
      const b = yamlBundle(
        rules(`
  - {id: admins, name: x, priority: 10, match: {roles: [admin]}, decision: allow, reason: r}
  - {id: bot, name: x, priority: 20, match: {principalId: [bot-7]}, decision: defer, reason: r}
  - {id: high-risk, name: x, priority: 30, match: {riskTier: [high, critical]}, decision: step_up, reason: r, stepUp: {approverRole: security, timeout: 90s}}
  - {id: hitl, name: x, priority: 40, match: {humanApproval: true}, decision: step_up, reason: r}
  - {id: finance, name: x, priority: 50, match: {category: financial}, decision: deny, reason: r}
  - {id: rest, name: x, priority: 60, match: {tool: [search]}, decision: allow, reason: r}
`),
      );
      const base = (opts = {}) => mkInput("custom", "run", {}, opts);
      expect(b.evaluate(base({ principal: { id: "agent-1", roles: ["admin"] } })).decision).toBe("allow");
      expect(
        b.evaluate(
          mkInput(
            "custom",
            "run",
            {},
            { request: { principalId: "bot-7" }, principal: { id: "bot-7", roles: [] } },
          ),
        ).decision,
      ).toBe("defer");
      const high = b.evaluate(base({ tool: { name: "t", riskTier: "high" } }));
      expect(high.decision).toBe("step_up");
      expect(high.stepUp).toEqual({ approverRole: "security", timeoutMs: 90_000 });
      expect(b.evaluate(base({ tool: { name: "t", humanApproval: true } })).decision).toBe("step_up");
      expect(b.evaluate(base({ tool: { name: "t", category: "financial" } })).decision).toBe("deny");
      expect(b.evaluate(base({ tool: { name: "search" } })).decision).toBe("allow");
      expect(b.evaluate(mkInput("custom", "run", {}, { request: { tool: "search" } })).decision).toBe(
        "allow",
      );
    });

    it("roles come from configuration: a request cannot claim them", () => {
      const b = yamlBundle(
        rules("  - {id: admins, name: x, priority: 10, match: {roles: admin}, decision: allow, reason: r}"),
      );
      const input = mkInput("file", "delete", { path: "/", roles: ["admin"], role: "admin" });
      expect(b.evaluate(input).decision).toBe("deny");
    });

    it("session classification, counters, perToolCalls, quarantine", () => {
      const b = yamlBundle(
        rules(`
  - {id: q, name: x, priority: 5, match: {quarantined: true, action: post}, decision: deny, reason: r}
  - {id: conf-egress, name: x, priority: 10, match: {toolClass: http, action: post, classificationAtLeast: confidential}, decision: deny, reason: r}
  - {id: pii, name: x, priority: 15, match: {classificationsSeen: [pii]}, decision: step_up, reason: r}
  - {id: many-denials, name: x, priority: 20, match: {counters: {denied: {gte: 3}}}, decision: step_up, reason: r}
  - {id: too-many-searches, name: x, priority: 30, match: {perToolCalls: {"retrieval:search": {gte: 10}}}, decision: defer, reason: r, defer: {timeout: 2m}}
  - {id: ok, name: x, priority: 40, match: {}, decision: allow, reason: r}
`),
      );
      const s = (over: Parameters<typeof emptySession>[0]) => ({ session: emptySession(over) });
      const post = (over: Parameters<typeof emptySession>[0] = {}) => mkInput("http", "post", {}, s(over));
      expect(b.evaluate(post()).decision).toBe("allow");
      expect(b.evaluate(post({ dataClassificationsSeen: ["public", "internal"] })).decision).toBe("allow");
      expect(b.evaluate(post({ dataClassificationsSeen: ["secret"] })).matchedRules[0]!.id).toBe(
        "conf-egress",
      );
      expect(b.evaluate(post({ highestClassification: "confidential" })).matchedRules[0]!.id).toBe(
        "conf-egress",
      );
      // A label the configuration does not know counts as the highest level (fail closed).
      expect(b.evaluate(post({ dataClassificationsSeen: ["unlabelled-blob"] })).matchedRules[0]!.id).toBe(
        "conf-egress",
      );
      expect(b.evaluate(mkInput("file", "read", {}, s({ dataClassificationsSeen: ["pii"] }))).decision).toBe(
        "step_up",
      );
      const counters = { ...emptySession().counters, denied: 3 };
      expect(b.evaluate(mkInput("file", "read", {}, s({ counters }))).matchedRules[0]!.id).toBe(
        "many-denials",
      );
      const d = b.evaluate(
        mkInput("retrieval", "search", {}, s({ perToolCalls: { "retrieval:search": 10 } })),
      );
      expect(d.decision).toBe("defer");
      expect(d.defer).toEqual({ timeoutMs: 120_000 });
      expect(
        b.evaluate(mkInput("retrieval", "search", {}, s({ perToolCalls: { "retrieval:search": 9 } })))
          .decision,
      ).toBe("allow");
      expect(b.evaluate(post({ quarantined: true })).matchedRules[0]!.id).toBe("q");
    });

    it("trust score bounds; a missing score counts as below any bound", () => {
      const b = yamlBundle(
        rules(`
  - {id: low, name: x, priority: 10, match: {trustScoreBelow: 0.3}, decision: deny, reason: r}
  - {id: high, name: x, priority: 20, match: {trustScoreAtLeast: 0.8}, decision: allow, reason: r}
  - {id: mid, name: x, priority: 30, match: {}, decision: step_up, reason: r}
`),
      );
      expect(b.evaluate(mkInput("x", "y", {}, { trustScore: 0.1 })).decision).toBe("deny");
      expect(b.evaluate(mkInput("x", "y", {}, { trustScore: 0.9 })).decision).toBe("allow");
      expect(b.evaluate(mkInput("x", "y", {}, { trustScore: 0.5 })).decision).toBe("step_up");
      expect(b.evaluate(mkInput("x", "y", {})).decision).toBe("deny");
    });

    it("notTaintSources restricts an allow to clean inputs", () => {
      const b = yamlBundle(
        rules(
          "  - {id: a, name: x, priority: 10, match: {toolClass: http, notTaintSources: [web, email]}, decision: allow, reason: r}",
        ),
      );
      expect(b.evaluate(mkInput("http", "get")).decision).toBe("allow");
      expect(b.evaluate(mkInput("http", "get", {}, { taint: taint("user-provided") })).decision).toBe(
        "allow",
      );
      expect(b.evaluate(mkInput("http", "get", {}, { taint: taint("email") })).decision).toBe("deny");
    });

    it("modify rewrites a copy of the parameters and lists the changes (redactions without the secret)", () => {
      const b = yamlBundle(
        rules(`
  - id: sanitize
    name: x
    priority: 10
    match: {toolClass: http}
    decision: modify
    reason: r
    reasonCode: SANITIZED
    modify:
      set: {headers.X-Warden: "1", timeoutMs: 5000}
      redact: [headers.Authorization, missing]
      clamp: {limit: {max: 100}, body: {maxLength: 4}, page: {min: 1}}
    obligations: [{type: log}, {type: notify, params: {channel: sec}}]
`),
      );
      const params = { headers: { Authorization: "Bearer s3cret" }, limit: 5000, body: "abcdefgh", page: 3 };
      const r = b.evaluate(mkInput("http", "get", params));
      expect(r.decision).toBe("modify");
      expect(r.reasonCodes).toEqual(["SANITIZED"]);
      expect(r.modify!.parameters).toEqual({
        headers: { Authorization: "[REDACTED]", "X-Warden": "1" },
        limit: 100,
        body: "abcd",
        page: 3,
        timeoutMs: 5000,
      });
      expect(r.modify!.changes).toEqual([
        { path: "headers.X-Warden", op: "set", to: "1" },
        { path: "timeoutMs", op: "set", to: 5000 },
        { path: "headers.Authorization", op: "redact", to: "[REDACTED]" },
        { path: "limit", op: "clamp", from: 5000, to: 100 },
        { path: "body", op: "clamp", from: "abcdefgh", to: "abcd" },
      ]);
      expect(JSON.stringify(r.modify!.changes)).not.toContain("s3cret");
      expect(params.headers.Authorization).toBe("Bearer s3cret");
      expect(r.obligations).toEqual([{ type: "log" }, { type: "notify", params: { channel: "sec" } }]);
    });
  });
});

describe("policy bundle hash", () => {
  const text = rules(
    "  - {id: a, name: x, priority: 10, match: {toolClass: http}, decision: allow, reason: r}",
  );
  it("is stable across formatting and comments, and over equivalent JSON", () => {
    const a = yamlBundle(text);
    const b = yamlBundle(
      `# a comment\nname: t\nrules:\n  - id: a\n    name: x\n    priority: 10\n    match:\n      toolClass: http\n    decision: allow\n    reason: r\n`,
    );
    const c = loadPolicyBundle({
      yaml: [
        {
          name: "p.yaml",
          data: {
            name: "t",
            rules: [
              {
                id: "a",
                name: "x",
                priority: 10,
                match: { toolClass: "http" },
                decision: "allow",
                reason: "r",
              },
            ],
          },
        },
      ],
    });
    expect(a.policyBundleHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(b.policyBundleHash).toBe(a.policyBundleHash);
    expect(c.policyBundleHash).toBe(a.policyBundleHash);
    expect(a.evaluate(mkInput("http", "get")).policyBundleHash).toBe(a.policyBundleHash);
  });
  it("changes with any rule, the layer, or the options", () => {
    const base = yamlBundle(text).policyBundleHash;
    expect(yamlBundle(text.replace("allow", "deny")).policyBundleHash).not.toBe(base);
    expect(yamlBundle(text.replace("priority: 10", "priority: 11")).policyBundleHash).not.toBe(base);
    expect(
      loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] }, { classificationLevels: ["low", "high"] })
        .policyBundleHash,
    ).not.toBe(base);
    expect(
      loadPolicyBundle({ yaml: [{ name: "p.yaml", text }] }, { maxPatternInputLength: 10 }).policyBundleHash,
    ).not.toBe(base);
  });
});
