// Recorded runs for the evidence tests, made by the real runtimes: a `warden run`-style
// runtime (openRuntime: built-in file tools, the file executor, the recorder on) and a
// composed runtime with an approver for signed HITL records.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRuntime } from "../../src/cli/runtime.js";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { openRecorder, pinBundle } from "../../src/evidence/index.js";
import { ticketOf } from "../../src/gate/index.js";
import { signApproval } from "../../src/journal/index.js";
import { composeRuntime } from "../../src/runtime/index.js";
import { until } from "../helpers/until.js";

export const POLICY = `
rules:
  - { id: no-secrets, name: no secrets, priority: 100, match: { toolClass: file, parameters: { path: { pattern: "secret" } } }, decision: deny, reason: secrets }
  - { id: reads, name: reads, priority: 200, match: { toolClass: file, action: [read, list] }, decision: allow, reason: reads }
`;

/** The same policy, except that reading notes is now refused (what-if). */
export const STRICTER = `
rules:
  - { id: no-notes, name: no notes, priority: 90, match: { toolClass: file, parameters: { path: { pattern: "notes" } } }, decision: deny, reason: notes are private now }
${POLICY.split("\n").slice(2).join("\n")}
`;

export interface Recorded {
  dir: string;
  db: string;
  key: string;
  pub: string;
  runId: string;
}

/** A run of four file reads (one denied) through openRuntime with the recorder on. */
export async function recordedFileRun(): Promise<Recorded> {
  const dir = mkdtempSync(join(tmpdir(), "warden-ev-"));
  const sandbox = join(dir, "sandbox");
  mkdirSync(join(dir, "contracts"));
  mkdirSync(sandbox);
  writeFileSync(join(sandbox, "notes.txt"), "meeting at noon\n");
  writeFileSync(join(sandbox, "todo.json"), '{"items":["a","b"]}');
  writeFileSync(join(sandbox, "secret.txt"), "hunter2");
  writeFileSync(join(dir, "policy.yaml"), POLICY);
  const db = join(dir, "journal.db");
  const rt = await openRuntime({
    contracts: join(dir, "contracts"),
    policy: [join(dir, "policy.yaml")],
    principal: "agent",
    db,
    sandbox,
  });
  try {
    const run = await rt.startRun("agent");
    for (const path of ["notes.txt", "todo.json", "secret.txt", "notes.txt"]) {
      const o = await rt.gate.authorize({
        principalId: "agent",
        runId: run.runId,
        toolClass: "file",
        action: "read",
        tool: "file_read",
        parameters: { path },
      });
      const ticket = ticketOf(o);
      if (ticket === undefined || o.decisionId === null) continue;
      const r = await rt.execute(ticket);
      if (!r.ok) throw new Error(r.message);
      await rt.gate.recordResult(o.decisionId, {
        taintLabels: r.taint,
        data: r.output,
        ...(r.evidence.output_hash !== null ? { outputHash: r.evidence.output_hash } : {}),
      });
    }
    return { dir, db, key: `${db}.key.pem`, pub: `${db}.key.pub.pem`, runId: run.runId };
  } finally {
    await rt.close();
  }
}

const HITL_POLICY = `
rules:
  - { id: wire, name: wire, priority: 100, match: { toolClass: payments }, decision: step_up, reason: money, stepUp: { approverRole: treasurer, timeout: 30s } }
`;

/** A run with one step-up approved by a signed HITL record, recorded, journal key on disk. */
export async function recordedHitlRun(): Promise<Recorded> {
  const dir = mkdtempSync(join(tmpdir(), "warden-ev-hitl-"));
  writeFileSync(join(dir, "p.yaml"), HITL_POLICY);
  const signer = generateKeyPair("ed25519");
  saveKeyPair(signer, dir, { name: "journal.db.key" });
  const alice = generateKeyPair("ed25519");
  const db = join(dir, "journal.db");
  const recorder = openRecorder(db);
  const rt = await composeRuntime(
    {
      policy: [join(dir, "p.yaml")],
      journal: { path: db, signer },
      gate: {
        principals: { agent: { id: "agent", roles: ["agent"] } },
        requireContract: false,
        runs: "runtime",
      },
      approvers: { alice: [alice.publicKey.export({ format: "pem", type: "spki" }).toString()] },
    },
    { snapshots: recorder },
  );
  try {
    await pinBundle(rt.journal, recorder, { policy: [join(dir, "p.yaml")] }, rt.policy.policyBundleHash);
    const run = await rt.startRun("agent");
    const outcome = rt.gate.authorize({
      principalId: "agent",
      runId: run.runId,
      toolClass: "payments",
      action: "transfer",
      parameters: { amount: 5 },
    });
    const id: string | undefined = await until(() => rt.approvals.pending()[0]?.decisionId, 10_000);
    const statement = {
      decision_id: id!,
      action: "approve" as const,
      approver_id: "alice",
      justification: "invoice matched",
      time: isoTime(Date.now()),
    };
    const signed = signApproval(statement, alice.privateKey);
    rt.approvals.decide(id!, {
      outcome: "approve",
      approver: { id: "alice", roles: ["treasurer"] },
      justification: statement.justification,
      signed,
    });
    await outcome;
    return {
      dir,
      db,
      key: join(dir, "journal.db.key.pem"),
      pub: join(dir, "journal.db.key.pub.pem"),
      runId: run.runId,
    };
  } finally {
    await rt.close();
  }
}
