// `warden quarantine list|lift` against a running sidecar: an operator lists every active
// quarantine; an approver signs the lift of a principal quarantine with a key file and
// presents it with their own operator credential. The attacks it must not open: the agent
// lifts its own quarantine with its credential (even holding a record an approver signed),
// an approver's record signed with someone else's key, a record naming another principal.
// None of them lifts the quarantine: the agent's calls stay denied until the genuine lift.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, type KeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { hashToken } from "../../src/server/index.js";
import { runCli } from "../helpers/cli.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const ALICE = generateKeyPair("ed25519");
const MALLORY = generateKeyPair("ed25519");
const pem = (k: KeyPair) => k.publicKey.export({ type: "spki", format: "pem" }).toString();
const REASON = "denials reviewed with the agent's owner";

let s: Sidecar;
let aliceKey: string;
let malloryKey: string;

beforeAll(async () => {
  s = await startTestSidecar({
    config: {
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
          { id: "audrey", roles: ["auditor"], tokenSha256: hashToken(TOKENS.auditor) },
        ],
      },
    },
  });
  aliceKey = saveKeyPair(ALICE, s.dir, { name: "alice" }).privatePem;
  malloryKey = saveKeyPair(MALLORY, s.dir, { name: "mallory" }).privatePem;
});

afterAll(async () => {
  delete process.env.WARDEN_OPERATOR_TOKEN;
  await s.stop();
});

/** As `token`: the CLI with $WARDEN_OPERATOR_TOKEN set to it. */
async function as(token: string, ...args: string[]) {
  process.env.WARDEN_OPERATOR_TOKEN = token;
  try {
    return await runCli(...args);
  } finally {
    delete process.env.WARDEN_OPERATOR_TOKEN;
  }
}

/** agent-a's harmless call: denied while its principal is quarantined. */
async function agentWorks(): Promise<boolean> {
  const r = await s.call("/v1/decide", {
    token: TOKENS.agentA,
    body: echo("hello", { runId: await s.run(`w${Date.now()}`) }),
  });
  return r.body.decision === "allow";
}

const lift = (...extra: string[]) => ["quarantine", "lift", "agent-a", "--reason", REASON, ...extra];

describe("warden quarantine list|lift", () => {
  let id: string;

  it("lists the denial threshold's quarantine for an auditor, with the id a lift names; an agent cannot list", async () => {
    const runId = await s.run("trip");
    for (let i = 0; i < 6; i++)
      await s.call("/v1/decide", { token: TOKENS.agentA, body: echo("rm -rf x", { runId }) });
    expect(await agentWorks()).toBe(false);
    const text = await as(TOKENS.auditor, "quarantine", "list", "--url", s.url);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/principal agent-a: denial_threshold/);
    const json = await as(TOKENS.auditor, "quarantine", "list", "--url", s.url, "--json");
    const entry = (JSON.parse(json.out) as { principalId: string; quarantineId: string }[]).find(
      (q) => q.principalId === "agent-a",
    );
    id = entry?.quarantineId ?? "";
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(text.out).toContain(id);
    const agent = await as(TOKENS.agentA, "quarantine", "list", "--url", s.url);
    expect([agent.code, agent.err]).toEqual([1, expect.stringMatching(/HTTP 403/)]);
  });

  it("the agent presenting an approver's signed record, a record signed with another key, or one for another principal: refused, still quarantined", async () => {
    const record = await runCli(...lift("--key", aliceKey, "--approver", "alice", "--quarantine-id", id));
    expect(record.code, record.err).toBe(0);
    expect(JSON.parse(record.out)).toMatchObject({
      lift: { scope: "warden:principal_quarantine_lift", principal: "agent-a", quarantine_id: id },
    });
    const byAgent = await as(
      TOKENS.agentA,
      ...lift("--key", aliceKey, "--approver", "alice", "--quarantine-id", id, "--url", s.url),
    );
    expect([byAgent.code, byAgent.err]).toEqual([1, expect.stringMatching(/lift refused \(HTTP 403\)/)]);
    const forged = await as(
      TOKENS.approver,
      ...lift("--key", malloryKey, "--approver", "alice", "--url", s.url),
    );
    expect([forged.code, forged.err]).toEqual([1, expect.stringMatching(/ERR_TRUST_LIFT_APPROVER_UNKNOWN/)]);
    const other = await as(
      TOKENS.approver,
      "quarantine",
      "lift",
      "agent-b",
      "--reason",
      REASON,
      "--key",
      aliceKey,
      "--approver",
      "alice",
      "--quarantine-id",
      id,
      "--url",
      s.url,
    );
    expect([other.code, other.err]).toEqual([1, expect.stringMatching(/lift refused \(HTTP 4\d\d\)/)]);
    expect(await agentWorks()).toBe(false);
  });

  it("the approver's own signed lift, presented with their credential, ends it (id looked up); the agent works again", async () => {
    const ok = await as(TOKENS.approver, ...lift("--key", aliceKey, "--approver", "alice", "--url", s.url));
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toMatchObject({ principalId: "agent-a", quarantineId: id, approver: "alice" });
    expect(await agentWorks()).toBe(true);
    const after = await as(TOKENS.auditor, "quarantine", "list", "--url", s.url);
    expect(after.out).not.toMatch(/agent-a/);
    const again = await as(
      TOKENS.approver,
      ...lift("--key", aliceKey, "--approver", "alice", "--url", s.url),
    );
    expect([again.code, again.err]).toEqual([1, expect.stringMatching(/no active principal quarantine/)]);
  });
});
