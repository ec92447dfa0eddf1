// Every DARE record kind `warden export --format gate` writes for runs recorded by real
// runtimes validates, unchanged, against its published GATE JSON Schema (read in place
// from the vectors directory): ToolRequestEnvelope, PolicyDecisionRecord,
// ToolResponseEnvelope, LedgerEvent, ReplayTrace, HITLDecisionRecord, AgentMessageEnvelope.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecordKind } from "../../../src/contracts/index.js";
import { saveKeyPair } from "../../../src/crypto/index.js";
import { exportGate } from "../../../src/evidence/index.js";
import { recordedFileRun, recordedHitlRun } from "../../evidence/fixture.js";
import { gateKindOf } from "../../evidence/kinds.js";
import { sealFor, twoAgents } from "../../messaging/harness.js";
import { gateValidator } from "../contracts/records-ajv.js";

async function exported(db: string, key: string, run: string): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  await exportGate({ db, keys: [key], run, write: (l) => lines.push(l) });
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A planner run with one Gate decision and one delegation message, journal key on disk. */
async function messageRun(): Promise<Record<string, unknown>[]> {
  const a = await twoAgents();
  try {
    saveKeyPair(a.rt.signer, a.dir, { name: "journal.db.key" });
    const run = await a.rt.startRun("planner");
    await a.rt.gate.evaluate({
      principalId: "planner",
      runId: run.runId,
      toolClass: "http",
      action: "get",
      parameters: {},
    });
    const r = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId }),
      "planner",
    );
    expect(r.ok).toBe(true);
    return await exported(join(a.dir, "journal.db"), join(a.dir, "journal.db.key.pem"), run.runId);
  } finally {
    await a.rt.close();
  }
}

const KINDS: RecordKind[] = [
  "tool_request",
  "policy_decision",
  "tool_response",
  "ledger_event",
  "replay_trace",
  "hitl_decision",
  "agent_message",
];

describe("GATE schemas: the exported DARE record set", () => {
  const records: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const f = await recordedFileRun();
    const h = await recordedHitlRun();
    records.push(...(await exported(f.db, f.key, f.runId)), ...(await exported(h.db, h.key, h.runId)));
    records.push(...(await messageRun()));
  }, 60_000);

  for (const kind of KINDS) {
    it(`every exported ${kind} validates against its GATE schema`, () => {
      const mine = records.filter((r) => gateKindOf(r) === kind);
      expect(mine.length).toBeGreaterThan(0);
      const validate = gateValidator(kind);
      for (const r of mine) {
        const ok = validate(r);
        expect(validate.errors ?? []).toEqual([]);
        expect(ok).toBe(true);
      }
    });
  }
});
