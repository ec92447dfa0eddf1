// The Claude Code adapter end to end: the built `warden hooks claude-code` spawned once per
// recorded Claude Code hook payload (test/fixtures/claude-code, written from Claude Code's
// documented hook input format), as Claude Code runs it — a new process per hook, state
// beside the journal.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = join(ROOT, "test/fixtures/claude-code");

function hook(
  dir: string,
  fixture: string,
): { code: number | null; out: Record<string, unknown> | null; err: string } {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const { CLAUDE_PROJECT_DIR: _omit, ...env } = process.env;
  const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "claude-code"], {
    input: readFileSync(join(FIXTURES, `${fixture}.json`)),
    env: { ...env, WARDEN_HOOKS_DIR: dir },
    encoding: "utf8",
    timeout: 30_000,
  });
  return {
    code: r.status,
    out: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, unknown>) : null,
    err: r.stderr,
  };
}

const decision = (out: Record<string, unknown> | null) =>
  (out?.hookSpecificOutput as { permissionDecision?: string } | undefined)?.permissionDecision;

describe("warden hooks claude-code (spawned, recorded payloads)", () => {
  it("a hostile rm -rf / is denied with Claude Code's permissionDecision", () => {
    const r = hook(tempDir(), "pre-tool-use-bash-rm-rf");
    expect(r.code).toBe(0);
    expect(r.out).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    expect(JSON.stringify(r.out)).toContain("DESTRUCTIVE_COMMAND");
  });

  it("a curl | sh is denied", () => {
    const r = hook(tempDir(), "pre-tool-use-bash-curl-pipe-sh");
    expect(decision(r.out)).toBe("deny");
    expect(JSON.stringify(r.out)).toContain("REMOTE_CODE_EXECUTION");
  });

  it("a write outside the workspace is denied; an edit inside it is left to Claude Code (no output)", () => {
    const dir = tempDir();
    const out = hook(dir, "pre-tool-use-write-outside-workspace");
    expect(decision(out.out)).toBe("deny");
    expect(JSON.stringify(out.out)).toContain("OUTSIDE_WORKSPACE");
    const inside = hook(dir, "pre-tool-use-edit-inside-workspace");
    expect(inside).toMatchObject({ code: 0, out: null });
    // An allowed shell call runs contained: allow with the rewritten command (contain-*.test.ts).
    expect(hook(dir, "pre-tool-use-bash-npm-test")).toMatchObject({
      code: 0,
      out: {
        hookSpecificOutput: {
          permissionDecision: "allow",
          updatedInput: { description: "Run the test suite", timeout: 120000 },
        },
      },
    });
  });

  it("a secret in a prompt is blocked before Claude sees it", () => {
    const dir = tempDir();
    const r = hook(dir, "user-prompt-submit-secret");
    expect(r.out).toMatchObject({ decision: "block" });
    expect(r.out?.reason).toContain("github_token");
    expect(JSON.stringify(r.out)).not.toContain("ghp_R4nd0m");
    expect(hook(dir, "user-prompt-submit-benign")).toMatchObject({ code: 0, out: null });
  });

  it("a poisoned MCP tool result followed by exfiltration: the result is blocked and the next process denies the WebFetch", () => {
    const dir = tempDir();
    expect(hook(dir, "session-start-startup")).toMatchObject({ code: 0 });
    expect(hook(dir, "pre-tool-use-webfetch-exfiltration").out).toBeNull();
    const poisoned = hook(dir, "post-tool-use-mcp-poisoned");
    expect(poisoned.out).toMatchObject({ decision: "block" });
    const exfil = hook(dir, "pre-tool-use-webfetch-exfiltration");
    expect(decision(exfil.out)).toBe("deny");
    expect(JSON.stringify(exfil.out)).toContain("may send data out");
  });

  it("after compaction the prior denials come back as SessionStart additionalContext", () => {
    const dir = tempDir();
    hook(dir, "pre-tool-use-bash-rm-rf");
    expect(hook(dir, "pre-compact-auto")).toMatchObject({ code: 0, out: null });
    const r = hook(dir, "session-start-compact");
    const ctx = (r.out?.hookSpecificOutput as { additionalContext?: string } | undefined)?.additionalContext;
    expect(ctx).toContain("rm -rf / --no-preserve-root was DENIED");
  });

  it("Stop with a secret in the answer warns; SubagentStop and SessionEnd pass quietly", () => {
    const dir = tempDir();
    const stop = hook(dir, "stop-secret-in-answer");
    expect(stop.code).toBe(0);
    expect(String(stop.out?.systemMessage)).toContain("aws_access_key_id");
    expect(JSON.stringify(stop.out)).not.toContain("AKIAIOSFODNN7EXAMPLE");
    expect(hook(dir, "subagent-stop")).toMatchObject({ code: 0, out: null });
    expect(hook(dir, "session-end")).toMatchObject({ code: 0, out: null });
    expect(hook(dir, "post-tool-use-read-benign")).toMatchObject({ code: 0, out: null });
  });

  it("parallel hook processes (parallel tool calls) on a fresh directory all answer and leave an intact journal", async () => {
    const dir = tempDir();
    const { CLAUDE_PROJECT_DIR: _omit, ...env } = process.env;
    const one = (fixture: string) =>
      new Promise<number | null>((res) => {
        const c = spawn(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "claude-code"], {
          env: { ...env, WARDEN_HOOKS_DIR: dir },
          stdio: ["pipe", "ignore", "ignore"],
        });
        c.stdin.end(readFileSync(join(FIXTURES, `${fixture}.json`)));
        c.on("close", res);
      });
    const codes = await Promise.all(
      [
        "pre-tool-use-bash-npm-test",
        "pre-tool-use-bash-rm-rf",
        "post-tool-use-mcp-poisoned",
        "user-prompt-submit-benign",
        "pre-tool-use-edit-inside-workspace",
      ].map(one),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0]);
    const v = spawnSync(
      process.execPath,
      [
        join(ROOT, "bin/warden.js"),
        "journal",
        "verify",
        "--db",
        join(dir, "journal.db"),
        "--keys",
        join(dir, "journal.db.key.pub.pem"),
      ],
      { encoding: "utf8" },
    );
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toContain("journal intact");
    // The poisoned result's state survived the race: the exfiltration is denied.
    expect(decision(hook(dir, "pre-tool-use-webfetch-exfiltration").out)).toBe("deny");
  });

  it("input that is not a Claude Code event fails closed: exit 2, coded reason on stderr", () => {
    const { CLAUDE_PROJECT_DIR: _omit, ...env } = process.env;
    const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "claude-code"], {
      input: "{not json",
      env: { ...env, WARDEN_HOOKS_DIR: tempDir() },
      encoding: "utf8",
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("ERR_HOOK_EVENT_INVALID");
  });
});
