import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import type { Resolver } from "../../src/executors/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { crossDomainTruster } from "../../src/trust/index.js";
import { throwawayCertificate } from "../helpers/tls-cert.js";

const PEER = "peer.test";
let server: Server;
let cert: string;
let port: number;
let hits = 0;

beforeAll(async () => {
  const pair = await throwawayCertificate(PEER);
  cert = pair.cert;
  const anchor = (domain: string) =>
    JSON.stringify({ domain, trust_anchor_type: "jwks", trust_anchor_uri: `https://${domain}/jwks.json` });
  server = createServer({ key: pair.key, cert }, (req, res) => {
    hits++;
    if (req.url === "/.well-known/apae/trust-anchor") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=600" });
      res.end(anchor(PEER));
    } else if (req.url === "/redirect") {
      res.writeHead(302, { location: "https://169.254.169.254/latest/meta-data/" });
      res.end();
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ pad: "x".repeat(64 * 1024) }));
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(anchor("other.test"));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
});

const loopback: Resolver = async () => [{ address: "127.0.0.1", family: 4 }];
const metadata: Resolver = async () => [{ address: "169.254.169.254", family: 4 }];

async function deployment(path: string, resolver: Resolver = loopback): Promise<Runtime> {
  const d = mkdtempSync(join(tmpdir(), "warden-anchor-rt-"));
  writeFileSync(join(d, "policy.yaml"), "rules: []\n");
  const own = saveKeyPair(generateKeyPair("p256"), d, { name: "own" });
  const rt = await composeRuntime({
    policy: [join(d, "policy.yaml")],
    journal: { path: join(d, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: { principals: { "agent-1": { id: "agent-1", roles: [] } } },
    apae: {
      ect: { issuer: "sidecar-a", key: own.privatePem },
      domain: {
        domain: "home.test",
        trust_anchor_type: "jwks",
        trust_anchor_uri: "https://home.test/jwks.json",
      },
      agreements: [
        {
          domain: PEER,
          id: "agr-1",
          default_trust: 0.4,
          min_assurance: "L2",
          fetch_anchor: true,
          anchor_url: `https://${PEER}:${port}${path}`,
        },
      ],
      anchorFetch: { resolver, allowLoopback: true, ca: cert, maxBytes: 4096, timeoutMs: 2000 },
    },
  });
  opened.push(rt);
  return rt;
}

async function refused(rt: Runtime): Promise<string> {
  const r = await rt.apae?.delegate("agent-1", "agent-x", PEER);
  expect(r).toMatchObject({ ok: false, code: "ERR_TRUST_DOMAIN_ANCHOR_UNAVAILABLE" });
  // Nothing recorded for the refused delegation.
  expect(await rt.apae?.engine.store.get(crossDomainTruster(PEER), "agent-x")).toBeUndefined();
  return r !== undefined && !r.ok ? r.message : "";
}

describe("a peer domain's trust anchor, fetched before a cross-domain delegation", () => {
  it("is fetched once over TLS, cached, and named in the cross-domain assertion", async () => {
    const rt = await deployment("/.well-known/apae/trust-anchor");
    const before = hits;
    const first = await rt.apae?.delegate("agent-1", "agent-x", PEER);
    expect(first).toMatchObject({ ok: true, agreement: "agr-1", score: 0.4 });
    const second = await rt.apae?.delegate("agent-1", "agent-y", PEER);
    expect(second?.ok).toBe(true);
    expect(hits - before).toBe(1);
    const token = first?.ok ? first.token : "";
    const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    expect(claims.ext["apae.dest_trust_anchor"]).toBe(`https://${PEER}/jwks.json`);
  });

  it("a redirect toward the metadata address is not followed", async () => {
    expect(await refused(await deployment("/redirect"))).toMatch(/HTTP 302/);
  });

  it("an oversized anchor document is refused", async () => {
    expect(await refused(await deployment("/big"))).toMatch(/larger than 4096/);
  });

  it("a peer name that resolves to the metadata address is refused before any connection", async () => {
    const before = hits;
    expect(await refused(await deployment("/.well-known/apae/trust-anchor", metadata))).toMatch(/SSRF/);
    expect(hits).toBe(before);
  });

  it("a document that names another domain is refused", async () => {
    expect(await refused(await deployment("/other"))).toMatch(/names other.test/);
  });
});
