// Obligations in decisions are enforced: the executor path refuses to complete an action
// whose obligations were not met (ERR_EXEC_OBLIGATION_UNMET) and the journal records the
// fulfilment. DARE check 5: HITL approvals are signed and enforced as obligations.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openRuntime } from "../../src/cli/runtime.js";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { checkObligations, OBLIGATIONS_EVENT, RateWindows } from "../../src/executors/index.js";
import { type ExecutionTicket, ticketOf } from "../../src/gate/index.js";
import { signApproval } from "../../src/journal/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { until } from "../helpers/until.js";

async function entries(store: Runtime["store"], type: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const e of store.entries()) if ("type" in e && e.type === type) out.push(e.body);
  return out;
}

/** A file-reading runtime whose one rule allows reads with the given obligations. */
async function fileRuntime(obligations: string) {
  const dir = mkdtempSync(join(tmpdir(), "warden-obl-"));
  mkdirSync(join(dir, "contracts"));
  mkdirSync(join(dir, "sandbox"));
  writeFileSync(join(dir, "sandbox", "todo.json"), '{"items":["a"],"owner":{"email":"a@b.c"}}');
  writeFileSync(join(dir, "sandbox", "notes.txt"), "plain text");
  writeFileSync(
    join(dir, "p.yaml"),
    `rules:\n  - { id: reads, name: reads, priority: 1, match: { toolClass: file, action: read }, decision: allow, reason: r, obligations: ${obligations} }\n`,
  );
  const rt = await openRuntime({
    contracts: join(dir, "contracts"),
    policy: [join(dir, "p.yaml")],
    principal: "agent",
    db: join(dir, "j.db"),
    sandbox: join(dir, "sandbox"),
  });
  const run = await rt.startRun("agent");
  const read = async (path: string) => {
    const o = await rt.gate.authorize({
      principalId: "agent",
      runId: run.runId,
      toolClass: "file",
      action: "read",
      tool: "file_read",
      parameters: { path },
    });
    return rt.execute(ticketOf(o) as ExecutionTicket);
  };
  return { rt, read };
}

describe("obligations are enforced on the executor path", () => {
  it("an allow that requires HITL but was never approved does not execute (ERR_EXEC_OBLIGATION_UNMET)", async () => {
    const { rt, read } = await fileRuntime("[{ type: require_hitl }]");
    try {
      const r = await read("notes.txt");
      expect(r).toMatchObject({ ok: false, code: "ERR_EXEC_OBLIGATION_UNMET" });
      expect(await entries(rt.store, "warden.executor.evidence")).toHaveLength(0);
      const [o] = await entries(rt.store, OBLIGATIONS_EVENT);
      expect(o).toMatchObject({ unmet: { type: "require_hitl" } });
    } finally {
      await rt.close();
    }
  });

  it("a rate_limit obligation refuses the call over the limit and journals fulfilment of the others", async () => {
    const { rt, read } = await fileRuntime(
      "[{ type: log, params: { level: warn } }, { type: rate_limit, params: { max: 1, window_ms: 60000 } }]",
    );
    try {
      expect((await read("notes.txt")).ok).toBe(true);
      expect(await read("notes.txt")).toMatchObject({ ok: false, code: "ERR_EXEC_OBLIGATION_UNMET" });
      const [first, second] = await entries(rt.store, OBLIGATIONS_EVENT);
      expect(first).toMatchObject({
        fulfilled: [{ type: "log", detail: "journaled at level warn" }, { type: "rate_limit" }],
      });
      expect(first!.unmet).toBeUndefined();
      expect(second).toMatchObject({ unmet: { type: "rate_limit" } });
    } finally {
      await rt.close();
    }
  });

  it("mask_fields masks the output before the agent sees it; a non-JSON output is withheld", async () => {
    const { rt, read } = await fileRuntime("[{ type: mask_fields, params: { fields: [owner.email] } }]");
    try {
      const r = await read("todo.json");
      expect(r.ok).toBe(true);
      expect(JSON.stringify(r.ok ? r.output : null)).not.toContain("a@b.c");
      expect(r.ok ? r.output : null).toContain("[MASKED]");
      const bad = await read("notes.txt");
      expect(bad).toMatchObject({ ok: false, code: "ERR_EXEC_OBLIGATION_UNMET" });
      expect(
        "output" in bad && bad.output !== undefined && JSON.stringify(bad.output).includes("plain text"),
      ).toBe(false);
    } finally {
      await rt.close();
    }
  });

  it("a notify obligation without a notifier, and an unknown obligation type, are unmet (fail closed)", async () => {
    for (const ob of ["[{ type: notify, params: { channel: sec } }]", "[{ type: teleport }]"]) {
      const { rt, read } = await fileRuntime(ob);
      try {
        expect(await read("notes.txt")).toMatchObject({ ok: false, code: "ERR_EXEC_OBLIGATION_UNMET" });
      } finally {
        await rt.close();
      }
    }
  });
});

