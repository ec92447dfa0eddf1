// The quarantine protocol between two sidecars on loopback: an operator sends sidecar A's
// signed view of agent-a to sidecar B; agent-a's violations quarantine it at A; A
// broadcasts the signed apae:quarantine to B, which verifies it and updates its table;
// both refuse agent-a new runs with 503 + Retry-After; operator routes keep working.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { EctEmitter, ectClaims, encodeEct } from "../../src/trust/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const keys = mkdtempSync(join(tmpdir(), "warden-apae-keys-"));
const A = generateKeyPair("p256");
const B = generateKeyPair("p256");
const ROGUE = generateKeyPair("p256");
const aFiles = saveKeyPair(A, keys, { name: "a" });
const bFiles = saveKeyPair(B, keys, { name: "b" });

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;

function notice(subject: string, until: string) {
  return {
    exec_act: "apae:quarantine",
    aud: "sidecar-b",
    ext: {
      "apae.subject": subject,
      "apae.to_state": "quarantined",
      "apae.quarantine_until": until,
      "apae.reason": "forged",
    },
  };
}

describe("APAE quarantine protocol between two sidecars", () => {
  let a: Sidecar;
  let b: Sidecar;
  beforeAll(async () => {
    b = await startTestSidecar({
      config: {
        apae: {
          ect: { issuer: "sidecar-b", key: bFiles.privatePem },
          peers: [{ id: "sidecar-a", url: "http://127.0.0.1:9", key: aFiles.publicPem }],
        },
      },
    });
    a = await startTestSidecar({
      config: {
        apae: {
          ect: { issuer: "sidecar-a", key: aFiles.privatePem },
          peers: [{ id: "sidecar-b", url: b.url, key: bFiles.publicPem }],
        },
      },
    });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  const trustAt = async (s: Sidecar, subject: string) =>
    (await s.call(`/v1/apae/trust/${subject}`, { token: TOKENS.approver })).body;

  it("a forged quarantine notice (a key B does not hold for sidecar-a) is refused and changes nothing", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const forged = await new EctEmitter({
      level: "L2",
      issuer: "sidecar-a",
      key: { kid: A.keyId, privateKey: ROGUE.privateKey },
    }).emit(notice("agent-b", until));
    const r = await b.call("/v1/apae/notify", { body: { ect: forged.token } });
    expect([r.status, code(r)]).toEqual([401, "ERR_TRUST_ECT_SIGNATURE_INVALID"]);
    const unknownKid = await new EctEmitter({
      level: "L2",
      issuer: "sidecar-a",
      key: { kid: ROGUE.keyId, privateKey: ROGUE.privateKey },
    }).emit(notice("agent-b", until));
    const r2 = await b.call("/v1/apae/notify", { body: { ect: unknownKid.token } });
    expect([r2.status, code(r2)]).toEqual([401, "ERR_TRUST_ECT_KEY_UNKNOWN"]);
    const unsigned = await encodeEct(ectClaims(notice("agent-b", until), "sidecar-a", Date.now()), "L1");
    const r3 = await b.call("/v1/apae/notify", { body: { ect: unsigned } });
    expect([r3.status, code(r3)]).toEqual([401, "ERR_TRUST_ECT_UNSIGNED"]);
    expect((await trustAt(b, "agent-b")).status).toBe("active");
    // B still lets agent-b start runs.
    expect((await b.call("/v1/runs", { token: TOKENS.agentB, body: {} })).status).toBe(201);
  });

  it("a notice signed by A but addressed to another deployment is refused at B", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const other = await new EctEmitter({
      level: "L2",
      issuer: "sidecar-a",
      key: { kid: A.keyId, privateKey: A.privateKey },
    }).emit({ ...notice("agent-b", until), aud: "sidecar-c" });
    const r = await b.call("/v1/apae/notify", { body: { ect: other.token } });
    expect([r.status, code(r)]).toEqual([400, "ERR_TRUST_ECT_MALFORMED"]);
    expect((await trustAt(b, "agent-b")).status).toBe("active");
  });

  it("a replayed notice is refused (409) while it is valid", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const emitter = new EctEmitter({
      level: "L2",
      issuer: "sidecar-a",
      key: { kid: A.keyId, privateKey: A.privateKey },
    });
    const once = await emitter.emit(notice("someone", until));
    const first = await b.call("/v1/apae/notify", { body: { ect: once.token } });
    expect(first.status).toBe(200);
    const again = await b.call("/v1/apae/notify", { body: { ect: once.token } });
    expect([again.status, code(again)]).toEqual([409, "ERR_TRUST_ECT_DUPLICATE"]);
  });

  it("an agent cannot send trust assertions (operator only)", async () => {
    const r = await a.call("/v1/apae/assertions", {
      token: TOKENS.agentA,
      body: { subject: "agent-b", peer: "sidecar-b" },
    });
    expect(r.status).toBe(403);
  });

  it("a quarantine at A is broadcast to B, and both refuse the agent new runs with 503 + Retry-After", async () => {
    const sent = await a.call("/v1/apae/assertions", {
      token: TOKENS.approver,
      body: { subject: "agent-a", peer: "sidecar-b" },
    });
    expect([sent.status, sent.body.status]).toEqual([200, 200]);
    expect((await trustAt(b, "agent-a")).status).toBe("active");

    const run = await a.run("violations");
    for (const m of ["rm a", "rm b", "rm c"]) {
      await a.call("/v1/decide", { token: TOKENS.agentA, body: echo(m, { runId: run }) });
    }
    await a.server.runtime.apae?.settled();
    const atA = await trustAt(a, "agent-a");
    expect(atA).toMatchObject({ status: "quarantined", quarantineCount: 1 });
    const atB = await trustAt(b, "agent-a");
    expect(atB).toMatchObject({ status: "quarantined", quarantineUntil: atA.quarantineUntil });

    for (const s of [a, b]) {
      const r = await s.call("/v1/runs", { token: TOKENS.agentA, body: {} });
      expect([r.status, code(r)]).toEqual([503, "ERR_TRUST_QUARANTINED"]);
      const retry = Number(r.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(3500);
      expect(retry).toBeLessThanOrEqual(3600);
    }
    // Operator routes keep working during the quarantine.
    expect((await a.call(`/v1/runs/${run}`, { token: TOKENS.approver })).status).toBe(200);
    expect((await a.call("/v1/journal/head", { token: TOKENS.approver })).status).toBe(200);
    // Another agent is unaffected.
    expect((await a.call("/v1/runs", { token: TOKENS.agentB, body: {} })).status).toBe(201);
  });
});
