// The lean command entry (bin/warden-hook.js, spawned for real as Claude Code runs a command
// hook) and the daemon behind it: started on demand, its files private, fail closed when it
// dies mid-answer, restarted by the next call, every poisoned flag kept when events of
// parallel tool calls arrive at once, and every acknowledged verdict in the journal after
// kill -9.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  bashEvent,
  decisionOf,
  ENTRY,
  exfiltration,
  hookEnv,
  journalEntries,
  poisonedResult,
  poisonedSubagent,
  post,
  requireBuild,
  runEntry,
  startDaemon,
  stopDaemonIn,
  verifyJournal,
  WARDEN,
  waitForDaemon,
} from "./daemon-helpers.js";
import { tempDir } from "./helpers.js";

const started: string[] = [];
afterAll(async () => {
  for (const dir of started) await stopDaemonIn(dir);
});

const mode = (p: string) => statSync(p).mode & 0o777;
const json = (s: string) => (s.trim() ? (JSON.parse(s) as Record<string, unknown>) : null);

describe("the lean entry bin/warden-hook.js", () => {
  it("starts the daemon on demand and answers rm -rf ~ with Claude Code's deny JSON; its files are 0600 in a 0700 dir", async () => {
    requireBuild();
    const dir = join(tempDir(), "hooks");
    started.push(dir);
    const r = await runEntry(dir, JSON.stringify(bashEvent("rm -rf ~")));
    expect(r.code, r.stderr).toBe(0);
    expect(decisionOf(json(r.stdout))).toBe("deny");
    expect(r.stdout).toContain("DESTRUCTIVE_COMMAND");
    const warm = await runEntry(dir, JSON.stringify(bashEvent("npm test")));
    expect(warm).toMatchObject({ code: 0 });
    expect(decisionOf(json(warm.stdout))).toBe("allow"); // contained: updatedInput (hooks-containment.md)
    expect(mode(dir)).toBe(0o700);
    for (const f of ["daemon.sock", "daemon.token", "daemon.pid", "daemon.json", "state.json", "journal.db"])
      expect(mode(join(dir, f)), f).toBe(0o600);
  }, 60_000);

  it("refuses a socket event carrying a token from another state dir, journaling nothing", async () => {
    const d = await startDaemon();
    try {
      const other = await startDaemon();
      await other.stop();
      const before = journalEntries(d.dir).length;
      const answer = await new Promise<string>((res, rej) => {
        const s = connect(join(d.dir, "daemon.sock"));
        let out = "";
        s.on("data", (c: Buffer) => {
          out += c.toString();
        });
        s.on("close", () => res(out));
        s.on("error", rej);
        s.write(`${JSON.stringify({ v: 1, token: other.token, host: "claude-code", env: {} })}\n`);
        s.end(JSON.stringify(poisonedResult("sess-socket-forged")));
      });
      expect(JSON.parse(answer)).toMatchObject({ exitCode: 2 });
      expect(answer).toContain("ERR_HOOK_UNAUTHENTICATED");
      expect(journalEntries(d.dir).length).toBe(before);
    } finally {
      await d.stop();
    }
  }, 60_000);

  it("a daemon that dies mid-answer makes the entry exit 2 (fail closed); the next call starts a daemon and answers", async () => {
    const dir = tempDir();
    started.push(dir);
    // A stand-in daemon that takes the event and dies without answering.
    writeFileSync(join(dir, "daemon.token"), "x".repeat(43), { mode: 0o600 });
    const fake = createServer((sock) => sock.once("data", () => sock.destroy()));
    await new Promise<void>((r) => fake.listen(join(dir, "daemon.sock"), () => r()));
    const r = await runEntry(dir, JSON.stringify(bashEvent("git push --force")));
    await new Promise<void>((res) => fake.close(() => res()));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ERR_HOOK_DAEMON_UNAVAILABLE");
    expect(r.stdout).toBe("");
    const next = await runEntry(dir, JSON.stringify(bashEvent("rm -rf ~")));
    expect(next.code, next.stderr).toBe(0);
    expect(decisionOf(json(next.stdout))).toBe("deny");
  }, 60_000);

  it("a daemon killed with SIGKILL is restarted by the next call", async () => {
    const dir = tempDir();
    started.push(dir);
    expect((await runEntry(dir, JSON.stringify(bashEvent("npm test")))).code).toBe(0);
    const { pid } = await waitForDaemon(dir);
    process.kill(pid, "SIGKILL");
    const r = await runEntry(dir, JSON.stringify(bashEvent("rm -rf ~")));
    expect(r.code, r.stderr).toBe(0);
    expect(decisionOf(json(r.stdout))).toBe("deny");
    expect((await waitForDaemon(dir)).pid).not.toBe(pid);
  }, 60_000);

  it("is host-generic: `warden-hook cursor` denies a Cursor rm -rf ~ (exit 2 + Cursor's deny JSON), and fails closed for Cursor too", async () => {
    const dir = tempDir();
    started.push(dir);
    const cursor = {
      conversation_id: "c-entry",
      generation_id: "g-entry",
      hook_event_name: "beforeShellExecution",
      workspace_roots: ["/home/dev/project"],
      command: "rm -rf ~",
      cwd: "/home/dev/project",
    };
    const r = await runEntry(dir, JSON.stringify(cursor), "cursor");
    expect(r.code, r.stderr).toBe(2);
    expect(json(r.stdout)).toMatchObject({ permission: "deny" });
    // A daemon that dies mid-answer: Cursor gets exit 2 and a deny it can read.
    const dead = tempDir();
    writeFileSync(join(dead, "daemon.token"), "y".repeat(43), { mode: 0o600 });
    const fake = createServer((sock) => sock.once("data", () => sock.destroy()));
    await new Promise<void>((res) => fake.listen(join(dead, "daemon.sock"), () => res()));
    const failed = await runEntry(dead, JSON.stringify(cursor), "cursor");
    await new Promise<void>((res) => fake.close(() => res()));
    expect(failed.code).toBe(2);
    expect(json(failed.stdout)).toMatchObject({ permission: "deny", continue: false });
    expect(failed.stderr).toContain("ERR_HOOK_DAEMON_UNAVAILABLE");
  }, 60_000);

  it("input that is not a Claude Code event fails closed through the entry: exit 2, coded reason", async () => {
    const dir = tempDir();
    started.push(dir);
    const r = await runEntry(dir, "{not json");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ERR_HOOK_EVENT_INVALID");
  }, 60_000);
});

