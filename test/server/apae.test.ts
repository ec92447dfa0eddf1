// APAE at the sidecar: the `apae:` configuration section, trust thresholds answered with
// HTTP 403, and what `--check` reports.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSidecarConfig, parseSidecarConfig } from "../../src/server/index.js";
import { echo, POLICY, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const THRESHOLD_POLICY = POLICY.replace(
  "rules:\n",
  `rules:
  - id: trusted-echo
    name: echo needs trust
    priority: 50
    match: { toolClass: shell, action: exec, apae: { min_trust: 0.3 } }
    decision: deny
    reason: below the trust threshold
`,
);

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

describe("sidecar apae: section", () => {
  let s: Sidecar;
  beforeAll(async () => {
    s = await startTestSidecar({ policy: THRESHOLD_POLICY, config: { apae: { settings: { alpha: 0.01 } } } });
  });
  afterAll(async () => {
    await s.stop();
  });

  it("an agent whose violations took it below the threshold gets 403 ERR_TRUST_BELOW_THRESHOLD", async () => {
    const run = await s.run("t");
    const ok = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("hi", { runId: run }) });
    expect([ok.status, ok.body.decision]).toEqual([200, "allow"]);
    for (const m of ["rm a", "rm b"]) {
      const r = await s.call("/v1/decide", { token: TOKENS.agentA, body: echo(m, { runId: run }) });
      expect(r.body.decision).toBe("deny");
    }
    await s.server.runtime.apae?.settled();
    expect(s.server.runtime.apae?.viewOf("agent-a").score).toBe(0.2048);
    for (const path of ["/v1/decide", "/v1/execute"]) {
      const r = await s.call(path, { token: TOKENS.agentA, body: echo("hi", { runId: run }) });
      expect([path, r.status, code(r)]).toEqual([path, 403, "ERR_TRUST_BELOW_THRESHOLD"]);
    }
    // Another agent, with its own trust, is unaffected.
    const b = await s.call("/v1/decide", {
      token: TOKENS.agentB,
      body: echo("hi", { runId: await s.run("b", TOKENS.agentB) }),
    });
    expect([b.status, b.body.decision]).toEqual([200, "allow"]);
  });

  it("--check reports what the apae section turns on", async () => {
    const report = await checkSidecarConfig(s.loaded);
    expect(report.summary.apae?.settings.quarantine_floor).toBe(0.15);
    expect(report.summary.apae?.mechanisms.join("\n")).toMatch(/quarantine below 0.15/);
  });

  it("a typo in the apae section stops the start instead of keeping a default", () => {
    const bad = { ...s.loaded.config, apae: { settings: { quarantine_flor: 0.5 } } };
    expect(() => parseSidecarConfig(bad, s.dir)).toThrow(/apae/);
    const worse = { ...s.loaded.config, apae: { enable: true } };
    expect(() => parseSidecarConfig(worse, s.dir)).toThrow(/apae/);
  });
});
