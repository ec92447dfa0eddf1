// Every way a record is refused, each with its stable code. Where GATE's own schema
// forbids the same thing (`gateRejects`), test/interop/contracts/records-rejections-gate.test.ts
// shows the GATE validator agrees, so a Warden rejection is never a private opinion
// about a GATE rule.
import { describe, expect, it } from "vitest";
import {
  fromGateNamespace,
  hasErrorCode,
  parseGateRecord,
  parseRecord,
  parseRecordJson,
  parseRecordOfType,
  type RecordKind,
  recordSchemaFor,
  toGateNamespace,
} from "../../src/contracts/index.js";
import { cases } from "./records-rejection-cases.js";
import {
  sampleHitlDecision,
  sampleLedgerEvent,
  samplePolicyDecision,
  sampleToolRequest,
} from "./records-samples.js";

describe("record rejections", () => {
  for (const k of cases) {
    it(`rejects ${k.name} (${k.kind}) with ${k.code}`, () => {
      const broken = JSON.parse(JSON.stringify(k.mutate(k.sample()))) as unknown;
      const r = parseRecord(k.kind, broken);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.code).toBe(k.code);
      expect(r.message.length).toBeGreaterThan(0);
      expect(r.issues.length).toBeGreaterThan(0);
      const first = r.issues.find((i) => i.code === k.code);
      expect(first).toBeDefined();
      if (k.path !== undefined) expect(first?.path).toEqual(k.path);
    });
  }

  it("rejects a value that is not an object", () => {
    for (const v of [null, [], "record", 42]) {
      expect(parseRecord("tool_request", v)).toMatchObject({
        ok: false,
        code: "ERR_CONTRACT_RECORD_INVALID",
      });
    }
  });

  it("rejects a dare.* record handed to the gate parser", () => {
    const r = parseGateRecord("policy_decision", samplePolicyDecision());
    expect(r).toMatchObject({ ok: false, code: "ERR_CONTRACT_NAMESPACE" });
  });

  it("rejects the DARE-only retention class in the gate namespace", () => {
    const gate = toGateNamespace(sampleLedgerEvent());
    const aliased = { ...gate, immutability: { ...gate.immutability, retention_class: "tier_bounded_365d" } };
    const r = parseGateRecord("ledger_event", aliased);
    expect(r).toMatchObject({ ok: false, code: "ERR_CONTRACT_RECORD_INVALID" });
  });

  it("reports an unknown registry type as ERR_CONTRACT_RECORD_TYPE", () => {
    expect(parseRecordOfType("dare.tool.teleport", {})).toMatchObject({
      ok: false,
      code: "ERR_CONTRACT_RECORD_TYPE",
    });
    expect(parseRecordOfType("__proto__", {})).toMatchObject({ ok: false, code: "ERR_CONTRACT_RECORD_TYPE" });
    expect(recordSchemaFor("dare.tool.teleport")).toBeUndefined();
    expect(recordSchemaFor("toString")).toBeUndefined();
  });

  it("parses by registry type in either namespace", () => {
    const rec = sampleToolRequest();
    expect(parseRecordOfType("dare.tool.request", rec)).toEqual({ ok: true, record: rec });
    expect(parseRecordOfType("gate.tool.request", toGateNamespace(rec))).toMatchObject({ ok: true });
    expect(parseRecordOfType("gate.tool.request", rec)).toMatchObject({
      ok: false,
      code: "ERR_CONTRACT_NAMESPACE",
    });
    const hitl = sampleHitlDecision();
    expect(parseRecordOfType("gate.hitl.decision", hitl)).toEqual({ ok: true, record: hitl });
  });

  it("throws for misuse: an unknown kind", () => {
    expect(() => parseRecord("tool_teleport" as RecordKind, {})).toThrow(
      expect.objectContaining({ code: "ERR_CONTRACT_RECORD_TYPE" }),
    );
  });

  it("throws for misuse: exporting a record that is not in the dare namespace, or importing one not in gate", () => {
    const gate = toGateNamespace(sampleToolRequest());
    const attempt = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(
      hasErrorCode(
        attempt(() => toGateNamespace(gate as never)),
        "ERR_CONTRACT_NAMESPACE",
      ),
    ).toBe(true);
    expect(
      hasErrorCode(
        attempt(() => fromGateNamespace(sampleToolRequest() as never)),
        "ERR_CONTRACT_NAMESPACE",
      ),
    ).toBe(true);
  });
});

describe("parseRecordJson (untrusted text)", () => {
  const text = JSON.stringify(sampleToolRequest());

  it("accepts a well-formed record", () => {
    expect(parseRecordJson("tool_request", text)).toMatchObject({ ok: true });
  });

  it("rejects duplicate keys (two parsers must not see two records)", () => {
    const dup = text.replace('{"schema_version":"v1",', '{"schema_version":"v1","schema_version":"v1",');
    expect(parseRecordJson("tool_request", dup)).toMatchObject({ ok: false, code: "ERR_JSON_DUPLICATE_KEY" });
  });

  it("rejects __proto__ keys", () => {
    const proto = text.replace(
      '{"schema_version":"v1",',
      '{"__proto__":{"admin":true},"schema_version":"v1",',
    );
    expect(parseRecordJson("tool_request", proto)).toMatchObject({
      ok: false,
      code: "ERR_JSON_FORBIDDEN_KEY",
    });
  });

  it("rejects text over the size limit", () => {
    expect(parseRecordJson("tool_request", text, { maxLength: 100 })).toMatchObject({
      ok: false,
      code: "ERR_JSON_TOO_LARGE",
    });
  });

  it("rejects nesting deeper than the limit", () => {
    expect(parseRecordJson("tool_request", text, { maxDepth: 2 })).toMatchObject({
      ok: false,
      code: "ERR_CANON_TOO_DEEP",
    });
  });

  it("rejects malformed JSON", () => {
    expect(parseRecordJson("tool_request", text.slice(0, -1))).toMatchObject({
      ok: false,
      code: "ERR_JSON_SYNTAX",
    });
  });
});
