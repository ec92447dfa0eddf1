// Attacks on the AARTS remote transport (issue 20): POST /v1/hooks/handshake and
// /v1/hooks/events on a real sidecar with the host-tools preset. The handshake is per
// credential, only a `host` principal may submit events, and every event acts as the
// authenticated principal whatever host or session it names.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOOK_VERDICT_EVENT, hostToolsPolicyPath } from "../../src/hooks/index.js";
import type { JournalEntry } from "../../src/journal/index.js";
import { hashToken } from "../../src/server/index.js";
import { ev, tool } from "../hooks/events.js";
import { type Sidecar, startTestSidecar, TOKENS } from "./harness.js";

const HOST = "token-host-one-0123456789";
const HOST2 = "token-host-two-0123456789";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({
    requireContract: false,
    config: {
      policies: [hostToolsPolicyPath()],
      limits: { bodyBytes: 64 * 1024, jsonDepth: 32, rateLimitPerMinute: 600, requestTimeoutMs: 330_000 },
      gate: {
        tenant: "test",
        environment: "test",
        requireContract: false,
        principals: [
          { id: "agent-a", roles: ["agent"] },
          { id: "host-one", roles: ["host"] },
          { id: "host-two", roles: ["host"] },
        ],
      },
      auth: {
        principals: [
          { id: "agent-a", tokenSha256: hashToken(TOKENS.agentA) },
          { id: "host-one", tokenSha256: hashToken(HOST) },
          { id: "host-two", tokenSha256: hashToken(HOST2) },
        ],
        approvers: [{ id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) }],
      },
    },
  });
});
afterAll(() => s.stop());

const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code?: string } | undefined)?.code;
const handshake = (token: string, version = "1") =>
  s.call("/v1/hooks/handshake", { token, body: { aarts_version: version } });
const send = (token: string, event: unknown) => s.call("/v1/hooks/events", { token, body: event });

async function verdictEntries(): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const x of s.server.runtime.store.entries()) {
    if ("type" in x && x.type === HOOK_VERDICT_EVENT) out.push(x as JournalEntry);
  }
  return out;
}

describe("the AARTS HTTP transport", () => {
  it("a caller with no credential is refused before the engine (401)", async () => {
    const before = (await verdictEntries()).length;
    const r = await s.call("/v1/hooks/events", { body: tool("shell", { command: "ls" }, "Bash") });
    expect(r.status).toBe(401);
    expect(code(r)).toBe("ERR_AUTH_MISSING");
    expect((await s.call("/v1/hooks/handshake", { body: { aarts_version: "1" } })).status).toBe(401);
    expect((await verdictEntries()).length).toBe(before);
  });

  it("an agent without the host role cannot handshake or submit events", async () => {
    for (const r of [
      await handshake(TOKENS.agentA),
      await send(TOKENS.agentA, tool("shell", { command: "ls" }, "Bash")),
    ]) {
      expect(r.status).toBe(403);
      expect(code(r)).toBe("ERR_AUTH_FORBIDDEN");
    }
    const op = await handshake(TOKENS.approver);
    expect(op.status).toBe(403);
  });

  it("events before a handshake are refused with 409 and journaled as denied", async () => {
    const r = await send(HOST2, tool("shell", { command: "ls" }, "Bash"));
    expect(r.status).toBe(409);
    expect(code(r)).toBe("ERR_HOOK_HANDSHAKE_REQUIRED");
    const last = (await verdictEntries()).at(-1);
    expect(last?.body).toMatchObject({ decision: "deny", failure: { code: "ERR_HOOK_HANDSHAKE_REQUIRED" } });
  });

  it("an incompatible version gets compatible:false and its events stay refused", async () => {
    const r = await handshake(HOST2, "99");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ compatible: false, engine_id: "warden" });
    const e = await send(HOST2, tool("shell", { command: "ls" }, "Bash"));
    expect(e.status).toBe(409);
    expect(code(e)).toBe("ERR_HOOK_HANDSHAKE_REQUIRED");
  });

  it("another credential's compatible handshake does not open a host that has none", async () => {
    expect((await handshake(HOST)).body).toMatchObject({ compatible: true });
    const e = await send(HOST2, tool("shell", { command: "ls" }, "Bash"));
    expect(e.status).toBe(409);
  });

  it("a hostile rm -rf / PreToolUse is denied by the preset and journaled", async () => {
    expect((await handshake(HOST)).body).toMatchObject({ compatible: true });
    const r = await send(HOST, tool("shell", { command: "rm -rf /" }, "Bash"));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ decision: "deny", matched_rule_id: "host-deny-rm-rf-root" });
    const last = (await verdictEntries()).at(-1);
    expect(last?.body).toMatchObject({ hook_point: "PreToolUse", decision: "deny", failure: null });
    expect(last?.run_id).toEqual(expect.any(String));
  });

  it("an event acts as the authenticated principal, not the host or session it names", async () => {
    expect((await handshake(HOST)).body).toMatchObject({ compatible: true });
    const r = await send(HOST, tool("other", { todos: [] }, "TodoWrite", "sess-owned"));
    expect(r.body).toMatchObject({ decision: "allow" });
    const runId = (await verdictEntries()).at(-1)?.run_id as string;
    // The run the event was decided in belongs to host-one, whatever host_id the event named.
    expect(s.server.runtime.sessions.get(runId)?.principalId).toBe("host-one");
    // host-two naming the same host_id and session gets its own run, not host-one's.
    expect((await handshake(HOST2)).body).toMatchObject({ compatible: true });
    const other = await send(HOST2, tool("other", { todos: [] }, "TodoWrite", "sess-owned"));
    expect(other.body).toMatchObject({ decision: "allow" });
    const otherRun = (await verdictEntries()).at(-1)?.run_id as string;
    expect(otherRun).not.toBe(runId);
    expect(s.server.runtime.sessions.get(otherRun)?.principalId).toBe("host-two");
  });

  it("a malformed event is a coded 400 (and still journaled)", async () => {
    expect((await handshake(HOST)).body).toMatchObject({ compatible: true });
    const before = (await verdictEntries()).length;
    const missing = await send(HOST, { hook_point: "PreToolUse", aarts_version: "1" });
    expect(missing.status).toBe(400);
    expect(code(missing)).toBe("ERR_HOOK_EVENT_INVALID");
    const unknown = await send(HOST, ev("PreEverything" as never));
    expect(unknown.status).toBe(400);
    expect(code(unknown)).toBe("ERR_HOOK_POINT_UNKNOWN");
    expect((await verdictEntries()).length).toBe(before + 2);
    const notJson = await s.call("/v1/hooks/events", { token: HOST, raw: "{not json" });
    expect(notJson.status).toBe(400);
  });

  it("an oversized event body is refused before the engine (413)", async () => {
    const before = (await verdictEntries()).length;
    const big = tool("shell", { command: `echo ${"x".repeat(70 * 1024)}` }, "Bash");
    const r = await send(HOST, big);
    expect(r.status).toBe(413);
    expect(code(r)).toBe("ERR_SERVER_BODY_TOO_LARGE");
    expect((await verdictEntries()).length).toBe(before);
  });

  it("the OpenAPI document describes both routes", async () => {
    const r = await s.call("/v1/openapi.json", { token: HOST });
    const paths = (r.body.paths ?? {}) as Record<string, unknown>;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(["/v1/hooks/handshake", "/v1/hooks/events"]));
  });
});
