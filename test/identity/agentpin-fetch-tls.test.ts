// The AgentPin discovery fetcher against a real TLS server on loopback: a document is read
// with its Cache-Control max-age; a redirect, an oversized or non-JSON body, a certificate
// nobody trusts and (without the test opt-in) a loopback address are all refused. The
// certificate is a throwaway one made by openssl for this run; no key is committed.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPinFetcher } from "../../src/runtime/index.js";

const DOC = { entity: "agents.test", public_keys: [], agents: [] };
let dir: string;
let server: Server;
let cert: string;
let base: string;

function throwawayCertificate(): { key: string; cert: string } {
  const r = spawnSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=agents.test",
      "-addext",
      "subjectAltName=DNS:agents.test",
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0)
    throw new Error(
      `this test makes a throwaway TLS certificate with openssl; install it (apt-get install -y openssl): ${r.error?.message ?? r.stderr}`,
    );
  return {
    key: readFileSync(join(dir, "key.pem"), "utf8"),
    cert: readFileSync(join(dir, "cert.pem"), "utf8"),
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warden-agentpin-tls-"));
  const pair = throwawayCertificate();
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
