// Records exported in the gate namespace must validate, unchanged, against the
// published GATE JSON Schemas (draft 2020-12).
import { describe, expect, it } from "vitest";
import { parseGateRecord, type RecordKind, toGateNamespace } from "../../../src/contracts/index.js";
import { sampleLedgerEvent, samplesByKind } from "../../contracts/records-samples.js";
import { gateValidator } from "./records-ajv.js";

const samples = samplesByKind();

describe("gate export validates against the GATE JSON Schemas", () => {
  for (const kind of Object.keys(samples) as RecordKind[]) {
    for (const [name, record] of samples[kind]) {
      it(`${kind} (${name})`, () => {
        const gate = toGateNamespace(record);
        const validate = gateValidator(kind);
        const ok = validate(gate);
        expect(validate.errors ?? []).toEqual([]);
        expect(ok).toBe(true);
        // And our own gate-namespace schema accepts it too.
        const parsed = parseGateRecord(kind, gate);
        expect(parsed).toMatchObject({ ok: true });
      });
    }
  }

  it("a dare-namespace record does not validate against GATE (the namespace matters)", () => {
    const request = samples.tool_request[0]![1];
    expect(gateValidator("tool_request")(request)).toBe(false);
    expect(gateValidator("ledger_event")(sampleLedgerEvent())).toBe(false);
  });

  it("the GATE validator catches what GATE forbids (sanity check of the harness)", () => {
    const gate = toGateNamespace(samples.policy_decision[0]![1]);
    const broken = { ...gate, result: { ...gate.result, decision: "maybe" } };
    expect(gateValidator("policy_decision")(broken)).toBe(false);
  });

  it("the DARE retention class tier_bounded_365d exported as prod_hot_365d validates against GATE", () => {
    const event = sampleLedgerEvent();
    const aliased = {
      ...event,
      immutability: { ...event.immutability, retention_class: "tier_bounded_365d" as const },
    };
    const gate = toGateNamespace(aliased);
    expect(gateValidator("ledger_event")(gate)).toBe(true);
  });
});
