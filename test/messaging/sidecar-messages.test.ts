// The sidecar's message routes and signed approvals over HTTP, as attacks: a principal
// reads only its own inbox, sends only as itself, cannot replay or downgrade; an
// approval without the approver's signature, or signed by another key, is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair } from "../../src/crypto/index.js";
import { signApproval } from "../../src/journal/index.js";
import {
  generateMessagingKeys,
  MemoryNonceStore,
  open,
  publicPem,
  type SealedMessage,
  seal,
} from "../../src/messaging/index.js";
import { hashToken } from "../../src/server/index.js";
import { POLICY, type Sidecar, startTestSidecar, TOKENS, until } from "../server/harness.js";

const MESSAGE_RULES = `
  - id: a-delegates-to-b
    name: agent-a may delegate to agent-b
    priority: 300
    match: { toolClass: message, message: { from: agent-a, to: agent-b, primitive: delegate } }
    decision: allow
    reason: delegation
`;

const a = generateMessagingKeys("agent-a");
const b = generateMessagingKeys("agent-b");
const alice = generateKeyPair("ed25519");
let s: Sidecar;

beforeAll(async () => {
  s = await startTestSidecar({
    policy: POLICY + MESSAGE_RULES,
    config: {
      messaging: { identities: { "agent-a": publicPem(a), "agent-b": publicPem(b) } },
      auth: {
        principals: [
          { id: "agent-a", tokenSha256: hashToken(TOKENS.agentA) },
          { id: "agent-b", tokenSha256: hashToken(TOKENS.agentB) },
        ],
        approvers: [
          {
            id: "alice",
            roles: ["approver"],
            tokenSha256: hashToken(TOKENS.approver),
            publicKeys: [alice.publicKey.export({ format: "pem", type: "spki" }).toString()],
          },
        ],
      },
    },
  });
});
afterAll(async () => {
  await s.stop();
});

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

async function delegation(label: string): Promise<SealedMessage> {
  const runId = await s.run(label);
  return seal(
    {
      recipient: "agent-b",
      primitive: "delegate",
      payloadType: "delegate_task",
      payload: { task: label },
      runId,
      depth: 1,
    },
    a,
    s.server.runtime.messages.directory.get("agent-b")!,
    Date.now(),
  );
}

