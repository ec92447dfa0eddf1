// The warden.gate.decision body: one entry per decision, carrying the DARE record under
// `dare`. The registry schema is the one authoritative check of that record, so these
// tests attack it directly and through a real journal append.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DECISIONS, GATE_EVENT_SCHEMAS, sha256Of, WardenError } from "../../src/contracts/index.js";
import { generateKeyPair, Keyring } from "../../src/crypto/index.js";
import { buildDareDecision } from "../../src/gate/dare-mapping.js";
import { GateDecisionBody } from "../../src/gate/events.js";
import { GATE_DECISION, registerGateEventTypes, runTraceId } from "../../src/gate/index.js";
import {
  builtinEventTypes,
  defaultEventTypes,
  EventTypeRegistry,
  openJournal,
  SqliteJournalStore,
  verifyJournal,
} from "../../src/journal/index.js";

const H1 = sha256Of("request");
const H2 = sha256Of("context");
const H3 = sha256Of("bundle");
const ID = "0192f3a4-7b1c-7d2e-8f90-a1b2c3d4e5f6";

function body(decision: (typeof DECISIONS)[number] = "allow") {
  const dare = buildDareDecision({
    decisionId: ID,
    decision,
    reasonCodes: ["r"],
    runId: "run-1",
    traceId: runTraceId("run-1"),
    tenantId: "default",
    environment: "prod",
    principalId: "agent-1",
    toolName: "http.get",
    toolClass: "http",
    action: "get",
    requestHash: H1,
    contextHash: H2,
    policyBundleHash: H3,
    toolSchemaHash: sha256Of("schema"),
    time: "2026-11-22T00:00:00.000Z",
  });
  return {
    decision_id: ID,
    decision,
    reason_codes: ["r"],
    matched_rules: [],
    obligations: [],
    principal_id: "agent-1",
    tool_class: "http",
    action: "get",
    parameters: { url: "https://example.org/" },
    taint: [],
    provenance: [],
    request_hash: H1,
    context_hash: H2,
    policy_bundle_hash: H3,
    dare,
  } as Record<string, unknown> & { dare: Record<string, unknown> & { result: Record<string, unknown> } };
}

describe("warden.gate.decision body", () => {
  for (const d of DECISIONS) {
    it(`${d}: a detail and its DARE record that agree are accepted`, () => {
      expect(GateDecisionBody.safeParse(body(d)).success).toBe(true);
    });
  }

  it("requires the DARE record", () => {
    const { dare: _, ...rest } = body();
    expect(GateDecisionBody.safeParse(rest).success).toBe(false);
  });

  it("checks the DARE record against PolicyDecisionRecordSchema", () => {
    const b = body();
    b.dare = { ...b.dare, event_type: "gate.policy.decision" };
    expect(GateDecisionBody.safeParse(b).success).toBe(false);
    const c = body();
    c.dare = { ...c.dare, extra: 1 };
    expect(GateDecisionBody.safeParse(c).success).toBe(false);
    const e = body();
    e.dare.result = { ...e.dare.result, reason_codes: ["NOT_A_CODE"] };
    expect(GateDecisionBody.safeParse(e).success).toBe(false);
  });

  // [what, tamper, the path the rejection names]
  const mismatches: [string, (b: ReturnType<typeof body>) => void, string][] = [
    ["decision_id", (b) => Object.assign(b.dare, { decision_id: `${ID.slice(0, -1)}7` }), "dare.decision_id"],
    [
      "allow detail, deny record",
      (b) => Object.assign(b.dare.result, { decision: "deny" }),
      "dare.result.decision",
    ],
    ["deny detail, allow record", (b) => Object.assign(b, { decision: "deny" }), "dare.result.decision"],
    [
      "step_up detail, allow record",
      (b) => Object.assign(b, { decision: "step_up" }),
      "dare.result.decision",
    ],
    ["request_hash", (b) => Object.assign(b, { request_hash: sha256Of("x") }), "dare.inputs.request_hash"],
    ["context_hash", (b) => Object.assign(b, { context_hash: sha256Of("x") }), "dare.inputs.context_hash"],
    [
      "policy_bundle_hash",
      (b) => Object.assign(b, { policy_bundle_hash: sha256Of("x") }),
      "dare.bundles.policy_bundle_hash",
    ],
  ];
  for (const [what, tamper, path] of mismatches) {
    it(`rejects a DARE record that disagrees with the detail: ${what}`, () => {
      const b = body();
      tamper(b);
      const r = GateDecisionBody.safeParse(b);
      expect(r.success).toBe(false);
      expect(r.error!.issues.map((i) => i.path.join("."))).toContain(path);
    });
  }

  it("the current shape, the hashes in the DARE record alone, is accepted; an earlier entry's risk_score must agree", () => {
    const b = body();
    delete b.request_hash;
    delete b.context_hash;
    delete b.policy_bundle_hash;
    expect(GateDecisionBody.safeParse(b).success).toBe(true);
    const r = GateDecisionBody.safeParse({ ...body(), risk_score: 0.5 });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join("."))).toContain("dare.inputs.orm_risk_score");
  });

  it("the journal refuses a mismatched decision entry with ERR_JOURNAL_BODY_INVALID and accepts a matching one", async () => {
    registerGateEventTypes();
    const key = generateKeyPair("ed25519");
    const store = SqliteJournalStore.open(join(mkdtempSync(join(tmpdir(), "warden-gate-ev-")), "j.db"));
    const journal = await openJournal({ store, signer: key });
    try {
      const ok = await journal.append({ type: GATE_DECISION, run_id: "run-1", body: body() });
      expect(ok.seq).toBeGreaterThanOrEqual(0);
      const forged = body();
      forged.dare.result.decision = "deny";
      const err = await journal.append({ type: GATE_DECISION, run_id: "run-1", body: forged }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(WardenError);
      expect((err as WardenError).code).toBe("ERR_JOURNAL_BODY_INVALID");
      expect((err as Error).message).toContain("dare.result.decision");
    } finally {
      await journal.close();
      store.close();
    }
  });

  it("attack: a signed decision entry whose DARE record disagrees, written by a journal that did not know the type, fails offline verification", async () => {
    const key = generateKeyPair("ed25519");
    const store = SqliteJournalStore.open(join(mkdtempSync(join(tmpdir(), "warden-gate-ev-")), "j.db"));
    // A writer whose registry does not know the Gate's types (and accepts unknown ones).
    const journal = await openJournal({
      store,
      signer: key,
      registry: new EventTypeRegistry(),
      allowUnknownTypes: true,
    });
    const forged = body();
    forged.dare.result.decision = "deny";
    await journal.append({ type: GATE_DECISION, run_id: "run-1", body: forged });
    await journal.close();
    const keyring = new Keyring([key.publicKey]);
    // The process-wide registry knows the Gate's types: they are built-in journal types.
    expect(defaultEventTypes.has(GATE_DECISION)).toBe(true);
    const report = await verifyJournal(store, keyring);
    expect(report.ok).toBe(false);
    if (!report.ok) expect(report.failure.message).toContain("dare.result.decision");
    // A verifier with only the built-in types agrees.
    const again = await verifyJournal(store, keyring, { registry: builtinEventTypes() });
    expect(again.ok).toBe(false);
    // So does one whose registry was built from scratch with the schemas from src/contracts.
    const scratch = new EventTypeRegistry();
    registerGateEventTypes(scratch);
    expect(scratch.types()).toEqual(Object.keys(GATE_EVENT_SCHEMAS).sort());
    const third = await verifyJournal(store, keyring, { registry: scratch });
    expect(third.ok).toBe(false);
    store.close();
  });
});