const STEP_UP = `
rules:
  - { id: wire, name: wire, priority: 100, match: { toolClass: payments }, decision: step_up, reason: money, stepUp: { approverRole: treasurer, timeout: 30s }, obligations: [{ type: require_hitl }, { type: notify, params: { channel: treasury } }] }
`;

/** A step-up answered by alice; `sign` says whether she signs with her own key. */
async function approvedTicket(sign: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "warden-obl-hitl-"));
  writeFileSync(join(dir, "p.yaml"), STEP_UP);
  const alice = generateKeyPair("ed25519");
  const rt = await composeRuntime({
    policy: [join(dir, "p.yaml")],
    journal: { path: join(dir, "j.db"), signer: generateKeyPair("ed25519") },
    gate: { principals: { agent: { id: "agent", roles: [] } }, requireContract: false, runs: "runtime" },
    ...(sign
      ? { approvers: { alice: [alice.publicKey.export({ format: "pem", type: "spki" }).toString()] } }
      : {}),
  });
  const run = await rt.startRun("agent");
  const pending = rt.gate.authorize({
    principalId: "agent",
    runId: run.runId,
    toolClass: "payments",
    action: "transfer",
    parameters: { amount: 5 },
  });
  const id: string | undefined = await until(() => rt.approvals.pending()[0]?.decisionId, 10_000);
  const justification = "invoice matched";
  const statement = {
    decision_id: id!,
    action: "approve" as const,
    approver_id: "alice",
    justification,
    time: isoTime(Date.now()),
  };
  const verdict = {
    outcome: "approve" as const,
    approver: { id: "alice", roles: ["treasurer"] },
    justification,
  };
  rt.approvals.decide(
    id!,
    sign ? { ...verdict, signed: signApproval(statement, alice.privateKey) } : verdict,
  );
  const ticket = ticketOf(await pending) as ExecutionTicket;
  await rt.close();
  return { ticket, aliceKey: alice.keyId };
}

describe("DARE check 5: HITL approvals are signed and enforced as obligations", () => {
  it("a step-up released by an approver-signed approval meets require_hitl, naming the approval and key", async () => {
    const { ticket, aliceKey } = await approvedTicket(true);
    const notices: string[] = [];
    const r = await checkObligations(ticket, "wire", {
      notify: (n) => void notices.push(n.channel),
      windows: new RateWindows(),
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.fulfilled[0]!.detail).toContain(`signed by key ${aliceKey}`);
    expect(r.fulfilled[0]!.detail).toMatch(/approval [0-9a-f-]{36} by alice/);
    expect(notices).toEqual(["treasury"]);
  });

  it("an approval the approver did not sign does not meet require_hitl", async () => {
    const { ticket } = await approvedTicket(false);
    const r = await checkObligations(ticket, "wire", { notify: () => undefined });
    expect(r).toMatchObject({
      ok: false,
      unmet: { type: "require_hitl", reason: expect.stringContaining("not signed") },
    });
  });

  it("a notifier that throws leaves the notify obligation unmet", async () => {
    const { ticket } = await approvedTicket(true);
    const r = await checkObligations(ticket, "wire", {
      notify: () => {
        throw new Error("down");
      },
    });
    expect(r).toMatchObject({ ok: false, unmet: { type: "notify" } });
  });
});
