// POST /v1/apae/lift: an approver (operator credential, approver role) presents a record
// signed with one of its own configured keys; the agent's quarantine ends and it is served
// again. An agent credential can never lift (even with a valid record); an operator without
// the approver role cannot; another approver's record, an unsigned one and a replay are
// refused with their codes and HTTP statuses.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isoTime } from "../../src/contracts/index.js";
import { generateKeyPair, type KeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { hashToken } from "../../src/server/index.js";
import { signLift } from "../../src/trust/index.js";
import { runCli } from "../helpers/cli.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const ALICE = generateKeyPair("ed25519");
const BOB = generateKeyPair("ed25519");
const BOB_TOKEN = "token-bob-approver-0123456789";
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();
const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

describe("POST /v1/apae/lift", () => {
  let s: Sidecar;
  beforeAll(async () => {
    s = await startTestSidecar({
      config: {
        apae: { profile: "relaxed" },
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
              publicKeys: [pem(ALICE)],
            },
            { id: "bob", roles: ["approver"], tokenSha256: hashToken(BOB_TOKEN), publicKeys: [pem(BOB)] },
            { id: "audrey", roles: ["auditor"], tokenSha256: hashToken(TOKENS.auditor) },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await s.stop();
  });

  const apae = () => {
    const a = s.server.runtime.apae;
    if (a === undefined) throw new Error("apae is off");
    return a;
  };

  async function quarantineAgentA(): Promise<void> {
    for (let i = 0; i < 10 && apae().viewOf("agent-a").status !== "quarantined"; i++) {
      await s.call("/v1/decide", {
        token: TOKENS.agentA,
        body: echo("rm x", { runId: await s.run(`q${i}`) }),
      });
      await apae().settled();
    }
    expect(apae().viewOf("agent-a").status).toBe("quarantined");
  }

  const record = (over: Record<string, unknown> = {}) => ({
    scope: "apae:quarantine_lift",
    truster: apae().engine.config.self_id,
    subject: "agent-a",
    quarantine_count: apae().viewOf("agent-a").quarantineCount,
    issued_at: isoTime(Date.now() - 1000),
    reason: "false positive",
    ...over,
  });
  const lift = (token: string, body: unknown) => s.call("/v1/apae/lift", { token, body });

  it("refuses agents, non-approvers, unsigned and foreign records; alice's own signed lift releases the agent", async () => {
    const open = await s.run("held");
    await quarantineAgentA();
    const refusedRun = await s.call("/v1/runs", { token: TOKENS.agentA, body: {} });
    expect([refusedRun.status, code(refusedRun)]).toEqual([503, "ERR_TRUST_QUARANTINED"]);
    const signed = signLift(record(), ALICE);
    // An agent credential can never lift, even holding a valid signed record.
    const asAgent = await lift(TOKENS.agentA, signed);
    expect([asAgent.status, code(asAgent)]).toEqual([403, "ERR_AUTH_FORBIDDEN"]);
    const asAuditor = await lift(TOKENS.auditor, signed);
    expect([asAuditor.status, code(asAuditor)]).toEqual([403, "ERR_APPROVAL_FORBIDDEN"]);
    const unsigned = await lift(TOKENS.approver, { lift: signed.lift });
    expect([unsigned.status, code(unsigned)]).toEqual([401, "ERR_TRUST_LIFT_UNSIGNED"]);
    // Bob's record presented by alice: only alice's own keys count for alice.
    const bobs = await lift(TOKENS.approver, signLift(record(), BOB));
    expect([bobs.status, code(bobs)]).toEqual([403, "ERR_TRUST_LIFT_APPROVER_UNKNOWN"]);
    const forged = await lift(TOKENS.approver, { ...signed, lift: { ...signed.lift, reason: "edited" } });
    expect([forged.status, code(forged)]).toEqual([401, "ERR_TRUST_LIFT_SIGNATURE_INVALID"]);
    const held = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: echo("hi", { runId: open }),
    });
    expect(held.body.decision).toBe("deny");

    const ok = await lift(TOKENS.approver, signed);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ subject: "agent-a", approver: "alice", principalLifted: true });
    const after = await s.call("/v1/decide", {
      token: TOKENS.agentA,
      body: echo("hi", { runId: await s.run("free") }),
    });
    expect([after.status, after.body.decision]).toEqual([200, "allow"]);

    const replay = await lift(TOKENS.approver, signed);
    expect([replay.status, code(replay)]).toEqual([409, "ERR_TRUST_NOT_QUARANTINED"]);
  });

  it("warden trust lift signs with the approver's key file and presents the record with --url", async () => {
    await quarantineAgentA();
    const key = saveKeyPair(ALICE, s.dir, { name: "alice-approver" }).privatePem;
    const args = ["trust", "lift", "agent-a", "--key", key, "--reason", "reviewed"];
    const count = String(apae().viewOf("agent-a").quarantineCount);
    const printed = await runCli(...args, "--count", count);
    expect(printed.code, printed.err).toBe(0);
    expect(JSON.parse(printed.out)).toMatchObject({
      lift: { subject: "agent-a", scope: "apae:quarantine_lift" },
    });
    process.env.WARDEN_OPERATOR_TOKEN = TOKENS.auditor;
    const refused = await runCli(...args, "--count", count, "--url", s.url);
    expect([refused.code, refused.err]).toEqual([
      1,
      expect.stringMatching(/HTTP 403.*ERR_APPROVAL_FORBIDDEN/),
    ]);
    process.env.WARDEN_OPERATOR_TOKEN = TOKENS.approver;
    const stale = await runCli(...args, "--count", String(Number(count) - 1), "--url", s.url);
    expect([stale.code, stale.err]).toEqual([1, expect.stringMatching(/HTTP 409.*ERR_TRUST_LIFT_STALE/)]);
    const ok = await runCli(...args, "--count", count, "--url", s.url);
    delete process.env.WARDEN_OPERATOR_TOKEN;
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ subject: "agent-a", principalLifted: true });
    expect(apae().viewOf("agent-a").status).toBe("active");
  });

  it("is declared in the OpenAPI document", async () => {
    const doc = await s.call("/v1/openapi.json", { token: TOKENS.approver });
    const paths = (doc.body.paths ?? {}) as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths["/v1/apae/lift"] ?? {})).toContain("post");
  });
});
