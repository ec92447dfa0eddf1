// Every scenario in test/scenarios runs through `warden gate --session --check`: the
// decisions (and any reason codes, rules or taint they name) must match.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { REPO_ROOT } from "../helpers/repo.js";

const dir = join(REPO_ROOT, "test", "scenarios");
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".jsonl"))
  .sort();

describe("gate scenarios", () => {
  it("has at least 30 scenarios", () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  for (const f of files) {
    it(f.replace(/\.jsonl$/, ""), async () => {
      const r = await runCli("gate", "--session", join(dir, f), "--check");
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const lines = r.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(["allow", "deny", "modify", "step_up", "defer"]).toContain(l.decision);
    });
  }
});

describe("warden gate CLI", () => {
  const tmp = () => mkdtempSync(join(tmpdir(), "warden-gate-cli-"));
  const policy = join(REPO_ROOT, "policies", "safe.yaml");

  it("--check fails with exit 1 on a wrong expectation, but prints the decision", async () => {
    const f = join(tmp(), "wrong.jsonl");
    const call = {
      principalId: "a",
      runId: "r",
      toolClass: "shell",
      action: "exec",
      parameters: { command: "ls" },
    };
    writeFileSync(f, `${JSON.stringify({ call, expect: "allow" })}\n`);
    const r = await runCli("gate", "--policy", policy, "--session", f, "--check");
    expect(r.code).toBe(1);
    expect(r.err).toContain("expected allow, got deny");
    expect(JSON.parse(r.out).decision).toBe("deny");
    const unchecked = await runCli("gate", "--policy", policy, "--session", f);
    expect(unchecked.code).toBe(0);
  });

  it("decides one request and prints JSON", async () => {
    const f = join(tmp(), "req.json");
    writeFileSync(
      f,
      JSON.stringify({
        principalId: "a",
        runId: "r",
        toolClass: "http",
        action: "get",
        parameters: { url: "https://x.example/" },
      }),
    );
    const r = await runCli("gate", "--policy", policy, "--request", f);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out).toMatchObject({ decision: "allow", matchedRules: ["safe-allow-http-read"] });
    expect(out.policyBundleHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("exits 0 on a denial and 2 on malformed input", async () => {
    const d = tmp();
    const bad = join(d, "bad.jsonl");
    writeFileSync(bad, '{"call": {}}\n{"nope": 1}\n');
    const r = await runCli("gate", "--policy", policy, "--session", bad);
    expect(r.code).toBe(2);
    expect(r.err).toContain("ERR_GATE_SCENARIO_INVALID");
    const dup = join(d, "dup.jsonl");
    writeFileSync(dup, '{"call": {}, "call": {}}\n');
    expect((await runCli("gate", "--policy", policy, "--session", dup)).err).toContain(
      "ERR_GATE_SCENARIO_INVALID",
    );
    const orphan = join(d, "orphan.jsonl");
    writeFileSync(orphan, '{"result": {"data": "x"}}\n');
    expect((await runCli("gate", "--policy", policy, "--session", orphan)).code).toBe(2);
    expect((await runCli("gate", "--policy", policy)).code).toBe(2);
    expect((await runCli("gate", "--session", orphan)).code).toBe(2);
  });

  it("an unparseable request is a deny decision, not a crash", async () => {
    const f = join(tmp(), "req.json");
    writeFileSync(f, JSON.stringify({ principalId: "a", toolClass: "http" }));
    const r = await runCli("gate", "--policy", policy, "--request", f);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ decision: "deny", reasonCodes: ["request_invalid"] });
  });
});