describe("the daemon's state and journal under load and crashes", () => {
  it("parallel events of one session (and a one-shot process at the same time) keep every poisoned flag", async () => {
    const d = await startDaemon();
    try {
      const auth = { authorization: `Bearer ${d.token}` };
      const one = "par-one";
      const others = ["par-b", "par-c"];
      const oneShot = new Promise<number | null>((res) => {
        const c = spawn(process.execPath, [WARDEN, "hooks", "claude-code"], { env: hookEnv(d.dir) });
        c.stdout.resume();
        c.on("close", res);
        c.stdin.end(JSON.stringify(poisonedResult("par-oneshot")));
      });
      // One session's tool calls at once: two poisonings by different doors among its other events.
      await Promise.all([
        post(d.url(), poisonedResult(one), auth),
        runEntry(d.dir, JSON.stringify(poisonedSubagent(one))),
        ...[1, 2, 3, 4, 5].map((i) => post(d.url(), bashEvent(`npm test -- ${i}`, one), auth)),
        ...others.map((s) => post(d.url(), poisonedResult(s), auth)),
        runEntry(d.dir, JSON.stringify(bashEvent("ls -la", one))),
        oneShot,
      ]);
      const state = JSON.parse(readFileSync(join(d.dir, "state.json"), "utf8")) as {
        sessions: Record<string, { poisoned: string[] }>;
      };
      // Both poisonings of the one session are kept (one by the http door, one by the socket).
      const flags = state.sessions[one]?.poisoned ?? [];
      expect(
        flags.some((f) => /SubAgent/i.test(f)),
        flags.join("; "),
      ).toBe(true);
      expect(
        flags.some((f) => /mcp__notes|PostToolUse/.test(f)),
        flags.join("; "),
      ).toBe(true);
      for (const s of [one, ...others, "par-oneshot"]) {
        expect(state.sessions[s]?.poisoned.length, s).toBeGreaterThan(0);
        // The daemon knows it too (the one-shot's write is merged in): exfiltration denied.
        expect(decisionOf((await post(d.url(), exfiltration(s), auth)).json), s).toBe("deny");
      }
    } finally {
      await d.stop();
    }
  }, 120_000);

  it("a verdict the daemon acknowledged is in the journal, intact, after kill -9", async () => {
    const d = await startDaemon();
    const auth = { authorization: `Bearer ${d.token}` };
    const r = await post(d.url(), bashEvent("rm -rf ~", "sess-acked"), auth);
    expect(decisionOf(r.json)).toBe("deny");
    d.child.kill("SIGKILL");
    await new Promise((res) => d.child.once("exit", res));
    const v = verifyJournal(d.dir);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toContain("journal intact");
    const acked = journalEntries(d.dir).filter(
      (e) => e.type === "warden.hooks.verdict" && e.body.session_id === "sess-acked",
    );
    expect(acked.map((e) => e.body.decision)).toEqual(["deny"]);
    // The next entry call starts a fresh daemon over the same journal.
    started.push(d.dir);
    const again = spawnSync(process.execPath, [ENTRY, "claude-code"], {
      env: hookEnv(d.dir),
      input: JSON.stringify(bashEvent("rm -rf ~", "sess-acked")),
      encoding: "utf8",
    });
    expect(again.status, again.stderr).toBe(0);
    expect(decisionOf(json(again.stdout))).toBe("deny");
  }, 60_000);
});
