// Assurance profiles: the spec's table, stricter-only overrides, and a Regulated sidecar
// that refuses to start for each required mechanism it does not configure.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorCode } from "../../src/contracts/index.js";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { parseApaeSection } from "../../src/runtime/index.js";
import { checkSidecarConfig, type LoadedSidecarConfig, openSidecarRuntime } from "../../src/server/index.js";
import { PROFILE_MECHANISMS, profileFor, signBehaviorSpec } from "../../src/trust/index.js";
import { POLICY, type Sidecar, startTestSidecar } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "warden-prof-"));
const ect = saveKeyPair(generateKeyPair("p256"), dir, { name: "ect" });
const operator = generateKeyPair("ed25519");
const opKey = saveKeyPair(operator, dir, { name: "operator" });
function spec(name: string, frequency: "continuous" | "periodic"): string {
  const path = join(dir, `${name}.json`);
  const signed = signBehaviorSpec(
    { spec_version: "1", agent_id: "agent-a", allowed_actions: ["exec"], verification_frequency: frequency },
    operator,
  );
  writeFileSync(path, JSON.stringify(signed));
  return path;
}
const CONTINUOUS = spec("continuous", "continuous");
const PERIODIC = spec("periodic", "periodic");

const THRESHOLD_RULE = `
  - id: trusted-echo
    name: echo needs trust
    priority: 50
    match: { toolClass: shell, action: exec, apae: { min_trust: 0.3 } }
    decision: deny
    reason: below the trust threshold
`;
const REGULATED_POLICY = POLICY.replace("rules:\n", `rules:\n${THRESHOLD_RULE}`);

const REGULATED = {
  profile: "regulated" as const,
  ect: { issuer: "sidecar-r", key: ect.privatePem },
  behavior: { keys: [opKey.publicPem], specs: [CONTINUOUS] },
};

describe("the profile table and overrides", () => {
  it("maps each profile to the spec's mechanisms", () => {
    expect(PROFILE_MECHANISMS.relaxed).toMatchObject({
      ect_level: "L1",
      behavior_verification: "off",
      provenance_claims: "off",
    });
    expect(PROFILE_MECHANISMS.standard).toMatchObject({
      ect_level: "L2",
      behavior_verification: "periodic",
      hitl_gates: "critical_paths",
    });
    expect(PROFILE_MECHANISMS.regulated).toMatchObject({
      ect_level: "L3",
      behavior_verification: "continuous",
      hitl_gates: "mandatory",
      audit_ledger: "required",
      provenance_claims: "required",
    });
  });

  it("a tool override can raise the profile, never lower it", () => {
    expect(profileFor("standard", { tools: { payout: "regulated" } }, { tool: "payout" })).toBe("regulated");
    expect(profileFor("standard", { tools: { payout: "regulated" } }, { tool: "echo" })).toBe("standard");
    expect(() =>
      parseApaeSection({ profile: "regulated", overrides: { workflows: { debug: "relaxed" } } }, dir),
    ).toThrow(/only be stricter.*workflows.debug: relaxed/);
  });
});

