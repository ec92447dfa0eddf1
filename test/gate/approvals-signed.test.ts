// Approvals signed by the approver, on a real runtime: with approver keys configured a
// step-up verdict must carry the approver's own Ed25519 signature over the decision it
// answers; the journaled HITLDecisionRecord carries that signature, and the offline
// check of the journal verifies it. Each refusal is an attack with its code.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HITLDecisionRecordSchema, isoTime, sha256Of } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair } from "../../src/crypto/index.js";
import type { ApprovalRequest, ApproverVerdict, DecideVerdict } from "../../src/gate/index.js";
import {
  type ApprovalStatement,
  ApproverKeyring,
  signApproval,
  verifyApprovalSignatures,
} from "../../src/journal/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { runCli } from "../helpers/cli.js";
import { until } from "../helpers/until.js";

const POLICY = `
rules:
  - { id: wire, name: wire, priority: 100, match: { toolClass: payments, action: transfer }, decision: step_up, reason: money, stepUp: { approverRole: treasurer, timeout: 30s } }
`;

const pem = (k: KeyPair) => k.publicKey.export({ format: "pem", type: "spki" }).toString();
const alice = { id: "alice", roles: ["treasurer"] };
const bob = { id: "bob", roles: ["treasurer"] };
let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

async function setup(approvers = true) {
  const dir = mkdtempSync(join(tmpdir(), "warden-sig-"));
  writeFileSync(join(dir, "p.yaml"), POLICY);
  const keys = { alice: generateKeyPair("ed25519"), bob: generateKeyPair("ed25519") };
  const signer = generateKeyPair("ed25519");
  rt = await composeRuntime({
    policy: [join(dir, "p.yaml")],
    journal: { path: join(dir, "j.db"), signer },
    gate: {
      principals: { agent: { id: "agent", roles: ["agent"] } },
      requireContract: false,
      runs: "runtime",
    },
    ...(approvers ? { approvers: { alice: [pem(keys.alice)], bob: [pem(keys.bob)] } } : {}),
  });
  const run = await rt.startRun("agent");
  const r = rt;
  /** Proposes a transfer and waits until it is pending; returns its request and the outcome promise. */
  async function propose(amount: number) {
    const before = new Set(r.approvals.pending().map((p) => p.id));
    const outcome = r.gate.authorize({
      principalId: "agent",
      runId: run.runId,
      toolClass: "payments",
      action: "transfer",
      parameters: { amount },
    });
    // The step-up is pending once its decision is journaled (a durable batch: real time, not ticks).
    const p = await until(() => r.approvals.pending().find((x) => !before.has(x.id)), 10_000);
    return { req: p, outcome };
  }
  return { rt: r, keys, propose, dir, signer };
}

function statement(req: ApprovalRequest, approverId = "alice", over: Partial<ApprovalStatement> = {}) {
  return {
    decision_id: req.decisionId,
    action: "approve" as const,
    approver_id: approverId,
    justification: "invoice matched and vendor verified",
    time: isoTime(Date.now()),
    ...over,
  };
}

function verdict(s: ApprovalStatement, key: KeyPair, approver = alice): ApproverVerdict {
  return {
    outcome: "approve",
    approver,
    justification: s.justification,
    signed: signApproval(s, key.privateKey),
  };
}

