// Behaviour verification: signed specs, each rule kind against an ECT stream, compliance
// ECTs naming the offending ECT, violations as policy_violation trust events, continuous
// and periodic checking, spec changes recorded as ECTs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  approverKeyMap,
  BehaviorVerifier,
  type EctClaims,
  EctEmitter,
  ectClaims,
  globMatch,
  MemoryTrustStore,
  signBehaviorSpec,
  TrustEngine,
  verifyBehavior,
  verifyBehaviorSpec,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T12:00:00Z");
const OPERATOR = generateKeyPair("ed25519");
const KEYS = approverKeyMap([OPERATOR.publicKey]);
const AGENT = "spiffe://example.com/agent/firewall";
const SPEC = {
  spec_version: "1.0",
  agent_id: AGENT,
  allowed_actions: ["update_rules", "read_config", "report"],
  constraints: {
    max_actions_per_minute: 3,
    forbidden_targets: ["core-router-*"],
    require_checkpoint_before: ["update_rules"],
  },
  verification_frequency: "continuous" as const,
};
const spec = signBehaviorSpec(SPEC, OPERATOR).spec;

let n = 0;
function ect(
  act: string,
  atS: number,
  ext: Record<string, string | string[]> = {},
  par: string[] = [],
): EctClaims {
  const c = ectClaims({ exec_act: act, aud: "x", ext, par }, AGENT, T0 + atS * 1000);
  return { ...c, jti: `ect-${++n}` };
}

describe("behaviour specs are signed", () => {
  it("a spec edited after signing (a widened allow-list) is refused", () => {
    const signed = signBehaviorSpec(SPEC, OPERATOR);
    expect(verifyBehaviorSpec(signed, KEYS).ok).toBe(true);
    const widened = {
      ...signed,
      spec: { ...signed.spec, allowed_actions: [...signed.spec.allowed_actions, "shutdown"] },
    };
    expect(verifyBehaviorSpec(widened, KEYS)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_SPEC_SIGNATURE_INVALID",
    });
  });

  it("a spec signed by a key that is not configured is refused", () => {
    const rogue = signBehaviorSpec(SPEC, generateKeyPair("ed25519"));
    expect(verifyBehaviorSpec(rogue, KEYS)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_SPEC_SIGNATURE_INVALID",
    });
    expect(
      verifyBehaviorSpec({ spec: { ...SPEC, extra: 1 }, key_id: "k", signature: "s" }, KEYS),
    ).toMatchObject({
      ok: false,
      code: "ERR_TRUST_SPEC_INVALID",
    });
  });
});

describe("each rule kind", () => {
  it("an action outside allowed_actions is a violation naming its ECT", () => {
    const bad = ect("delete_rules", 0);
    const r = verifyBehavior(spec, [ect("read_config", 0), bad]);
    expect(r.status).toBe("failing");
    expect(r.violations).toEqual([expect.objectContaining({ rule: "allowed_actions", ect: bad.jti })]);
  });

  it("a burst over max_actions_per_minute fails on the ECT that exceeds it, not on spread actions", () => {
    const burst = [0, 10, 20, 30].map((s) => ect("report", s));
    const r = verifyBehavior(spec, burst);
    expect(r.violations.map((v) => [v.rule, v.ect])).toEqual([["max_actions_per_minute", burst[3]?.jti]]);
    expect(
      verifyBehavior(
        spec,
        [0, 30, 61, 92, 123].map((s) => ect("report", s)),
      ).status,
    ).toBe("passing");
  });

  it("a forbidden target (glob) in ext is a violation", () => {
    const bad = ect("read_config", 0, { "apae.target": "core-router-7" });
    const r = verifyBehavior(spec, [ect("read_config", 0, { target: ["edge-router-1"] }), bad]);
    expect(r.violations).toEqual([
      expect.objectContaining({
        rule: "forbidden_targets",
        ect: bad.jti,
        description: expect.stringContaining("core-router-*"),
      }),
    ]);
  });

  it("update_rules without a recent checkpoint is a violation; with one (recent or in par) it is not", () => {
    const bare = ect("update_rules", 100);
    expect(verifyBehavior(spec, [ect("atd:checkpoint", 0), bare]).violations).toEqual([
      expect.objectContaining({ rule: "require_checkpoint_before", ect: bare.jti }),
    ]);
    expect(verifyBehavior(spec, [ect("atd:checkpoint", 95), ect("update_rules", 100)]).status).toBe(
      "passing",
    );
    const cp = ect("atd:checkpoint", 0);
    expect(verifyBehavior(spec, [cp, ect("update_rules", 100, {}, [cp.jti])]).status).toBe("passing");
  });

  it("another agent's ECTs in the stream are not judged by this spec", () => {
    const other = { ...ect("delete_rules", 0), iss: "someone-else" };
    expect(verifyBehavior(spec, [other]).status).toBe("passing");
  });
});

