// The gateway's HTTP listener under pressure: a body over the limit, more sessions than
// allowed, and clients that leave without closing their session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/index.js";
import { FIXTURE, type GatewayHarness, node, startGateway, TOKENS } from "./harness.js";

const POLICY = `
name: limits
version: "1.0"
rules:
  - { id: mcp, name: mcp, priority: 10, match: { toolClass: mcp, action: call }, decision: allow, reason: test }
`;

let h: GatewayHarness;
beforeAll(async () => {
  h = await startGateway({
    policy: POLICY,
    upstreams: { test: node(FIXTURE) },
    config: {
      http: {
        host: "127.0.0.1",
        port: 0,
        principals: [{ id: "agent-a", tokenSha256: hashToken(TOKENS.a) }],
        maxSessions: 1,
        sessionIdleMs: 1000,
        maxBodyBytes: 2048,
      },
    },
  });
}, 60_000);
afterAll(async () => h?.stop());

const init = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
});
const post = (body: string) =>
  fetch(h.http.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${TOKENS.a}`,
    },
    body,
  });

describe("gateway HTTP limits", () => {
  it("a body over http.maxBodyBytes is refused before the SDK parses it", async () => {
    const r = await post(JSON.stringify({ ...init(1), pad: "x".repeat(4096) }));
    expect(r.status).toBe(413);
    expect(await r.text()).toContain("ERR_MCP_DENIED");
  });

  it("a session beyond http.maxSessions is refused; an abandoned idle session makes room", async () => {
    const first = await post(JSON.stringify(init(2)));
    expect(first.status).toBe(200);
    const second = await post(JSON.stringify(init(3)));
    expect(second.status).toBe(503);
    expect(await second.text()).toContain("too many sessions");
    await new Promise((r) => setTimeout(r, 1200));
    const third = await post(JSON.stringify(init(4)));
    expect(third.status).toBe(200);
    // The abandoned session is gone: its id answers 404.
    const stale = await fetch(h.http.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${TOKENS.a}`,
        "mcp-session-id": first.headers.get("mcp-session-id") as string,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
    });
    expect(stale.status).toBe(404);
  });
});
