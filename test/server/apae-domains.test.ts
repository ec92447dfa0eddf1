// Trust domains at the sidecar: the trust anchor document, cross-domain delegation only
// under a bilateral agreement (emitting apae:cross_domain_assertion), cross-domain scores
// kept apart from the deployment's own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { crossDomainTruster } from "../../src/trust/index.js";
import { echo, type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const keyFiles = saveKeyPair(generateKeyPair("p256"), mkdtempSync(join(tmpdir(), "warden-dom-")), {
  name: "ect",
});
const ANCHOR = {
  domain: "example.com",
  trust_anchor_type: "jwks" as const,
  trust_anchor_uri: "https://example.com/.well-known/jwks.json",
  contact: "trust-admin@example.com",
};
const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
const payloadOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));

describe("trust domains", () => {
  let s: Sidecar;
  beforeAll(async () => {
    s = await startTestSidecar({
      config: {
        apae: {
          ect: { issuer: "sidecar-x", key: keyFiles.privatePem },
          domain: ANCHOR,
          agreements: [
            { domain: "hospital.example", id: "agreement-2026-001", default_trust: 0.3 },
            { domain: "bank.example", id: "agreement-2026-002", default_trust: 0.6, min_assurance: "L3" },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await s.stop();
  });

  it("serves the trust anchor document without a credential", async () => {
    const r = await s.call("/.well-known/apae/trust-anchor");
    expect([r.status, r.body]).toEqual([200, ANCHOR]);
  });

  it("a delegation to a domain without an agreement is rejected", async () => {
    const r = await s.call("/v1/apae/delegations", {
      token: TOKENS.agentA,
      body: { to: "planner", domain: "unknown.example" },
    });
    expect([r.status, code(r)]).toEqual([403, "ERR_TRUST_DOMAIN_NO_AGREEMENT"]);
    const self = await s.call("/v1/apae/delegations", {
      token: TOKENS.agentA,
      body: { to: "planner", domain: "example.com" },
    });
    expect([self.status, code(self)]).toEqual([403, "ERR_TRUST_DOMAIN_NO_AGREEMENT"]);
  });

  it("a delegation below the agreement's minimum assurance is rejected", async () => {
    const r = await s.call("/v1/apae/delegations", {
      token: TOKENS.agentA,
      body: { to: "teller", domain: "bank.example" },
    });
    expect([r.status, code(r)]).toEqual([403, "ERR_TRUST_DOMAIN_ASSURANCE"]);
  });

  it("under an agreement: a signed cross-domain assertion, the delegatee at default_trust in a table of its own", async () => {
    const r = await s.call("/v1/apae/delegations", {
      token: TOKENS.agentA,
      body: { to: "planner", domain: "hospital.example" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ score: 0.3, agreement: "agreement-2026-001" });
    const claims = payloadOf(String(r.body.ect));
    expect(claims).toMatchObject({
      exec_act: "apae:cross_domain_assertion",
      iss: "sidecar-x",
      aud: "hospital.example",
      ext: {
        "apae.source_domain": "example.com",
        "apae.dest_domain": "hospital.example",
        "apae.bilateral_agreement_ref": "agreement-2026-001",
        "apae.min_assurance": "L2",
      },
    });
    const apae = s.server.runtime.apae;
    expect((await apae?.engine.view("planner", crossDomainTruster("hospital.example")))?.score).toBe(0.3);
    // The deployment's own table knows nothing of it.
    const local = await s.call("/v1/apae/trust/planner", { token: TOKENS.approver });
    expect(local.body).toMatchObject({ score: 0.5, interactions: 0 });
  });

  it("a quarantined agent cannot delegate (503 + Retry-After)", async () => {
    const run = await s.run("q", TOKENS.agentB);
    for (const m of ["rm a", "rm b", "rm c"]) {
      await s.call("/v1/decide", { token: TOKENS.agentB, body: echo(m, { runId: run }) });
    }
    await s.server.runtime.apae?.settled();
    const r = await s.call("/v1/apae/delegations", {
      token: TOKENS.agentB,
      body: { to: "planner", domain: "hospital.example" },
    });
    expect([r.status, code(r)]).toEqual([503, "ERR_TRUST_QUARANTINED"]);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("without a trust domain", () => {
  it("there is no trust anchor", async () => {
    const s = await startTestSidecar({ config: { apae: {} } });
    try {
      const r = await s.call("/.well-known/apae/trust-anchor");
      expect([r.status, code(r)]).toEqual([404, "ERR_SERVER_NOT_FOUND"]);
    } finally {
      await s.stop();
    }
  });
});