function verifier() {
  const engine = new TrustEngine({ store: new MemoryTrustStore(), clock: () => T0 });
  const emitter = new EctEmitter({ level: "L1", issuer: "deployment", clock: () => T0 });
  return { engine, v: new BehaviorVerifier({ engine, emitter, specKeys: KEYS, audience: "audit" }) };
}

describe("the verifier", () => {
  it("an agent that acts outside its spec loses trust per violation, each citing the offending ECT", async () => {
    const { engine, v } = verifier();
    await v.install(signBehaviorSpec(SPEC, OPERATOR));
    expect(await v.observe(ect("read_config", 0))).toMatchObject({
      ect: null,
      result: { status: "passing" },
    });
    const bad = ect("delete_rules", 1);
    const report = await v.observe(bad);
    expect(report?.ect?.claims).toMatchObject({
      exec_act: "apae:compliance_check",
      par: [bad.jti],
      ext: { "apae.compliance_status": "failing", "apae.spec_version": "1.0" },
    });
    expect(report?.changes[0]?.steps[0]).toMatchObject({ kind: "policy_violation", ect: bad.jti });
    expect((await engine.view(AGENT)).score).toBe(0.32);
  });

  it("periodic specs are checked over the window since the last check", async () => {
    const { v } = verifier();
    await v.install(signBehaviorSpec({ ...SPEC, verification_frequency: "periodic" }, OPERATOR));
    expect(await v.observe(ect("delete_rules", 0))).toBeNull();
    const [r] = await v.check(T0 + 3600_000);
    expect(r?.result.violations.map((x) => x.rule)).toEqual(["allowed_actions"]);
    expect(r?.ect?.claims.ext?.["apae.window"]).toBe("2026-03-01T12:00:00.000Z/PT3600S");
    const [again] = await v.check(T0 + 7200_000);
    expect(again?.result.status).toBe("passing");
  });

  it("a spec change is an ECT chained to the previous spec's", async () => {
    const { v } = verifier();
    const first = await v.install(signBehaviorSpec(SPEC, OPERATOR));
    const second = await v.install(signBehaviorSpec({ ...SPEC, spec_version: "1.1" }, OPERATOR));
    expect(first.claims).toMatchObject({ exec_act: "apae:behavior_spec", par: [] });
    expect(second.claims).toMatchObject({ par: [first.claims.jti], ext: { "apae.spec_version": "1.1" } });
    expect(v.specOf(AGENT)?.spec_version).toBe("1.1");
    await expect(v.install({ ...signBehaviorSpec(SPEC, OPERATOR), signature: "AAAA" })).rejects.toMatchObject(
      {
        code: "ERR_TRUST_SPEC_SIGNATURE_INVALID",
      },
    );
  });
});

describe("globMatch", () => {
  it("agrees with an anchored regex reference on small alphabets", () => {
    const reference = (g: string, v: string) =>
      new RegExp(`^${[...g].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c)).join("")}$`, "s").test(v);
    fc.assert(
      fc.property(fc.stringMatching(/^[ab*?]{0,8}$/), fc.stringMatching(/^[ab]{0,10}$/), (g, v) => {
        expect(globMatch(g, v)).toBe(reference(g, v));
      }),
    );
  });

  it("treats regex metacharacters literally", () => {
    expect(globMatch("a.b", "a.b")).toBe(true);
    expect(globMatch("a.b", "axb")).toBe(false);
    expect(globMatch("(x)+", "(x)+")).toBe(true);
  });
});
