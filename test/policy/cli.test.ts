import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const POLICIES = new URL("../../policies/", import.meta.url).pathname;
const ARI = new URL("./fixtures/arikernel.policy.yaml", import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), "warden-policy-cli-"));
function file(name: string, content: string | object): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
}

describe("warden policy validate", () => {
  it("reports every valid file with its rule count and hash, exit 0", async () => {
    const r = await runCli("policy", "validate", `${POLICIES}safe.yaml`, `${POLICIES}guardrails.cedar`, ARI);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ok {4}.*safe\.yaml \(6 rules\) sha256:[0-9a-f]{64}$/m);
    expect(r.out).toMatch(/guardrails\.cedar \(3 rules\)/);
    expect(r.out).toMatch(/arikernel\.policy\.yaml \(3 rules\)/);
  });

  it("reports each invalid file with its error code and exits 1", async () => {
    const bad = file(
      "bad.yaml",
      "rules:\n  - {id: a, name: a, priority: 1, match: {parameters: {u: {pattern: '(a+)+'}}}, decision: deny, reason: r}\n",
    );
    const badCedar = file("bad.cedar", "permit(principal, action, resource) when { context.nope };");
    const r = await runCli(
      "policy",
      "validate",
      "--json",
      `${POLICIES}strict.yaml`,
      bad,
      badCedar,
      join(dir, "missing.yaml"),
    );
    expect(r.code).toBe(1);
    const results = JSON.parse(r.out) as { ok: boolean; code?: string }[];
    expect(results.map((x) => x.code ?? "ok")).toEqual([
      "ok",
      "ERR_POLICY_REGEX_UNSAFE",
      "ERR_POLICY_CEDAR_VALIDATION",
      "ERR_POLICY_FILE",
    ]);
  });
});

describe("warden policy explain", () => {
  const request = {
    principalId: "agent-1",
    runId: "r1",
    toolClass: "shell",
    action: "exec",
    parameters: { command: "ls" },
  };

  it("shows the rules tried in order and the one that matched", async () => {
    const req = file("req.json", { ...request, taintLabels: [{ source: "web", origin: "evil.example" }] });
    const r = await runCli("policy", "explain", "--policy", ARI, "--request", req);
    expect(r.code).toBe(0);
    expect(r.out).toContain("decision     deny");
    expect(r.out).toMatch(/100 allow-safe-http-reads \[allow\] no: toolClass/);
    expect(r.out).toMatch(/150 deny-tainted-shell \[deny\] MATCH/);
    expect(r.out).not.toContain("approve-file-writes");
  });

  it("exits 0 for a deny by default, and prints JSON with --json", async () => {
    const req = file("req2.json", request);
    const r = await runCli("policy", "explain", "--json", "--policy", ARI, "--request", req);
    expect(r.code).toBe(0);
    const e = JSON.parse(r.out);
    expect(e.outcome.decision).toBe("deny");
    expect(e.outcome.reasonCodes).toEqual(["DEFAULT_DENY"]);
    expect(e.yaml).toHaveLength(3);
  });

  it("takes principal roles, tool metadata and session facts from a wrapped request file, and roles from --role", async () => {
    const pol = file(
      "roles.yaml",
      "rules:\n  - {id: ops, name: x, priority: 1, match: {roles: ops, riskTier: low, counters: {denied: {lt: 2}}}, decision: allow, reason: r}\n",
    );
    const wrapped = file("w.json", {
      request,
      principal: { roles: ["ops"] },
      tool: { name: "sh", riskTier: "low" },
    });
    expect(
      JSON.parse((await runCli("policy", "explain", "--json", "--policy", pol, "--request", wrapped)).out)
        .outcome.decision,
    ).toBe("allow");
    const denied = file("w2.json", {
      request,
      principal: { roles: ["ops"] },
      tool: { name: "sh", riskTier: "low" },
      session: { counters: { denied: 2 } },
    });
    expect(
      JSON.parse((await runCli("policy", "explain", "--json", "--policy", pol, "--request", denied)).out)
        .outcome.decision,
    ).toBe("deny");
    const bare = file("bare.json", { request, tool: { name: "sh", riskTier: "low" } });
    const viaFlag = await runCli(
      "policy",
      "explain",
      "--json",
      "--role",
      "ops",
      "--policy",
      pol,
      "--request",
      bare,
    );
    expect(JSON.parse(viaFlag.out).outcome.decision).toBe("allow");
  });

  it("rejects bad requests and bad policies with codes (exit 2)", async () => {
    const noRun = file("norun.json", { principalId: "a", toolClass: "x", action: "y" });
    let r = await runCli("policy", "explain", "--policy", ARI, "--request", noRun);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_CLI_INPUT");
    const extra = file("extra.json", { request, principal: { roles: ["x"], admin: true } });
    r = await runCli("policy", "explain", "--policy", ARI, "--request", extra);
    expect(r.err).toContain("ERR_CLI_INPUT");
    const dup = file("dup.json", '{"principalId":"a","principalId":"b"}');
    r = await runCli("policy", "explain", "--policy", ARI, "--request", dup);
    expect(r.err).toContain("ERR_JSON_DUPLICATE_KEY");
    const req = file("ok.json", request);
    r = await runCli("policy", "explain", "--policy", join(dir, "nope.yaml"), "--request", req);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_POLICY_FILE");
  });
});