describe("POST/GET /v1/messages", () => {
  it("delivers a delegation to its recipient, who opens it and gets a run for it", async () => {
    const m = await delegation("deliver");
    const sent = await s.call("/v1/messages", { token: TOKENS.agentA, body: m });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ ok: true, messageId: m.header.message_id });
    const inbox = await s.call("/v1/messages?recipient=agent-b", { token: TOKENS.agentB });
    expect(inbox.status).toBe(200);
    const got = inbox.body.messages as { message: unknown; runId: string }[];
    expect(got).toHaveLength(1);
    const opened = open(got[0]!.message, b, {
      directory: s.server.runtime.messages.directory,
      nonces: new MemoryNonceStore(),
      now: Date.now(),
    });
    expect(opened.payload).toEqual({ task: "deliver" });
    const run = await s.call(`/v1/runs/${got[0]!.runId}`, { token: TOKENS.agentB });
    expect(run.status).toBe(200);
  });

  it("a principal that reads another principal's inbox is refused (403 ERR_MESSAGE_FORBIDDEN)", async () => {
    const m = await delegation("inbox-theft");
    expect((await s.call("/v1/messages", { token: TOKENS.agentA, body: m })).status).toBe(201);
    const theft = await s.call("/v1/messages?recipient=agent-b", { token: TOKENS.agentA });
    expect([theft.status, code(theft)]).toEqual([403, "ERR_MESSAGE_FORBIDDEN"]);
    // Still waiting for agent-b.
    expect(s.server.runtime.messages.gate.pending("agent-b")).toBe(1);
    await s.call("/v1/messages?recipient=agent-b", { token: TOKENS.agentB });
  });

  it("an agent that posts another agent's message as its own is refused (403 ERR_MESSAGE_FORBIDDEN)", async () => {
    const m = await delegation("impersonate");
    const r = await s.call("/v1/messages", { token: TOKENS.agentB, body: m });
    expect([r.status, code(r)]).toEqual([403, "ERR_MESSAGE_FORBIDDEN"]);
  });

  it("a replayed message is refused (409 ERR_MESSAGE_REPLAYED)", async () => {
    const m = await delegation("replay");
    expect((await s.call("/v1/messages", { token: TOKENS.agentA, body: m })).status).toBe(201);
    const again = await s.call("/v1/messages", { token: TOKENS.agentA, body: m });
    expect([again.status, code(again)]).toEqual([409, "ERR_MESSAGE_REPLAYED"]);
    await s.call("/v1/messages?recipient=agent-b", { token: TOKENS.agentB });
  });

  it("a downgrade to an unsigned plaintext message is refused (400 ERR_MESSAGE_UNSIGNED)", async () => {
    const m = await delegation("downgrade");
    const { signature: _s, ciphertext: _c, ...rest } = m;
    const r = await s.call("/v1/messages", {
      token: TOKENS.agentA,
      body: { ...rest, payload: { task: "x" } },
    });
    expect([r.status, code(r)]).toEqual([400, "ERR_MESSAGE_UNSIGNED"]);
  });

  it("a message the policy does not allow is refused with its reasons (403 ERR_MESSAGE_DENIED)", async () => {
    const runId = await s.run("b-to-a", TOKENS.agentB);
    const m = seal(
      {
        recipient: "agent-a",
        primitive: "delegate",
        payloadType: "delegate_task",
        payload: {},
        runId,
        depth: 1,
      },
      b,
      s.server.runtime.messages.directory.get("agent-a")!,
      Date.now(),
    );
    const r = await s.call("/v1/messages", { token: TOKENS.agentB, body: m });
    expect([r.status, code(r)]).toEqual([403, "ERR_MESSAGE_DENIED"]);
  });
});

describe("signed approvals over HTTP", () => {
  async function pending(runId: string): Promise<{ id: string }> {
    return until(async () => {
      const r = await s.call("/v1/approvals", { token: TOKENS.approver });
      return (r.body.pending as { id: string; runId: string }[]).find((p) => p.runId === runId);
    });
  }

  it("an unsigned or foreign-key approval is refused; the approver's signature resolves the call", async () => {
    const runId = await s.run("signed-approval");
    const agent = s.call("/v1/execute", {
      token: TOKENS.agentA,
      body: { runId, tool: "publish", parameters: { text: "release notes" } },
    });
    const item = await pending(runId);
    const justification = "release notes reviewed by me";
    const unsigned = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: { outcome: "approve", justification },
    });
    expect([unsigned.status, code(unsigned)]).toEqual([400, "ERR_APPROVAL_UNSIGNED"]);
    const statement = {
      decision_id: item.id,
      action: "approve" as const,
      approver_id: "alice",
      justification,
      time: isoTime(Date.now()),
    };
    const forged = signApproval(statement, generateKeyPair("ed25519").privateKey);
    const bad = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: {
        outcome: "approve",
        justification,
        signature: {
          decisionId: forged.decisionId,
          keyId: forged.keyId,
          sig: forged.signature,
          time: forged.time,
        },
      },
    });
    expect([bad.status, code(bad)]).toEqual([403, "ERR_APPROVAL_SIGNATURE_INVALID"]);
    const good = signApproval(statement, alice.privateKey);
    const ok = await s.call(`/v1/approvals/${item.id}`, {
      token: TOKENS.approver,
      body: {
        outcome: "approve",
        justification,
        signature: { decisionId: good.decisionId, keyId: good.keyId, sig: good.signature, time: good.time },
      },
    });
    expect(ok.status).toBe(200);
    expect((await agent).body).toMatchObject({ decision: "allow" });
  });
});
