// Benign coding-agent work through the same harness: allowed, run contained, and giving
// the same result as the bare command — tests, scratch files in /tmp (kept for the
// session), a local server started and queried in one call, a git commit in the
// workspace, and an allowlisted host reached THROUGH the egress proxy and journaled as
// `warden.hooks.egress` at the call's PostToolUse.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerHostEvent, claudeCodeAdapter } from "../../src/hooks/index.js";
import type { JournalEntry } from "../../src/journal/index.js";
import { asClaudeCode, exec, type Harness, harness, runContained } from "./contain-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

const GIT_ID = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.invalid",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.invalid",
};

async function egressEntries(): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const x of h.engine.runtime.store.entries()) {
    if ("type" in x && x.type === "warden.hooks.egress")
      out.push((x as JournalEntry).body as Record<string, unknown>);
  }
  return out;
}

describe("containment: benign work runs and gives the same result", { timeout: 60_000 }, () => {
  it("npm test of a small project: allowed contained, same output as bare", async () => {
    const r = await asClaudeCode(h, "npm test");
    expect(r).toMatchObject({ decision: "allow", contained: true, status: 0 });
    expect(r.stdout).toContain("tests ok 2");
    const bare = await exec(h, "npm test");
    expect(r.stdout).toBe(bare.stdout);
  });

  it("echo hi > /tmp/x.log && cat /tmp/x.log works contained, and the scratch file is there in the next call", async () => {
    // Whether the policy allows the /tmp write is the shell analysis' part (issue 32 "No lock-out");
    // contained, it writes the session's private /tmp, never the host's.
    const r = await runContained(h, "echo hi > /tmp/x.log && cat /tmp/x.log");
    expect(r).toMatchObject({ status: 0, stdout: "hi\n" });
    expect((await runContained(h, "cat /tmp/x.log")).stdout).toBe("hi\n");
    expect(existsSync("/tmp/x.log")).toBe(false);
  });

  it("a local server started and curled within one call answers", async () => {
    const server = `node -e "require('http').createServer((q,r)=>r.end('pong')).listen(18765,'127.0.0.1')"`;
    const probe = "for i in $(seq 100); do curl -s http://127.0.0.1:18765/ && break; sleep 0.05; done";
    const r = await asClaudeCode(h, `${server} & ${probe}; kill %1`);
    expect(r).toMatchObject({ decision: "allow", contained: true });
    expect(r.stdout).toBe("pong");
  });

  it("a 120 KB heredoc (over an argv word's 128 KiB once base64) runs contained like bare", async () => {
    const body = `${"x".repeat(119)}\n`;
    const command = `cat > big.txt <<'EOF'\n${body.repeat(1000)}EOF\nwc -c < big.txt`;
    // (Whether the policy allows a heredoc of this size is the shell analysis' part.)
    const r = await runContained(h, command);
    expect(r).toMatchObject({ status: 0 });
    expect(r.stdout.trim()).toBe("120000");
    expect(readdirSync(join(h.hooksDir, "commands"))).toEqual([]);
  });

  it("git init && git commit in the workspace", async () => {
    const cmd = "git init -q && git add package.json && git commit -qm init && git log --oneline | wc -l";
    const r = await asClaudeCode(h, cmd, GIT_ID);
    expect(r).toMatchObject({ decision: "allow", contained: true, status: 0 });
    expect(r.stdout.trim()).toBe("1");
    expect(existsSync(join(h.ws, ".git", "HEAD"))).toBe(true);
  });

  it("an allowlisted host is reached through the proxy (plain and CONNECT) and journaled; another is refused and journaled", async () => {
    const ok = `http://127.0.0.1:${h.okPort}/`;
    const r = await asClaudeCode(
      h,
      `curl -s --noproxy '' ${ok}; echo; curl -s --noproxy '' -p ${ok}; echo; curl -s --noproxy '' -o /dev/null -w '%{http_code}' http://127.0.0.1:${h.canary.port}/`,
    );
    expect(r).toMatchObject({ decision: "allow", contained: true });
    expect(r.stdout).toBe("hello-through-proxy\nhello-through-proxy\n403");
    expect(h.canary.connections).toBe(0);
    const post = {
      session_id: "contain-session",
      transcript_path: "/dev/null",
      cwd: h.ws,
      permission_mode: "default",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "curl" },
      tool_response: { stdout: r.stdout, stderr: "", interrupted: false },
      tool_use_id: r.callId,
    };
    await answerHostEvent(h.engine, claudeCodeAdapter, post, new Date().toISOString());
    const entries = await egressEntries();

    const mine = entries.filter((e) => e.call_id === r.callId);
    expect(mine).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ host: "127.0.0.1", port: h.okPort, method: "GET", allowed: true }),
        expect.objectContaining({ host: "127.0.0.1", port: h.okPort, method: "CONNECT", allowed: true }),
        expect.objectContaining({ host: "127.0.0.1", port: h.canary.port, allowed: false }),
      ]),
    );
  });
});
