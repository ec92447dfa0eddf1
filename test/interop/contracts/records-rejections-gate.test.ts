// Where GATE's own schema forbids what Warden refuses (`gateRejects` in the shared
// table), the published GATE validator rejects the same broken record.
import { describe, expect, it } from "vitest";
import { toGateNamespace } from "../../../src/contracts/index.js";
import { cases, gateFormOf } from "../../contracts/records-rejection-cases.js";
import { sampleLedgerEvent } from "../../contracts/records-samples.js";
import { gateValidator } from "./records-ajv.js";

describe("GATE agrees with Warden's record rejections", () => {
  const gateCases = cases.filter((k) => k.gateRejects);

  it("has cases GATE rejects too", () => {
    expect(gateCases.length).toBeGreaterThan(0);
  });

  for (const k of gateCases) {
    it(`GATE rejects ${k.name} (${k.kind})`, () => {
      const broken = JSON.parse(JSON.stringify(k.mutate(k.sample()))) as unknown;
      expect(gateValidator(k.kind)(gateFormOf(broken))).toBe(false);
    });
  }

  it("GATE rejects the DARE-only retention class in the gate namespace", () => {
    const gate = toGateNamespace(sampleLedgerEvent());
    const aliased = { ...gate, immutability: { ...gate.immutability, retention_class: "tier_bounded_365d" } };
    expect(gateValidator("ledger_event")(aliased)).toBe(false);
  });
});
