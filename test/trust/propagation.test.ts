// Trust assertions and propagation (max(own, a × trust_of_a × 0.5), direct precedence,
// max hops), checked with real signed ECTs through verifyEct.
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  assertionExt,
  ectClaims,
  encodeEct,
  MemoryTrustStore,
  parseTrustConfig,
  receiveAssertion,
  TrustEngine,
  verifyEct,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T00:00:00Z");
const A = generateKeyPair("p256");

function engineC(config: Record<string, unknown> = {}) {
  const e = new TrustEngine({
    store: new MemoryTrustStore(),
    config: parseTrustConfig({
      initial_score: 0.1,
      recovery_score: 0.5,
      quarantine_floor: 0.05,
      revocation_floor: 0.08,
      max_increase_per_day: null,
      ...config,
    }),
    clock: () => T0,
  });
  return e;
}

async function assertion(score: number, hops = 0, level: "L1" | "L2" = "L2", subject = "b") {
  const ext = {
    "apae.subject": subject,
    "apae.trust_score": score,
    "apae.interactions": 147,
    "apae.confidence": "high",
    "apae.hops": hops,
  };
  const claims = ectClaims({ exec_act: "apae:trust_assertion", aud: "c", ext }, "a", T0);
  const token = await encodeEct(claims, level, { kid: "a-1", privateKey: A.privateKey });
  const v = await verifyEct(token, {
    level: "L1",
    keys: (iss, kid) => (iss === "a" && kid === "a-1" ? A.publicKey : undefined),
    sender: "a",
    now: T0,
  });
  if (!v.ok) throw new Error(v.message);
  return { claims: v.claims, signed: v.signed };
}

async function trustA(e: TrustEngine, successes: number) {
  for (let i = 0; i < successes; i++) await e.apply({ subject: "a", event: "task_success", at: T0 + i });
}

describe("trust propagation", () => {
  it("C takes max(own, a_score × trust_of_a × 0.5) for a subject it never observed", async () => {
    const e = engineC();
    await trustA(e, 70); // trust_of_a = 0.8
    const r = await receiveAssertion(e, await assertion(0.82), undefined, T0 + 1000);
    expect(r.ok && r.change.view.score).toBe(0.328); // 0.82 × 0.8 × 0.5
    expect(r.ok && r.change.view.propagatedHops).toBe(1);
    expect(r.ok && r.change.steps[0]).toMatchObject({ kind: "trust_assertion", before: 0.1, after: 0.328 });
  });

  it("an assertion never lowers the receiver's own score", async () => {
    const e = engineC({ initial_score: 0.4 });
    await trustA(e, 10); // 0.5
    const r = await receiveAssertion(e, await assertion(0.5), undefined, T0 + 1000);
    expect(r.ok && r.change.view.score).toBe(0.4);
  });

  it("direct observations take precedence over an assertion", async () => {
    const e = engineC();
    await trustA(e, 70);
    await e.apply({ subject: "b", event: "task_failure", at: T0 + 500 }); // direct: 0.08
    const r = await receiveAssertion(e, await assertion(1), undefined, T0 + 1000);
    expect(r.ok && r.change.view.score).toBe(0.08);
    expect(r.ok && r.change.steps[0]?.note).toBe("direct observations take precedence");
  });

  it("an assertion that already travelled one hop is not propagated further (max hops 1)", async () => {
    const e = engineC();
    await trustA(e, 70);
    expect(await receiveAssertion(e, await assertion(0.9, 1), undefined, T0 + 1000)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_ASSERTION_HOPS",
    });
    const two = engineC({ max_hops: 2 });
    await trustA(two, 70);
    const r = await receiveAssertion(two, await assertion(0.9, 1), undefined, T0 + 1000);
    expect(r.ok && r.change.view.propagatedHops).toBe(2);
  });

  it("an unsigned (L1) assertion is refused even where L1 ECTs are accepted", async () => {
    expect(await receiveAssertion(engineC(), await assertion(0.9, 0, "L1"))).toMatchObject({
      ok: false,
      code: "ERR_TRUST_ASSERTION_INVALID",
    });
  });

  it("a Sybil asserting about itself gains nothing", async () => {
    const e = engineC();
    await trustA(e, 70);
    const self = await assertion(1, 0, "L2", "a");
    expect(await receiveAssertion(e, self, undefined, T0 + 1000)).toMatchObject({
      code: "ERR_TRUST_ASSERTION_INVALID",
    });
    expect((await e.view("a", undefined, T0 + 1000)).score).toBe(0.8);
  });

  it("assertionExt builds the spec's claims from a view", async () => {
    const e = engineC();
    await trustA(e, 3);
    expect(assertionExt(await e.view("a", undefined, T0 + 10))).toEqual({
      "apae.subject": "a",
      "apae.trust_score": 0.13,
      "apae.interactions": 3,
      "apae.confidence": "low",
      "apae.hops": 0,
    });
  });
});
