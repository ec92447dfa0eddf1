// Early quarantine lift: a signed HITL override of scope apae:quarantine_lift by a
// configured approver ends the quarantine; forged, foreign, replayed and mis-scoped
// records are refused with their codes and leave the quarantine in force.
import { describe, expect, it } from "vitest";
import { generateKeyPair } from "../../src/crypto/index.js";
import {
  approverKeyMap,
  liftQuarantine,
  MemoryTrustStore,
  signLift,
  TrustEngine,
} from "../../src/trust/index.js";

const T0 = Date.parse("2026-03-01T00:00:00Z");
const APPROVER = generateKeyPair("ed25519");
const STRANGER = generateKeyPair("ed25519");
const approvers = approverKeyMap([APPROVER.publicKey]);

async function quarantined() {
  const e = new TrustEngine({ store: new MemoryTrustStore(), clock: () => T0 + 60_000 });
  for (let i = 0; i < 3; i++) await e.apply({ subject: "b", event: "policy_violation", at: T0 + i });
  expect((await e.view("b")).status).toBe("quarantined");
  return e;
}

const record = (over: Record<string, unknown> = {}) => ({
  scope: "apae:quarantine_lift",
  truster: "deployment",
  subject: "b",
  quarantine_count: 1,
  issued_at: "2026-03-01T00:01:00Z",
  reason: "false positive: the violations were a misconfigured policy",
  ...over,
});

describe("early quarantine lift", () => {
  it("a configured approver's signed lift ends the quarantine and emits the recovery ECT", async () => {
    const e = await quarantined();
    const r = await liftQuarantine(e, signLift(record(), APPROVER), approvers);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.change.view).toMatchObject({
      status: "active",
      score: 0.5,
      quarantineUntil: null,
      quarantineCount: 1,
    });
    expect(r.change.steps[0]).toMatchObject({ kind: "quarantine_lifted", after: 0.5 });
    expect(r.change.emitted[0]?.ext).toMatchObject({ "apae.to_state": "active", "apae.subject": "b" });
  });

  it("a lift signed by a key that is not a configured approver is refused", async () => {
    const e = await quarantined();
    expect(await liftQuarantine(e, signLift(record(), STRANGER), approvers)).toMatchObject({
      ok: false,
      code: "ERR_TRUST_LIFT_APPROVER_UNKNOWN",
    });
    expect((await e.view("b")).status).toBe("quarantined");
  });

  it("a forged signature under the approver's key id is refused", async () => {
    const e = await quarantined();
    const genuine = signLift(record(), APPROVER);
    const forged = { lift: genuine.lift, signature: signLift(record(), STRANGER).signature };
    expect(await liftQuarantine(e, forged, approvers)).toMatchObject({
      code: "ERR_TRUST_LIFT_SIGNATURE_INVALID",
    });
    const altered = { lift: { ...genuine.lift, subject: "c" }, signature: genuine.signature };
    expect(await liftQuarantine(e, altered, approvers)).toMatchObject({
      code: "ERR_TRUST_LIFT_SIGNATURE_INVALID",
    });
    expect((await e.view("b")).status).toBe("quarantined");
  });

  it("an override of another scope does not lift a quarantine", async () => {
    const e = await quarantined();
    expect(
      await liftQuarantine(e, signLift(record({ scope: "apae:trust_reset" }), APPROVER), approvers),
    ).toMatchObject({
      code: "ERR_TRUST_LIFT_SCOPE",
    });
  });

  it("a lift kept from an earlier quarantine cannot be replayed against a later one", async () => {
    const e = await quarantined();
    const first = signLift(record(), APPROVER);
    expect((await liftQuarantine(e, first, approvers)).ok).toBe(true);
    for (let i = 0; i < 3; i++)
      await e.apply({ subject: "b", event: "policy_violation", at: T0 + 70_000 + i });
    expect((await e.view("b", undefined, T0 + 80_000)).quarantineCount).toBe(2);
    expect(await liftQuarantine(e, first, approvers, T0 + 80_000)).toMatchObject({
      code: "ERR_TRUST_LIFT_STALE",
    });
    expect((await e.view("b", undefined, T0 + 80_000)).status).toBe("quarantined");
  });

  it("a lift for an agent that is not quarantined is refused and leaves no row", async () => {
    const e = await quarantined();
    expect(
      await liftQuarantine(e, signLift(record({ subject: "nobody" }), APPROVER), approvers),
    ).toMatchObject({
      code: "ERR_TRUST_NOT_QUARANTINED",
    });
    expect((await e.store.list()).map((r) => r.subject)).toEqual(["b"]);
  });

  it("a complete record without its signature is refused as unsigned and leaves the quarantine", async () => {
    const e = await quarantined();
    const { lift } = signLift(record(), APPROVER);
    for (const bare of [{ lift }, { lift, signature: "" }, { lift, signature: null }]) {
      expect(await liftQuarantine(e, bare, approvers)).toMatchObject({
        ok: false,
        code: "ERR_TRUST_LIFT_UNSIGNED",
      });
    }
    expect((await e.view("b")).status).toBe("quarantined");
  });

  it("malformed records and future-dated lifts are refused", async () => {
    const e = await quarantined();
    for (const bad of [
      null,
      {},
      { lift: record(), signature: "" },
      { lift: { ...record(), extra: 1 }, signature: "x" },
    ]) {
      expect(await liftQuarantine(e, bad, approvers)).toMatchObject({ code: "ERR_TRUST_LIFT_INVALID" });
    }
    expect(
      await liftQuarantine(e, signLift(record({ issued_at: "2027-01-01T00:00:00Z" }), APPROVER), approvers),
    ).toMatchObject({
      code: "ERR_TRUST_LIFT_INVALID",
    });
  });
});