describe("a Regulated sidecar", () => {
  let s: Sidecar;
  beforeAll(async () => {
    s = await startTestSidecar({ policy: REGULATED_POLICY, config: { apae: REGULATED } });
  });
  afterAll(async () => {
    await s.stop();
  });

  it("starts when every required mechanism is configured, and --check reports no gap", async () => {
    expect(s.server.runtime.apae?.profile).toBe("regulated");
    const report = await checkSidecarConfig(s.loaded);
    expect(report.problems).toEqual([]);
    expect(report.summary.apae?.gaps).toEqual([]);
  });

  function variant(apae: Record<string, unknown>, policy?: string): LoadedSidecarConfig {
    const policies =
      policy === undefined ? s.loaded.config.policies : [join(s.dir, `p-${Math.random()}.yaml`)];
    if (policy !== undefined) writeFileSync(policies[0] as string, policy);
    return {
      ...s.loaded,
      config: {
        ...s.loaded.config,
        policies,
        journal: { ...s.loaded.config.journal, path: join(s.dir, `j-${Math.random()}.db`) },
      },
      apae: parseApaeSection(apae, s.dir),
    };
  }

  async function refusal(loaded: LoadedSidecarConfig): Promise<string> {
    const report = await checkSidecarConfig(loaded);
    const problem = report.problems.find((p) => p.what === "apae.profile");
    expect(problem, "--check reports the profile").toBeDefined();
    try {
      const rt = await openSidecarRuntime(loaded);
      await rt.close();
    } catch (err) {
      expect(hasErrorCode(err, "ERR_TRUST_PROFILE_UNMET")).toBe(true);
      return (err as Error).message;
    }
    return expect.unreachable("a regulated deployment started with a gap");
  }

  it("--check reports a contract without provenance claims, as the start refuses it", async () => {
    const dir = s.loaded.config.contracts as string;
    const copy = join(s.dir, `contracts-${Math.random()}`);
    mkdirSync(copy);
    for (const f of readdirSync(dir)) writeFileSync(join(copy, f), readFileSync(join(dir, f), "utf8"));
    const first = readdirSync(copy).find((f) => f.endsWith(".toml")) as string;
    const text = readFileSync(join(copy, first), "utf8");
    writeFileSync(join(copy, first), text.replace(/\n\[apae\][\s\S]*?(?=\n\[|$)/, "\n"));
    const base = variant(REGULATED);
    const loaded = { ...base, config: { ...base.config, contracts: copy } };
    const report = await checkSidecarConfig(loaded);
    expect(report.problems.find((p) => p.what === "apae.contracts")?.message).toMatch(/provenance_claims/);
    expect(report.summary.apae?.gaps?.some((g) => g.startsWith("provenance_claims"))).toBe(true);
    await expect(openSidecarRuntime(loaded)).rejects.toMatchObject({ code: "ERR_TRUST_PROFILE_UNMET" });
  });

  it("refuses to start without an ECT signing key (L3, audit ledger)", async () => {
    const { ect: _e, ...rest } = REGULATED;
    const m = await refusal(variant(rest));
    expect(m).toMatch(/ect_level/);
    expect(m).toMatch(/audit_ledger/);
  });

  it("refuses to start without a trust-threshold rule", async () => {
    expect(await refusal(variant(REGULATED, POLICY))).toMatch(/trust_thresholds/);
  });

  it("refuses to start without continuous behaviour verification", async () => {
    expect(
      await refusal(variant({ ...REGULATED, behavior: { keys: [opKey.publicPem], specs: [] } })),
    ).toMatch(/behavior_verification/);
    expect(
      await refusal(variant({ ...REGULATED, behavior: { keys: [opKey.publicPem], specs: [PERIODIC] } })),
    ).toMatch(/behavior_verification/);
  });

  it("refuses to start without mandatory HITL gates (no step_up rule)", async () => {
    const noStepUp = `
rules:
${THRESHOLD_RULE}
  - { id: allow-echo, name: e, priority: 200, match: { toolClass: shell, action: exec }, decision: allow, reason: ok }
`;
    expect(await refusal(variant(REGULATED, noStepUp))).toMatch(/hitl_gates/);
  });

  it("refuses to start with the quarantine protocol off", async () => {
    expect(await refusal(variant({ ...REGULATED, settings: { quarantine_floor: 0 } }))).toMatch(/quarantine/);
  });

  it("refuses to start with cross-domain peers but no bilateral agreement", async () => {
    const peerKey = saveKeyPair(generateKeyPair("p256"), mkdtempSync(join(tmpdir(), "warden-prof-peer-")), {
      name: "peer",
    });
    const crossDomain = {
      ...REGULATED,
      domain: {
        domain: "example.com",
        trust_anchor_type: "jwks",
        trust_anchor_uri: "https://example.com/jwks.json",
      },
      peers: [{ id: "hospital", url: "http://127.0.0.1:9", key: peerKey.publicPem }],
    };
    expect(await refusal(variant(crossDomain))).toMatch(/cross_domain_agreements/);
  });

  it("a spec file that fails its signature stops the start", async () => {
    const forged = join(dir, "forged.json");
    const signed = signBehaviorSpec(
      {
        spec_version: "1",
        agent_id: "agent-a",
        allowed_actions: ["exec", "anything"],
        verification_frequency: "continuous",
      },
      generateKeyPair("ed25519"),
    );
    writeFileSync(forged, JSON.stringify(signed));
    const loaded = variant({ ...REGULATED, behavior: { keys: [opKey.publicPem], specs: [forged] } });
    await expect(openSidecarRuntime(loaded)).rejects.toMatchObject({
      code: "ERR_TRUST_SPEC_SIGNATURE_INVALID",
    });
  });
});
