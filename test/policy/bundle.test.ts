import { describe, expect, it } from "vitest";
import { type Capability, loadPolicyBundle, pathAllowed } from "../../src/policy/index.js";
import { mkInput, taint } from "./helpers.js";

const allowAll =
  "name: all\nrules:\n  - {id: all, name: x, priority: 500, match: {}, decision: allow, reason: r}\n";

describe("capability checks run before the rules (Ari Kernel §7)", () => {
  const b = loadPolicyBundle({ yaml: [{ name: "all.yaml", text: allowAll }] });
  const caps: Capability[] = [
    { toolClass: "http", actions: ["get"], constraints: { allowedHosts: ["api.github.com"] } },
    { toolClass: "file", actions: ["read"], constraints: { allowedPaths: ["./data/**", "README.md"] } },
    { toolClass: "shell", constraints: { allowedCommands: ["git"] } },
    { toolClass: "database", actions: [], constraints: { allowedDatabases: ["analytics"] } },
    { toolClass: "retrieval" },
  ];
  const withCaps = (toolClass: string, action: string, params: Record<string, unknown>) =>
    b.evaluate(
      mkInput(toolClass, action, params, { principal: { id: "agent-1", roles: [], capabilities: caps } }),
    );

  it("no grant for the class or action → NO_CAPABILITY, whatever the rules say", () => {
    expect(withCaps("mcp", "call", {})).toMatchObject({ decision: "deny", reasonCodes: ["NO_CAPABILITY"] });
    expect(withCaps("http", "post", { url: "https://api.github.com/" })).toMatchObject({
      reasonCodes: ["NO_CAPABILITY"],
    });
    expect(withCaps("file", "write", { path: "data/x" }).reasonCodes).toEqual(["NO_CAPABILITY"]);
  });

  it("granted and within constraints → the rules decide", () => {
    expect(withCaps("http", "get", { url: "https://API.github.com/repos" }).decision).toBe("allow");
    expect(withCaps("file", "read", { path: "data/sub/x.csv" }).decision).toBe("allow");
    expect(withCaps("file", "read", { path: "README.md" }).decision).toBe("allow");
    expect(withCaps("shell", "exec", { command: "git status" }).decision).toBe("allow");
    expect(withCaps("database", "query", { database: "analytics" }).decision).toBe("allow");
    expect(withCaps("retrieval", "search", {}).decision).toBe("allow");
  });

  it.each([
    ["http", "get", { url: "https://api.github.com.evil.example/" }],
    ["http", "get", { url: "https://user:pw@api.github.com/" }],
    ["http", "get", { url: "not a url" }],
    ["http", "get", {}],
    ["file", "read", { path: "data/../secrets.txt" }],
    ["file", "read", { path: "../data/x" }],
    ["file", "read", { path: "datafile" }],
    ["file", "read", { path: "data/x\u0000.png" }],
    ["file", "read", { path: ["data/x"] }],
    ["shell", "exec", { command: "gitx status" }],
    ["shell", "exec", { command: "rm -rf /" }],
    ["database", "query", { database: "prod" }],
  ])("constraint violation: %s %s %j → CAPABILITY_CONSTRAINT", (cls, action, params) => {
    const r = withCaps(cls, action, params);
    expect(r.decision).toBe("deny");
    expect(r.reasonCodes).toEqual(["CAPABILITY_CONSTRAINT"]);
    expect(r.matchedRules[0]).toMatchObject({ id: "builtin.capability-constraint", source: "builtin" });
  });

  it("explain stops at the capability check", () => {
    const e = b.explain(
      mkInput("mcp", "call", {}, { principal: { id: "a", roles: [], capabilities: caps } }),
    );
    expect(e.capability).toEqual({ checked: true, denied: true, reason: "No capability grant" });
    expect(e.yaml).toEqual([]);
  });

  it("pathAllowed: prefixes only on segment boundaries", () => {
    expect(pathAllowed("data", ["data/**"])).toBe(true);
    expect(pathAllowed("data2/x", ["data/**"])).toBe(false);
    expect(pathAllowed("/abs/data/x", ["data/**"])).toBe(false);
    expect(pathAllowed("./a/./b", ["a/b"])).toBe(true);
  });
});

