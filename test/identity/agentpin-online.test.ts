// The online resolver (well-known documents through an injected port) and the runtime's
// SSRF-guarded port: documents cached for their max-age (bounded), one re-fetch for an
// unknown kid (a rotated key), revocation failing closed, and fetches refused for private
// and loopback answers and for look-alike domains.
import { describe, expect, it } from "vitest";
import { type FetchJson, KeyPinStore, OnlineResolver, verifyCredential } from "../../src/identity/index.js";
import { agentPinFetcher } from "../../src/runtime/index.js";
import { issue, makeDomain, NOW } from "./agentpin-fixture.js";

/** An in-memory document host standing in for https servers, counting requests. */
function host(docs: Record<string, unknown>, maxAge?: number) {
  const hits: string[] = [];
  const fetchJson: FetchJson = async (url) => {
    hits.push(url);
    const body = docs[url];
    if (body === undefined) return { ok: false, message: `404 ${url}` };
    return maxAge === undefined ? { ok: true, body } : { ok: true, body, maxAgeSeconds: maxAge };
  };
  return { hits, fetchJson, docs };
}

const WK = (d: string) => `https://${d}/.well-known/agent-identity.json`;
const REV = (d: string) => `https://${d}/.well-known/agent-identity-revocations.json`;
const emptyRev = (d: string) => ({ agentpin_version: "0.1", entity: d, updated_at: "2026-01-01T00:00:00Z" });

describe("AgentPin online resolution", () => {
  const acme = makeDomain("acme.example");

  it("caches the discovery document for its max-age and re-reads it after", async () => {
    let now = NOW;
    const h = host({ [WK("acme.example")]: acme.doc, [REV("acme.example")]: emptyRev("acme.example") }, 60);
    const source = new OnlineResolver({ fetchJson: h.fetchJson, now: () => now });
    const run = () => verifyCredential(issue(acme), { source, pins: new KeyPinStore(), now });
    expect((await run()).result.valid).toBe(true);
    expect((await run()).result.valid).toBe(true);
    expect(h.hits.filter((u) => u === WK("acme.example"))).toHaveLength(1);
    now += 61;
    await run();
    expect(h.hits.filter((u) => u === WK("acme.example"))).toHaveLength(2);
  });

  it("a cached document without the credential's kid is re-fetched once (key rotation)", async () => {
    const rotated = makeDomain("acme.example", { kid: "acme.example-2026-02" });
    const h = host({ [WK("acme.example")]: acme.doc, [REV("acme.example")]: emptyRev("acme.example") }, 3600);
    const source = new OnlineResolver({ fetchJson: h.fetchJson, now: () => NOW });
    await verifyCredential(issue(acme), { source, pins: new KeyPinStore(), now: NOW });
    h.docs[WK("acme.example")] = rotated.doc;
    const v = await verifyCredential(issue(rotated), { source, pins: new KeyPinStore(), now: NOW });
    expect(v.result.valid).toBe(true);
  });

  it("an unreachable revocation endpoint fails closed (DISCOVERY_FETCH_FAILED)", async () => {
    const h = host({ [WK("acme.example")]: acme.doc });
    const v = await verifyCredential(issue(acme), {
      source: new OnlineResolver({ fetchJson: h.fetchJson, now: () => NOW }),
      pins: new KeyPinStore(),
      now: NOW,
    });
    expect(v.result.error_code).toBe("DISCOVERY_FETCH_FAILED");
  });

  it("a look-alike (non-ASCII) issuer is never fetched", async () => {
    const h = host({});
    const source = new OnlineResolver({ fetchJson: h.fetchJson, now: () => NOW });
    expect((await source.discovery("\u0430cme.example")).ok).toBe(false);
    expect(h.hits).toEqual([]);
  });
});

describe("the runtime's SSRF-guarded AgentPin fetcher", () => {
  const resolveTo = (address: string) => async () => [{ address, family: 4 as const }];

  it("refuses a domain that resolves to a private address", async () => {
    const r = await agentPinFetcher({ resolver: resolveTo("10.0.0.7") })(WK("acme.example"));
    expect(r).toMatchObject({ ok: false });
    expect(r.ok ? "" : r.message).toMatch(/SSRF/);
  });

  it("refuses the cloud metadata address and loopback (unless allowed)", async () => {
    expect((await agentPinFetcher({ resolver: resolveTo("169.254.169.254") })(WK("acme.example"))).ok).toBe(
      false,
    );
    const lo = await agentPinFetcher({ resolver: resolveTo("127.0.0.1") })(WK("acme.example"));
    expect(lo.ok ? "" : lo.message).toMatch(/SSRF/);
  });

  it("refuses plain http and URLs with credentials", async () => {
    expect((await agentPinFetcher()("http://acme.example/.well-known/agent-identity.json")).ok).toBe(false);
    expect((await agentPinFetcher()("https://u:p@acme.example/x")).ok).toBe(false);
  });
});
