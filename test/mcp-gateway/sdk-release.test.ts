// A flood of calls on one gateway session grew the gateway without bound: the MCP SDK's
// Streamable HTTP transport in JSON response mode (the gateway's mode) keeps every answered
// request's stream entry, with the request, its headers and its body stream, until the
// session ends. Played against the real SDK transport: without the gateway's release the
// entries pile up one per request (so an SDK that fixes this is noticed), with it none is
// held once answered, and requests still get their own answers.
import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { heldStreams, releaseAnswered } from "../../src/mcp-gateway/sdk-release.js";

let http: HttpServer | undefined;
afterEach(async () => {
  http?.closeAllConnections();
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
  http = undefined;
});

async function serve(release: boolean): Promise<{ transport: StreamableHTTPServerTransport; url: string }> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
  });
  await new Server({ name: "t", version: "1" }, { capabilities: {} }).connect(transport);
  http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (release) res.once("close", () => releaseAnswered(transport));
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((r) => http?.listen(0, "127.0.0.1", r));
  return { transport, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp` };
}

async function post(url: string, body: unknown, sid?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(sid === undefined ? {} : { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" }),
    },
    body: JSON.stringify(body),
  });
}

async function pings(url: string, n: number): Promise<unknown[]> {
  const init = await post(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
  });
  const sid = init.headers.get("mcp-session-id") ?? "";
  await init.text();
  await (await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).text();
  const out: unknown[] = [];
  for (let i = 1; i <= n; i++)
    out.push(await (await post(url, { jsonrpc: "2.0", id: i, method: "ping" }, sid)).json());
  return out;
}

describe("a flood of calls on one session keeps every answered request in memory", () => {
  it("the SDK alone holds one stream entry per answered request", async () => {
    const { transport, url } = await serve(false);
    await pings(url, 50);
    expect(heldStreams(transport)).toBeGreaterThanOrEqual(50);
  });

  it("with the gateway's release none is held once answered, and every answer is the request's own", async () => {
    const { transport, url } = await serve(true);
    const answers = await pings(url, 50);
    expect(answers.map((a) => (a as { id: number }).id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // The last answer's close may run just after the client read it.
    for (let i = 0; i < 100 && heldStreams(transport) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(heldStreams(transport)).toBe(0);
  });
});
