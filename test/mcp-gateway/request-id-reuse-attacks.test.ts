// A client reuses one JSON-RPC request id across concurrent calls in its session. The SDK's
// transport routes each answer to the stream registered under its id, so a request sent
// with an id still in flight re-routes or orphans the earlier one's answer (on the old
// gateway the duplicates were answered 200 and the first request was left without its own
// answer). The gateway refuses a request whose id is still in flight in the session
// (JSON-RPC and MCP require unique ids): every request is answered, each with its own result.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/index.js";
import { FIXTURE, type GatewayHarness, node, startGateway, TOKENS } from "./harness.js";

const POLICY = `
name: ids
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
        maxSessions: 16,
      },
    },
  });
}, 60_000);
afterAll(async () => h?.stop());

const headers = (sid?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${TOKENS.a}`,
  ...(sid === undefined ? {} : { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" }),
});

async function openSession(): Promise<string> {
  const r = await fetch(h.http.url, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    }),
  });
  const sid = r.headers.get("mcp-session-id");
  await r.text();
  if (sid === null) throw new Error(`no session: ${r.status}`);
  const note = { jsonrpc: "2.0", method: "notifications/initialized" };
  await (
    await fetch(h.http.url, { method: "POST", headers: headers(sid), body: JSON.stringify(note) })
  ).text();
  return sid;
}

const slowCall = (sid: string, id: unknown, ms: number) =>
  fetch(h.http.url, {
    method: "POST",
    headers: headers(sid),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "test__slow", arguments: { ms } },
    }),
  }).then(async (r) => ({ status: r.status, body: await r.text() }));

describe("a client reuses a request id that is still in flight", () => {
  it("the duplicates are refused (400 ERR_MCP_DENIED), the first is answered, and nothing is left waiting", async () => {
    const sid = await openSession();
    const first = slowCall(sid, 7, 400);
    await new Promise((r) => setTimeout(r, 100));
    // Every one of these settles: before the fix they were orphaned and never answered.
    const dups = await Promise.all(Array.from({ length: 5 }, () => slowCall(sid, 7, 10)));
    for (const d of dups) {
      expect(d.status).toBe(400);
      expect(d.body).toContain("ERR_MCP_DENIED");
      expect(d.body).toContain("already in flight");
    }
    const one = await first;
    expect(one.status).toBe(200);
    expect(one.body).toContain('"id":7');
    expect(one.body).not.toContain('isError":true');
    // Once answered, the id is free again; a string id "7" is another id than the number 7.
    const [again, other] = await Promise.all([slowCall(sid, 7, 10), slowCall(sid, "7", 10)]);
    expect(again.status).toBe(200);
    expect(other.status).toBe(200);
  }, 30_000);

  it("a batch that repeats an id inside itself is refused whole", async () => {
    const sid = await openSession();
    const call = {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "test__add", arguments: { a: 1, b: 2 } },
    };
    const r = await fetch(h.http.url, {
      method: "POST",
      headers: headers(sid),
      body: JSON.stringify([call, call]),
    });
    expect(r.status).toBe(400);
    expect(await r.text()).toContain("already in flight");
  }, 30_000);
});
