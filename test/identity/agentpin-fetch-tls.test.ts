import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPinFetcher } from "../../src/runtime/index.js";
import { throwawayCertificate } from "../helpers/tls-cert.js";

const DOC = { entity: "agents.test", public_keys: [], agents: [] };
let dir: string;
let server: Server;
let cert: string;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-agentpin-tls-"));
  const pair = await throwawayCertificate("agents.test");
  cert = pair.cert;
  server = createServer(pair, (req, res) => {
    if (req.url === "/.well-known/agent-identity.json") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "public, max-age=120" });
      res.end(JSON.stringify(DOC));
    } else if (req.url === "/redirect") {
      res.writeHead(302, { location: "https://169.254.169.254/latest/meta-data" });
      res.end();
    } else if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ pad: "x".repeat(64 * 1024) }));
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{not json");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `https://agents.test:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const loopback = async () => [{ address: "127.0.0.1", family: 4 as const }];

describe("AgentPin discovery fetch over TLS", () => {
  it("reads a discovery document and passes its max-age to the resolver's cache", async () => {
    const fetch = agentPinFetcher({ resolver: loopback, allowLoopback: true, ca: cert });
    expect(await fetch(`${base}/.well-known/agent-identity.json`)).toEqual({
      ok: true,
      body: DOC,
      maxAgeSeconds: 120,
    });
  });

  it("a redirect toward the metadata address is not followed", async () => {
    const fetch = agentPinFetcher({ resolver: loopback, allowLoopback: true, ca: cert });
    const r = await fetch(`${base}/redirect`);
    expect(r).toMatchObject({ ok: false });
    expect(r.ok ? "" : r.message).toMatch(/HTTP 302/);
  });

  it("an oversized document and a body that is not JSON are refused", async () => {
    const fetch = agentPinFetcher({ resolver: loopback, allowLoopback: true, ca: cert, maxBytes: 4096 });
    expect(await fetch(`${base}/big`)).toMatchObject({ ok: false, message: expect.stringMatching(/larger/) });
    expect(await fetch(`${base}/junk`)).toMatchObject({ ok: false, message: expect.stringMatching(/JSON/) });
  });

  it("a server whose certificate no trusted CA signed is refused", async () => {
    const fetch = agentPinFetcher({ resolver: loopback, allowLoopback: true });
    expect(await fetch(`${base}/.well-known/agent-identity.json`)).toMatchObject({ ok: false });
  });

  it("a name that resolves to loopback is refused without the explicit opt-in (SSRF rule)", async () => {
    const fetch = agentPinFetcher({ resolver: loopback, ca: cert });
    const r = await fetch(`${base}/.well-known/agent-identity.json`);
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/loopback/) });
  });
});
