// The hook daemon's HTTP door, as Claude Code's `http` hook type uses it: the real daemon
// process (`warden hooks daemon --foreground`), POSTs of Claude Code's documented hook input.
// Every refusal is shown to leave no trace: the journal gains no entry and state.json does
// not change, so a caller without the token cannot feed the engine anything.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daemonPaths, ensureToken } from "../../src/hooks/daemon-files.js";
import {
  bashEvent,
  type Daemon,
  decisionOf,
  exfiltration,
  journalEntries,
  poisonedResult,
  post,
  rawPost,
  startDaemon,
} from "./daemon-helpers.js";
import { tempDir } from "./helpers.js";

let d: Daemon;
const auth = () => ({ authorization: `Bearer ${d.token}` });

beforeAll(async () => {
  d = await startDaemon();
}, 60_000);
afterAll(async () => {
  await d?.stop();
});

function trace(): string {
  const state = (() => {
    try {
      return readFileSync(join(d.dir, "state.json"), "utf8");
    } catch {
      return "";
    }
  })();
  return `${journalEntries(d.dir).length}|${state}`;
}

describe("the hook daemon over Claude Code's http hook", () => {
  it("denies rm -rf ~ with Claude Code's PreToolUse deny JSON", async () => {
    const r = await post(d.url(), bashEvent("rm -rf ~"), auth());
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    expect(r.text).toContain("DESTRUCTIVE_COMMAND");
  });

  it("answers an allowed npm test with allow and the contained command (updatedInput)", async () => {
    const r = await post(d.url(), bashEvent("npm test"), auth());
    expect(r).toMatchObject({ status: 200 });
    expect(r.json).toMatchObject({ hookSpecificOutput: { permissionDecision: "allow" } });
    expect(JSON.stringify(r.json)).toContain("contain-run.js");
  });

  it("a poisoned MCP result blocks, and the session's exfiltration is denied afterwards", async () => {
    const blocked = await post(d.url(), poisonedResult("sess-http-poison"), auth());
    expect(blocked.json).toMatchObject({ decision: "block" });
    const exfil = await post(d.url(), exfiltration("sess-http-poison"), auth());
    expect(decisionOf(exfil.json)).toBe("deny");
  });

  it("answers Cursor at /hooks/cursor through the Cursor adapter", async () => {
    const cursor = {
      conversation_id: "c-1",
      generation_id: "g-1",
      hook_event_name: "beforeShellExecution",
      workspace_roots: ["/home/dev/project"],
      command: "rm -rf ~",
      cwd: "/home/dev/project",
    };
    const r = await post(d.url("cursor"), cursor, auth());
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ permission: "deny" });
  });

  it("refuses an event posted without the hook token, journaling nothing", async () => {
    const before = trace();
    const r = await post(d.url(), poisonedResult("sess-forged"), {});
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: { code: "ERR_HOOK_UNAUTHENTICATED" } });
    expect(trace()).toBe(before);
  });

  it("a token from another state dir is refused", async () => {
    const foreign = ensureToken(daemonPaths(tempDir()).token);
    expect(foreign).not.toBe(d.token);
    const before = trace();
    const r = await post(d.url(), poisonedResult("sess-foreign"), { authorization: `Bearer ${foreign}` });
    expect(r.status).toBe(401);
    expect(trace()).toBe(before);
  });

  it("refuses a forged token of the right length and a token sent without Bearer", async () => {
    const before = trace();
    const forged = `${d.token.slice(0, -1)}${d.token.endsWith("A") ? "B" : "A"}`;
    expect((await post(d.url(), bashEvent("ls"), { authorization: `Bearer ${forged}` })).status).toBe(401);
    expect((await post(d.url(), bashEvent("ls"), { authorization: d.token })).status).toBe(401);
    expect(trace()).toBe(before);
  });

  it("refuses a page in a browser posting to the daemon (an Origin header), even with the token", async () => {
    const before = trace();
    const r = await post(d.url(), bashEvent("ls"), { ...auth(), origin: "https://evil.example" });
    expect(r.status).toBe(403);
    expect(trace()).toBe(before);
  });

  it("refuses a DNS-rebound Host header", async () => {
    const status = await rawPost(
      d.port,
      { ...auth(), host: `attacker.example:${d.port}` },
      JSON.stringify(bashEvent("ls")),
    );
    expect(status).toBe(421);
  });

  it("refuses an oversized event from its declared length, before reading it", async () => {
    const before = trace();
    const status = await rawPost(
      d.port,
      { ...auth(), "content-length": String(17 * 1024 * 1024) },
      "{",
      false,
    );
    expect(status).toBe(413);
    expect(trace()).toBe(before);
  });

  it("refuses a malformed body and an unknown host, journaling nothing", async () => {
    const before = trace();
    const bad = await post(d.url(), "{not json", auth());
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: "ERR_HOOK_EVENT_INVALID" } });
    expect((await post(d.url(), "[1,2]", auth())).status).toBe(400);
    expect((await post(d.url("teleport"), bashEvent("ls"), auth())).status).toBe(404);
    expect(trace()).toBe(before);
  });
});