describe("approvals signed by the approver", () => {
  it("an approver-signed approval resolves the call and its HITL record verifies offline", async () => {
    const s = await setup();
    const { req, outcome } = await s.propose(100);
    expect(s.rt.approvals.decide(req.id, verdict(statement(req), s.keys.alice))).toEqual({ ok: true });
    expect((await outcome).decision).toBe("allow");
    const hitl = [];
    for await (const e of s.rt.store.entries())
      if ("type" in e && e.type === "dare.hitl.decision") hitl.push(e.body);
    expect(hitl).toHaveLength(1);
    const rec = HITLDecisionRecordSchema.parse(hitl[0]);
    expect(rec.decision).toMatchObject({ approver_id: "alice", action: "approve" });
    expect(rec.context.policy_decision_id).toBe(req.decisionId);
    const ring = new ApproverKeyring();
    ring.add("alice", s.keys.alice.publicKey);
    expect(await verifyApprovalSignatures(s.rt.store.entries(), ring)).toMatchObject({
      ok: true,
      checked: 1,
    });
    // The same journal checked against a keyring without alice's key fails that record.
    const other = new ApproverKeyring();
    other.add("alice", generateKeyPair("ed25519").publicKey);
    const bad = await verifyApprovalSignatures(s.rt.store.entries(), other);
    expect(bad.failures.map((f) => f.code)).toEqual(["ERR_APPROVAL_SIGNATURE_INVALID"]);
  });

  it("`warden journal verify --approver-keys` checks the approver signatures of the journal", async () => {
    const s = await setup();
    const { req, outcome } = await s.propose(100);
    expect(s.rt.approvals.decide(req.id, verdict(statement(req), s.keys.alice))).toEqual({ ok: true });
    await outcome;
    await s.rt.close();
    rt = undefined;
    const file = (name: string, k: KeyPair) => {
      const path = join(s.dir, `${name}.pub.pem`);
      writeFileSync(path, pem(k));
      return path;
    };
    const db = join(s.dir, "j.db");
    const keys = file("journal", s.signer);
    const good = await runCli(
      "journal",
      "verify",
      "--db",
      db,
      "--keys",
      keys,
      "--approver-keys",
      `alice=${file("alice", s.keys.alice)}`,
    );
    expect(good.code).toBe(0);
    expect(good.out).toContain("approvals: 1 HITL records signed by their approvers");
    // An auditor who holds bob's key as alice's finds the record not signed by alice.
    const bad = await runCli(
      "journal",
      "verify",
      "--db",
      db,
      "--keys",
      keys,
      "--approver-keys",
      `alice=${file("bob", s.keys.bob)}`,
    );
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("ERR_APPROVAL_SIGNATURE_INVALID");
  });

  it("an unsigned approval is refused when approver keys are configured (ERR_APPROVAL_UNSIGNED)", async () => {
    const s = await setup();
    const { req } = await s.propose(100);
    const r = s.rt.approvals.decide(req.id, {
      outcome: "approve",
      approver: alice,
      justification: "looks fine to me",
    });
    expect(r).toMatchObject({ ok: false, code: "ERR_APPROVAL_UNSIGNED" });
  });

  it("an approval signed by a non-approver key is refused (ERR_APPROVAL_SIGNATURE_INVALID)", async () => {
    const s = await setup();
    const { req } = await s.propose(100);
    const stranger = generateKeyPair("ed25519");
    expect(s.rt.approvals.decide(req.id, verdict(statement(req), stranger))).toMatchObject({
      code: "ERR_APPROVAL_SIGNATURE_INVALID",
    });
    // Bob's key is an approver key, but not alice's: it cannot sign as alice.
    expect(s.rt.approvals.decide(req.id, verdict(statement(req), s.keys.bob))).toMatchObject({
      code: "ERR_APPROVAL_SIGNATURE_INVALID",
    });
    // The call is still pending: none of these decided it.
    expect(s.rt.approvals.pending().some((p) => p.id === req.id)).toBe(true);
  });

  it("an approval signed for one decision and replayed on another is refused", async () => {
    const s = await setup();
    const a = await s.propose(100);
    const b = await s.propose(900_000);
    const forA = verdict(statement(a.req), s.keys.alice);
    expect(s.rt.approvals.decide(b.req.id, forA)).toMatchObject({ code: "ERR_APPROVAL_WRONG_DECISION" });
    // Claiming it is for b does not help: the signature covers a's decision id.
    const relabelled = {
      ...forA,
      signed: { ...forA.signed!, decisionId: b.req.decisionId },
    } as DecideVerdict;
    expect(s.rt.approvals.decide(b.req.id, relabelled)).toMatchObject({
      code: "ERR_APPROVAL_SIGNATURE_INVALID",
    });
  });

  it("a used approval signature presented again is refused (ERR_APPROVAL_REPLAYED)", async () => {
    const s = await setup();
    const { req, outcome } = await s.propose(100);
    const v = verdict(statement(req), s.keys.alice);
    expect(s.rt.approvals.decide(req.id, v)).toEqual({ ok: true });
    await outcome;
    expect(s.rt.approvals.decide(req.id, v)).toMatchObject({ code: "ERR_APPROVAL_REPLAYED" });
  });

  it("a signature dated outside the window is refused (ERR_APPROVAL_REPLAYED)", async () => {
    const s = await setup();
    const { req } = await s.propose(100);
    const old = statement(req, "alice", { time: isoTime(Date.now() - 3_600_000) });
    expect(s.rt.approvals.decide(req.id, verdict(old, s.keys.alice))).toMatchObject({
      code: "ERR_APPROVAL_REPLAYED",
    });
  });

  it("an approver who signs approve cannot have it turned into a modify with other parameters", async () => {
    const s = await setup();
    const { req } = await s.propose(100);
    const signed = signApproval(statement(req), s.keys.alice.privateKey);
    const r = s.rt.approvals.decide(req.id, {
      outcome: "modify",
      approver: alice,
      justification: "invoice matched and vendor verified",
      parameters: { amount: 900_000 },
      signed,
    });
    expect(r).toMatchObject({ code: "ERR_APPROVAL_SIGNATURE_INVALID" });
    // A signed modify covers its parameters' hash.
    const m = statement(req, "alice", { action: "modify", parameters_hash: sha256Of({ amount: 50 }) });
    expect(
      s.rt.approvals.decide(req.id, {
        outcome: "modify",
        approver: alice,
        justification: m.justification,
        parameters: { amount: 50 },
        signed: signApproval(m, s.keys.alice.privateKey),
      }),
    ).toEqual({ ok: true });
  });

  it("without approver keys a journal's runtime-signed HITL records fail the approver check", async () => {
    const s = await setup(false);
    const { req, outcome } = await s.propose(100);
    s.rt.approvals.decide(req.id, { outcome: "deny", approver: bob, justification: "no invoice on file" });
    await outcome;
    const ring = new ApproverKeyring();
    ring.add("bob", s.keys.bob.publicKey);
    const report = await verifyApprovalSignatures(s.rt.store.entries(), ring);
    expect(report).toMatchObject({ ok: false, checked: 1 });
    expect(report.failures[0]!.code).toBe("ERR_APPROVAL_SIGNATURE_INVALID");
  });
});