describe("YAML and Cedar together", () => {
  const yaml = `name: y
rules:
  - {id: y-allow-http, name: x, priority: 100, match: {toolClass: http}, decision: allow, reason: r}
  - {id: y-modify-mail, name: x, priority: 110, match: {toolClass: message}, decision: modify, reason: r, modify: {set: {footer: "sent by an agent"}}}
  - {id: y-defer-db, name: x, priority: 120, match: {toolClass: database}, decision: defer, reason: r, defer: {timeout: 1m}}
`;
  const cedar = `
@id("c-no-web-post") forbid(principal, action == Warden::Action::"http:post", resource) when { context.taint.contains("web") };
@id("c-stepup-mail") @decision("step_up") @approverRole("comms") permit(principal, action == Warden::Action::"message:send", resource);
@id("c-allow-memory") permit(principal, action == Warden::Action::"memory:read", resource);
@id("c-redact-db") @decision("modify") @modify("{\\"redact\\":[\\"password\\"]}") permit(principal, action == Warden::Action::"database:query", resource);
`;
  const b = loadPolicyBundle({
    yaml: [{ name: "y.yaml", text: yaml }],
    cedar: [{ name: "c.cedar", text: cedar }],
  });

  it("a Cedar forbid beats a YAML allow", () => {
    expect(b.evaluate(mkInput("http", "post")).decision).toBe("allow");
    const r = b.evaluate(mkInput("http", "post", {}, { taint: taint("web") }));
    expect(r.decision).toBe("deny");
    expect(r.matchedRules.map((m) => [m.id, m.source])).toEqual([
      ["y-allow-http", "yaml"],
      ["c-no-web-post", "cedar"],
    ]);
  });

  it("step_up beats modify, and the approved action still runs rewritten", () => {
    const r = b.evaluate(mkInput("message", "send", { to: "a" }));
    expect(r.decision).toBe("step_up");
    expect(r.stepUp).toEqual({ approverRole: "comms", timeoutMs: 300_000 });
    expect(r.modify?.parameters).toEqual({ to: "a", footer: "sent by an agent" });
  });

  it("defer beats modify; modifications from both sources apply in order", () => {
    const r = b.evaluate(mkInput("database", "query", { sql: "select", password: "hunter2" }));
    expect(r.decision).toBe("defer");
    expect(r.defer).toEqual({ timeoutMs: 60_000 });
    expect(r.modify?.parameters).toEqual({ sql: "select", password: "[REDACTED]" });
  });

  it("either source alone can allow; neither → default deny", () => {
    expect(b.evaluate(mkInput("memory", "read")).decision).toBe("allow");
    expect(b.evaluate(mkInput("file", "read")).matchedRules).toEqual([
      expect.objectContaining({ id: "builtin.default-deny", source: "builtin" }),
    ]);
  });

  it("the bundle hash covers the Cedar policies and the schema's extra actions", () => {
    const other = loadPolicyBundle({
      yaml: [{ name: "y.yaml", text: yaml }],
      cedar: [{ name: "c.cedar", text: cedar.replace("comms", "legal") }],
    });
    expect(other.policyBundleHash).not.toBe(b.policyBundleHash);
    const extra = loadPolicyBundle(
      { yaml: [{ name: "y.yaml", text: yaml }], cedar: [{ name: "c.cedar", text: cedar }] },
      { cedarActions: ["crm:update"] },
    );
    expect(extra.policyBundleHash).not.toBe(b.policyBundleHash);
    expect(b.summary.sources).toEqual([
      { name: "y.yaml", kind: "yaml", layer: "project", rules: 3 },
      { name: "c.cedar", kind: "cedar", rules: 4 },
    ]);
  });

  it("evaluation is pure: the request parameters are never mutated", () => {
    const input = mkInput("database", "query", { password: "hunter2", nested: { a: [1] } });
    const before = JSON.stringify(input);
    b.evaluate(input);
    b.explain(input);
    expect(JSON.stringify(input)).toBe(before);
  });
});
