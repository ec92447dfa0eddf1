// Issue 37 finding 2: one credential takes every gateway session. Against maxSessions 16,
// one token's 24 initialize requests used to take the whole pool, and every other
// principal got 503 "too many sessions" until the idle timeout. With a per-principal
// share the flood stops at its cap with a coded 429, and another principal still opens
// a session and calls a tool. A principal's flood of calls waits in its own fair queue
// (equal shares of the gateway's slots) and is refused past its bound, so another
// principal's call is served in turn rather than after the backlog.
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/index.js";
import { FIXTURE, type GatewayHarness, node, startGateway, TOKENS } from "./harness.js";

const POLICY = `
name: share
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
        principals: [
          { id: "agent-a", tokenSha256: hashToken(TOKENS.a) },
          { id: "agent-b", tokenSha256: hashToken(TOKENS.b) },
        ],
        maxSessions: 16,
      },
    },
  });
}, 60_000);
afterAll(async () => h?.stop());

const init = (id: number, token: string) =>
  fetch(h.http.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    }),
  });

describe("one credential floods the gateway with tool calls", () => {
  it("the flood waits in its own fair queue (429 ERR_MCP_BUSY past its share); another principal is served before the backlog drains", async () => {
    const a = await h.connect(TOKENS.a);
    let done = 0;
    const calls = Array.from({ length: 20 }, () =>
      a.callTool({ name: "test__slow", arguments: { ms: 500 } }).then(
        () => {
          done++;
          return "ok";
        },
        (err: unknown) => String(err),
      ),
    );
    const b = await h.connect(TOKENS.b);
    const r = await b.callTool({ name: "test__add", arguments: { a: 2, b: 3 } });
    expect(r.isError).not.toBe(true);
    // Served in turn, not after the flood: most of the 16 admitted calls are still waiting.
    expect(done).toBeLessThan(16);
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(16); // maxInFlightPerPrincipal
    expect(outcomes.filter((o) => o.includes("ERR_MCP_BUSY"))).toHaveLength(4);
    // Sessions end (DELETE), so the next test starts from an empty pool.
    for (const c of [a, b]) {
      await (c.transport as StreamableHTTPClientTransport | undefined)?.terminateSession();
      await c.close();
    }
  }, 60_000);
});

describe("one credential takes every gateway session", () => {
  it("24 initialize requests from one token stop at its share (429); another principal still gets a session", async () => {
    const flood = await Promise.all(Array.from({ length: 24 }, (_, i) => init(i + 1, TOKENS.a)));
    const statuses = flood.map((r) => r.status);
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBe(4); // a quarter of maxSessions by default
    expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    // Past its share of sessions (ERR_MCP_SESSION_LIMIT), or past its share of the request
    // queue before its turn came (ERR_MCP_BUSY: 16 admitted at once).
    const codes = await Promise.all(
      flood.filter((r) => r.status === 429).map(async (r) => /ERR_MCP_[A-Z_]+/.exec(await r.text())?.[0]),
    );
    expect(codes.filter((c) => c === "ERR_MCP_SESSION_LIMIT").length).toBeGreaterThanOrEqual(12);
    expect(codes.every((c) => c === "ERR_MCP_SESSION_LIMIT" || c === "ERR_MCP_BUSY")).toBe(true);
    // The other principal is not locked out: it opens a session and calls a tool.
    const b = await h.connect(TOKENS.b);
    const tools = await b.listTools();
    expect(tools.tools.length).toBeGreaterThan(0);
    await b.close();
  });
});
