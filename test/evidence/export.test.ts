// The DARE record set of a recorded run, as `warden export --format gate` writes it:
// every record kind present, correlated by run, trace, request hash, decision id and
// ledger event id; LedgerEvents chained and signed; a journal that does not verify or a
// key that is not the journal's exports nothing.
import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ledgerEventHash, ledgerSigningInput, parseGateRecord } from "../../src/contracts/index.js";
import { loadPublicKeyFile, verify } from "../../src/crypto/index.js";
import { exportGate } from "../../src/evidence/index.js";
import { runCli } from "../helpers/cli.js";
import { tamperSegmentEntry } from "../helpers/tamper-segments.js";
import { recordedFileRun, recordedHitlRun } from "./fixture.js";
import { gateKindOf } from "./kinds.js";

async function exported(db: string, keys: string[], run: string): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const n = await exportGate({ db, keys, run, write: (l) => lines.push(l) });
  expect(n).toBe(lines.length);
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

const kind = (r: Record<string, unknown>): string => gateKindOf(r);
// biome-ignore lint/suspicious/noExplicitAny: exported JSON records are walked by field name
type Rec = Record<string, any>;

describe("warden export --format gate", () => {
  it("writes every record kind of a recorded run, each valid in Warden's own schemas", async () => {
    const f = await recordedFileRun();
    const records = await exported(f.db, [f.key], f.runId);
    const kinds = records.map(kind);
    expect(kinds.filter((k) => k === "tool_request")).toHaveLength(4);
    expect(kinds.filter((k) => k === "policy_decision")).toHaveLength(4);
    expect(kinds.filter((k) => k === "tool_response")).toHaveLength(3);
    expect(kinds.filter((k) => k === "replay_trace")).toHaveLength(1);
    expect(kinds.filter((k) => k === "ledger_event").length).toBeGreaterThanOrEqual(4 + 3 * 3);
    for (const r of records) expect(parseGateRecord(gateKindOf(r), r).ok, kind(r)).toBe(true);
  });

  it("correlates request, decision, response, ledger and replay step by ids and hashes", async () => {
    const f = await recordedFileRun();
    const records = await exported(f.db, [f.key], f.runId);
    const of = (k: string) => records.filter((r) => kind(r) === k) as Rec[];
    const [req] = of("tool_request");
    const [pdr] = of("policy_decision");
    const [resp] = of("tool_response");
    const [trace] = of("replay_trace");
    expect(req!.hashes.request_hash).toBe(pdr!.inputs.request_hash);
    expect(resp!.policy.decision_id).toBe(pdr!.decision_id);
    expect(new Set(records.map((r) => r.run_id)).size).toBe(1);
    expect(req!.trace_id).toBe(pdr!.trace_id);
    const step = trace!.steps[0];
    expect(step).toMatchObject({
      step_type: "tool_call",
      policy_decision_id: pdr!.decision_id,
      request_hash: pdr!.inputs.request_hash,
      response_hash: resp!.hashes.response_hash,
    });
    expect(step.response_snapshot_uri).toBe(resp!.outputs.snapshot_uri);
    expect(step.response_snapshot_uri).toMatch(/^immutable:\/\/snapshots\/tool\/file_read\/[0-9a-f]{64}$/);
    const ledger = of("ledger_event");
    expect(ledger.map((l) => l.ledger_event_id)).toContain(step.ledger_event_id);
    expect(ledger.map((l) => l.ledger_event_id)).toContain(resp!.evidence.ledger_event_id);
    expect(trace!.steps.map((s: { step_type: string }) => s.step_type)).toEqual([
      "tool_call",
      "tool_call",
      "tool_deny",
      "tool_call",
    ]);
  });

  it("chains the LedgerEvents from GENESIS and signs them with the journal key", async () => {
    const f = await recordedFileRun();
    const ledger = (await exported(f.db, [f.key], f.runId)).filter(
      (r) => kind(r) === "ledger_event",
    ) as Rec[];
    const pub = loadPublicKeyFile(f.pub);
    let prev = "GENESIS";
    for (const e of ledger) {
      expect(e.hash_chain.prev_event_hash).toBe(prev);
      expect(ledgerEventHash(e as never)).toBe(e.hash_chain.event_hash);
      const sig = Buffer.from(e.signatures.signature, "base64url");
      expect(verify(pub, ledgerSigningInput(e.hash_chain.event_hash), sig)).toBe(true);
      prev = e.hash_chain.event_hash;
    }
  });

  it("exports the signed HITLDecisionRecord of an approved step-up, linked to its decision", async () => {
    const f = await recordedHitlRun();
    const records = (await exported(f.db, [f.key], f.runId)) as Rec[];
    const hitl = records.filter((r) => kind(r) === "hitl_decision");
    const pdr = records.find((r) => kind(r) === "policy_decision");
    expect(hitl).toHaveLength(1);
    expect(hitl[0]!.context.policy_decision_id).toBe(pdr!.decision_id);
    const trace = records.find((r) => kind(r) === "replay_trace");
    expect(trace!.steps[0]).toMatchObject({ step_type: "hitl_gate", hitl_approval_id: hitl[0]!.approval_id });
  });

  it("an edited journal entry exports nothing (ERR_EVIDENCE_JOURNAL_INVALID, exit 1)", async () => {
    const f = await recordedFileRun();
    tamperSegmentEntry(f.db, '"notes.txt"', '"other.txt"', (t) => t.includes('"warden.gate.decision"'));
    await expect(exported(f.db, [f.key], f.runId)).rejects.toMatchObject({
      code: "ERR_EVIDENCE_JOURNAL_INVALID",
    });
    const cli = await runCli("export", "--format", "gate", f.runId, "--journal", f.db);
    expect(cli.code).toBe(1);
    expect(cli.out).toBe("");
  });

  it("a public key alone cannot sign the LedgerEvents (ERR_EVIDENCE_LEDGER_KEY)", async () => {
    const f = await recordedFileRun();
    await expect(exported(f.db, [f.pub], f.runId)).rejects.toMatchObject({ code: "ERR_EVIDENCE_LEDGER_KEY" });
  });

  it("the CLI writes the same lines to --out (0600) and selects by time range", async () => {
    const f = await recordedFileRun();
    const out = `${f.dir}/gate.jsonl`;
    const a = await runCli("export", "--format", "gate", f.runId, "--journal", f.db, "--out", out);
    expect(a.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const b = await runCli(
      "export",
      "--format",
      "gate",
      "--from",
      "2000-01-01T00:00:00Z",
      "--to",
      "2999-01-01T00:00:00Z",
      "--journal",
      f.db,
    );
    expect(b.out).toBe(readFileSync(out, "utf8"));
    const bad = await runCli("export", "--format", "nope", f.runId, "--journal", f.db);
    expect(bad.code).toBe(2);
  });

  it("the same command exports the run as OCSF events and CEF lines for a SIEM", async () => {
    const f = await recordedFileRun();
    const ocsf = await runCli("export", "--format", "ocsf", f.runId, "--journal", f.db);
    expect(ocsf.code).toBe(0);
    const events = ocsf.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { class_uid: number; metadata: { version: string } });
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.metadata.version === "1.3.0")).toBe(true);
    expect(new Set(events.map((e) => e.class_uid)).has(6003)).toBe(true);
    const cef = await runCli("export", "--format", "cef", f.runId, "--journal", f.db);
    expect(cef.code).toBe(0);
    expect(
      cef.out
        .trim()
        .split("\n")
        .every((l) => l.startsWith("CEF:0|")),
    ).toBe(true);
  });
});
