// The Claude Code adapter's translation and rendering, the taxonomy, and `warden hooks
// install claude-code` merging into an existing settings.json.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CLAUDE_CODE_EVENTS,
  canonicalToolName,
  parseHookEvent,
  renderClaudeCode,
  translateClaudeCode,
  type Verdict,
} from "../../src/hooks/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "./helpers.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/claude-code");
const fixture = (n: string) =>
  JSON.parse(readFileSync(join(FIXTURES, `${n}.json`), "utf8")) as Record<string, unknown>;
const NOW = "2026-01-01T00:00:00.000Z";

describe("Claude Code → AARTS", () => {
  it("maps Claude Code's tools onto the §7 taxonomy", () => {
    expect(
      [
        "Bash",
        "Edit",
        "MultiEdit",
        "Write",
        "Read",
        "WebFetch",
        "WebSearch",
        "mcp__github__create_issue",
        "Task",
        "Glob",
        "Grep",
        "NotebookEdit",
        "TodoWrite",
      ].map(canonicalToolName),
    ).toEqual([
      "shell",
      "file_edit",
      "file_edit",
      "file_write",
      "file_read",
      "web_request",
      "web_request",
      "mcp_call",
      "delegate",
      "file_read",
      "file_read",
      "file_edit",
      "other",
    ]);
  });

  const mapping: [string, string][] = [
    ["pre-tool-use-bash-rm-rf", "PreToolUse"],
    ["post-tool-use-mcp-poisoned", "PostToolUse"],
    ["user-prompt-submit-secret", "PreUserInput"],
    ["session-start-startup", "SessionStart"],
    ["session-start-compact", "PostCompact"],
    ["session-end", "SessionEnd"],
    ["pre-compact-auto", "PreCompact"],
    ["stop-secret-in-answer", "PreOutputDeliver"],
    ["subagent-stop", "PostSubAgentResult"],
  ];
  for (const [name, point] of mapping) {
    it(`${name} becomes a valid ${point} event`, () => {
      const r = parseHookEvent(translateClaudeCode(fixture(name), NOW));
      expect(r.ok, r.ok ? "" : r.message).toBe(true);
      if (r.ok)
        expect(r.event).toMatchObject({
          hook_point: point,
          host_id: "claude-code",
          session_id: fixture(name).session_id,
        });
    });
  }

  it("a PreToolUse keeps the native name and the raw input verbatim (§6.4.1)", () => {
    const e = translateClaudeCode(fixture("pre-tool-use-bash-curl-pipe-sh"), NOW);
    expect(e).toMatchObject({
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: fixture("pre-tool-use-bash-curl-pipe-sh").tool_input,
    });
  });

  it("an event Claude Code does not have becomes an unknown hook point (refused by the engine)", () => {
    const r = parseHookEvent(
      translateClaudeCode({ ...fixture("session-end"), hook_event_name: "Notification" }, NOW),
    );
    expect(r).toMatchObject({ ok: false, code: "ERR_HOOK_POINT_UNKNOWN" });
  });
});

describe("AARTS verdict → Claude Code answer", () => {
  const v = (decision: Verdict["decision"], extra: Partial<Verdict> = {}): Verdict => ({
    decision,
    category: "tool_execution",
    severity: decision === "allow" ? "info" : "critical",
    source: "policy",
    reasons: ["why"],
    ...extra,
  });
  it("PreToolUse: deny and ask carry permissionDecision; allow says nothing (Claude Code's own rules stay)", () => {
    expect(JSON.parse(renderClaudeCode("PreToolUse", v("ask")).stdout ?? "")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "Warden: why",
      },
    });
    expect(renderClaudeCode("PreToolUse", v("allow"))).toEqual({ exitCode: 0 });
  });
  it("UserPromptSubmit: ask is a block (no prompt dialog for prompts)", () => {
    expect(JSON.parse(renderClaudeCode("UserPromptSubmit", v("ask")).stdout ?? "")).toMatchObject({
      decision: "block",
    });
  });
  it("PreCompact deny is exit 2 with the reason on stderr", () => {
    expect(renderClaudeCode("PreCompact", v("deny"))).toEqual({ exitCode: 2, stderr: "Warden: why\n" });
  });
  it("an unknown Claude Code event is exit 2", () => {
    expect(renderClaudeCode("Notification", v("deny")).exitCode).toBe(2);
  });
});

describe("warden hooks install claude-code", () => {
  it("merges into an existing settings.json without clobbering other hooks or settings, and is idempotent", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    const path = join(dir, ".claude", "settings.json");
    const mine = { matcher: "Write", hooks: [{ type: "command", command: "prettier --write" }] };
    writeFileSync(path, JSON.stringify({ model: "opus", hooks: { PostToolUse: [mine] } }));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await runCli("hooks", "install", "claude-code", "--project");
      expect(r.code, r.err).toBe(0);
      const s = JSON.parse(readFileSync(path, "utf8")) as { model: string; hooks: Record<string, unknown[]> };
      expect(s.model).toBe("opus");
      expect(s.hooks.PostToolUse?.[0]).toEqual(mine);
      for (const ev of CLAUDE_CODE_EVENTS)
        expect(JSON.stringify(s.hooks[ev])).toMatch(/warden-hook\.js'? claude-code/);
      expect(s.hooks.PreToolUse?.[0]).toMatchObject({ matcher: "*" });
      const again = await runCli("hooks", "install", "claude-code");
      expect(again.out).toContain("already installed");
      expect(readFileSync(path, "utf8")).toBe(`${JSON.stringify(s, null, 2)}\n`);
    } finally {
      process.chdir(cwd);
    }
  });

  it("refuses a settings.json that is not an object, leaving it untouched", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".claude"));
    const path = join(dir, ".claude", "settings.json");
    writeFileSync(path, "[1]");
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await runCli("hooks", "install", "claude-code");
      expect(r.code).toBe(2);
      expect(r.err).toContain("ERR_CLI_INPUT");
      expect(readFileSync(path, "utf8")).toBe("[1]");
    } finally {
      process.chdir(cwd);
    }
  });
});
