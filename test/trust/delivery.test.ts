// Notifications to peers are retried, bounded, with backoff: a peer that is down or
// overloaded (unreachable, 429, 5xx) gets another attempt; a refusal (4xx) is final; when
// every attempt failed the give-up is journaled (warden.trust.delivery_failed).
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPair, saveKeyPair } from "../../src/crypto/index.js";
import { composeRuntime, type Runtime } from "../../src/runtime/index.js";
import { TRUST_DELIVERY_FAILED_EVENT } from "../../src/trust/index.js";

const opened: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
});

/** A peer that answers the given statuses in order (the last one repeats). */
async function peer(statuses: number[]): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    const status = statuses[Math.min(hits, statuses.length - 1)] ?? 200;
    hits++;
    res.writeHead(status, { "content-type": "application/json" });
    res.end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  opened.push({ close: () => new Promise<void>((r) => server.close(() => r())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

async function runtimeWithPeer(url: string): Promise<Runtime> {
  const dir = mkdtempSync(join(tmpdir(), "warden-delivery-"));
  writeFileSync(join(dir, "policy.yaml"), "rules: []\n");
  const own = saveKeyPair(generateKeyPair("p256"), dir, { name: "own" });
  const other = saveKeyPair(generateKeyPair("p256"), dir, { name: "other" });
  const rt = await composeRuntime({
    policy: [join(dir, "policy.yaml")],
    journal: { path: join(dir, "journal.db"), signer: generateKeyPair("ed25519") },
    gate: { principals: { "agent-1": { id: "agent-1", roles: [] } } },
    apae: {
      ect: { issuer: "sidecar-a", key: own.privatePem },
      peers: [{ id: "sidecar-b", url, key: other.publicPem }],
      delivery: { attempts: 3, backoffMs: 5 },
    },
  });
  opened.push(rt);
  return rt;
}

describe("notification retries", () => {
  it("a peer that is overloaded twice gets the notification on the third attempt", async () => {
    const p = await peer([503, 429, 200]);
    const rt = await runtimeWithPeer(p.url);
    expect(await rt.apae?.assertTo("agent-1", "sidecar-b")).toMatchObject({ status: 200 });
    expect(p.hits()).toBe(3);
    expect(await rt.store.query({ type: TRUST_DELIVERY_FAILED_EVENT })).toEqual([]);
  });

  it("a peer that refuses (400) is not retried", async () => {
    const p = await peer([400]);
    const rt = await runtimeWithPeer(p.url);
    expect(await rt.apae?.assertTo("agent-1", "sidecar-b")).toMatchObject({ status: 400 });
    expect(p.hits()).toBe(1);
  });

  it("a peer that stays down is tried a bounded number of times, and the give-up is journaled", async () => {
    const p = await peer([500]);
    const rt = await runtimeWithPeer(p.url);
    const d = await rt.apae?.assertTo("agent-1", "sidecar-b");
    expect(d).toMatchObject({ status: 500 });
    expect(p.hits()).toBe(3);
    const failed = await rt.store.query({ type: TRUST_DELIVERY_FAILED_EVENT });
    expect(failed.map((e) => e.body)).toEqual([
      { peer: "sidecar-b", jti: d?.jti, exec_act: "apae:trust_assertion", attempts: 3, last_status: 500 },
    ]);
  });

  it("an unreachable peer is given up after the same bound (status null)", async () => {
    const rt = await runtimeWithPeer("http://127.0.0.1:9");
    expect(await rt.apae?.assertTo("agent-1", "sidecar-b")).toMatchObject({ status: null });
    const failed = await rt.store.query({ type: TRUST_DELIVERY_FAILED_EVENT });
    expect(failed.map((e) => e.body)).toEqual([expect.objectContaining({ attempts: 3, last_status: null })]);
  });
});
