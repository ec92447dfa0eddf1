// Fetching discovery documents: https only (loopback http with an explicit opt-in, as
// here), no redirects, size cap, timeout. A local server stands in for the publisher.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDocumentUrl, fetchJsonDocument, wellKnownUrl } from "../../../src/tools/integrity/index.js";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    switch (req.url) {
      case "/.well-known/schemapin.json":
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ public_key_pem: "x", developer_name: "d" }));
        return;
      case "/redirect":
        res.statusCode = 302;
        res.setHeader("location", "/.well-known/schemapin.json");
        res.end();
        return;
      case "/big":
        res.write(`{"pad":"${"a".repeat(300 * 1024)}"}`);
        res.end();
        return;
      case "/dup":
        res.end('{"public_key_pem":"a","public_key_pem":"b"}');
        return;
      case "/slow":
        setTimeout(() => res.end("{}"), 2000);
        return;
      case "/html":
        res.end("<html>");
        return;
      default:
        res.statusCode = 404;
        res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("fetchJsonDocument", () => {
  it("fetches and strictly parses a document (loopback http opted in)", async () => {
    const r = await fetchJsonDocument(wellKnownUrl(base), { allowLoopbackHttp: true });
    expect(r).toMatchObject({ ok: true, value: { developer_name: "d" } });
  });

  it("plain http is refused without the opt-in, and for non-loopback hosts even with it", async () => {
    expect(await fetchJsonDocument(`${base}/.well-known/schemapin.json`)).toMatchObject({
      ok: false,
      code: "ERR_INTEGRITY_FETCH",
    });
    expect(() => checkDocumentUrl("http://example.com/x", true)).toThrow(
      expect.objectContaining({ code: "ERR_INTEGRITY_FETCH" }),
    );
    expect(() => checkDocumentUrl("http://127.0.0.1.evil.example/x", true)).toThrow(
      expect.objectContaining({ code: "ERR_INTEGRITY_FETCH" }),
    );
    expect(checkDocumentUrl("http://[::1]:8080/x", true).hostname).toBe("[::1]");
  });

  it.each(["file:///etc/passwd", "ftp://example.com/x", "not a url", "https://user:pw@example.com/x"])(
    "refuses %s",
    (url) => {
      expect(() => checkDocumentUrl(url, true)).toThrow(
        expect.objectContaining({ code: "ERR_INTEGRITY_FETCH" }),
      );
    },
  );

  it.each([
    ["a redirect (not followed)", "/redirect"],
    ["a body over the cap", "/big"],
    ["duplicate keys", "/dup"],
    ["not JSON", "/html"],
    ["a 404", "/nope"],
  ])("%s → ERR_INTEGRITY_FETCH", async (_l, path) => {
    const r = await fetchJsonDocument(`${base}${path}`, { allowLoopbackHttp: true });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_FETCH" });
  });

  it("times out", async () => {
    const r = await fetchJsonDocument(`${base}/slow`, { allowLoopbackHttp: true, timeoutMs: 100 });
    expect(r).toMatchObject({ ok: false, code: "ERR_INTEGRITY_FETCH" });
    if (!r.ok) expect(r.message).toContain("timed out");
  });

  it("wellKnownUrl appends the well-known path only to a bare origin", () => {
    expect(wellKnownUrl("https://example.com")).toBe("https://example.com/.well-known/schemapin.json");
    expect(wellKnownUrl("https://example.com/custom.json")).toBe("https://example.com/custom.json");
  });
});
