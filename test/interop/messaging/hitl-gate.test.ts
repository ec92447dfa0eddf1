// An approver-signed step-up decision, journaled by a real runtime, is a
// HITLDecisionRecord that validates unchanged against GATE's hitl_decision_record.schema.json.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isoTime, sha256Of, toGateNamespace } from "../../../src/contracts/index.js";
import { generateKeyPair } from "../../../src/crypto/index.js";
import { signApproval } from "../../../src/journal/index.js";
import { composeRuntime } from "../../../src/runtime/index.js";
import { until } from "../../helpers/until.js";
import { gateValidator } from "../contracts/records-ajv.js";

const POLICY = `
rules:
  - { id: wire, name: wire, priority: 100, match: { toolClass: payments }, decision: step_up, reason: money, stepUp: { approverRole: treasurer, timeout: 30s } }
`;

describe("GATE hitl_decision_record.schema.json", () => {
  for (const action of ["approve", "deny", "modify"] as const) {
    it(`an approver-signed ${action} validates`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "warden-hitl-"));
      writeFileSync(join(dir, "p.yaml"), POLICY);
      const alice = generateKeyPair("ed25519");
      const rt = await composeRuntime({
        policy: [join(dir, "p.yaml")],
        journal: { path: join(dir, "j.db"), signer: generateKeyPair("ed25519") },
        gate: {
          principals: { agent: { id: "agent", roles: ["agent"] } },
          requireContract: false,
          runs: "runtime",
        },
        approvers: { alice: [alice.publicKey.export({ format: "pem", type: "spki" }).toString()] },
      });
      try {
        const run = await rt.startRun("agent");
        const outcome = rt.gate.authorize({
          principalId: "agent",
          runId: run.runId,
          toolClass: "payments",
          action: "transfer",
          parameters: { amount: 5 },
        });
        const id: string | undefined = await until(() => rt.approvals.pending()[0]?.decisionId, 10_000);
        const parameters = { amount: 4 };
        const statement = {
          decision_id: id!,
          action,
          approver_id: "alice",
          justification: "vendor verified, invoice matched",
          time: isoTime(Date.now()),
          ...(action === "modify" ? { parameters_hash: sha256Of(parameters) } : {}),
        };
        const signed = signApproval(statement, alice.privateKey);
        const approver = { id: "alice", roles: ["treasurer"] };
        const verdict =
          action === "modify"
            ? { outcome: action, approver, justification: statement.justification, parameters, signed }
            : { outcome: action, approver, justification: statement.justification, signed };
        expect(rt.approvals.decide(id!, verdict)).toEqual({ ok: true });
        await outcome;
        const records: unknown[] = [];
        for await (const e of rt.store.entries())
          if ("type" in e && e.type === "dare.hitl.decision") records.push(e.body);
        expect(records).toHaveLength(1);
        const validate = gateValidator("hitl_decision");
        const ok = validate(toGateNamespace(records[0] as never));
        expect(validate.errors ?? []).toEqual([]);
        expect(ok).toBe(true);
        expect(records[0]).toMatchObject({
          evidence: { signature: signed.signature, signing_key_id: signed.keyId },
        });
      } finally {
        await rt.close();
      }
    });
  }
});
