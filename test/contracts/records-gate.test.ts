// Records survive dare -> gate -> dare. (That the gate export validates against the
// published GATE JSON Schemas is checked in test/interop/contracts/records-gate.test.ts.)
import { describe, expect, it } from "vitest";
import {
  fromGateNamespace,
  parseGateRecord,
  parseRecord,
  type RecordKind,
  toGateNamespace,
} from "../../src/contracts/index.js";
import { sampleLedgerEvent, samplesByKind } from "./records-samples.js";

const samples = samplesByKind();

describe("dare -> gate -> dare round trip", () => {
  for (const kind of Object.keys(samples) as RecordKind[]) {
    for (const [name, record] of samples[kind]) {
      it(`${kind} (${name})`, () => {
        const before = structuredClone(record);
        const gate = toGateNamespace(record);
        const back = fromGateNamespace(gate);
        expect(back).toEqual(record);
        expect(record).toEqual(before); // the export copies, never mutates
        expect(parseRecord(kind, back)).toEqual({ ok: true, record });
      });
    }
  }

  it("maps event_type dare.* to gate.* and back, nothing else", () => {
    const request = samples.tool_request[0]![1];
    const gate = toGateNamespace(request);
    expect(gate.event_type).toBe("gate.tool.request");
    expect({ ...gate, event_type: request.event_type }).toEqual(request);
  });

  it("records without event_type (ReplayTrace, HITLDecisionRecord) are the same in both namespaces", () => {
    const trace = samples.replay_trace[0]![1];
    const hitl = samples.hitl_decision[0]![1];
    expect(toGateNamespace(trace)).toEqual(trace);
    expect(toGateNamespace(hitl)).toEqual(hitl);
  });

  it("exports the DARE retention class tier_bounded_365d as GATE's prod_hot_365d, same event hash", () => {
    const event = sampleLedgerEvent();
    // The hash is taken over the gate form, so switching to the alias keeps it valid.
    const aliased = {
      ...event,
      immutability: { ...event.immutability, retention_class: "tier_bounded_365d" as const },
    };
    expect(parseRecord("ledger_event", aliased)).toMatchObject({ ok: true });
    const gate = toGateNamespace(aliased);
    expect(gate.immutability.retention_class).toBe("prod_hot_365d");
    expect(gate.hash_chain.event_hash).toBe(event.hash_chain.event_hash);
    expect(parseGateRecord("ledger_event", gate)).toMatchObject({ ok: true });
  });
});
