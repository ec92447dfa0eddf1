// The Codex CLI adapter: every recorded Codex event (test/hooks/fixtures/codex, written from
// https://developers.openai.com/codex/hooks) translated to its AARTS event and every verdict
// rendered in Codex's output format — including the answers Codex cannot express (ask) and
// the contained rewrite (updatedInput) — and the install's merge.
import { describe, expect, it } from "vitest";
import { CODEX_INSTALL_EVENTS, mergeCodexHooks } from "../../src/cli/commands/hooks-codex.js";
import { CODEX_EVENTS, parseHookEvent, renderCodex, translateCodex } from "../../src/hooks/index.js";
import { allow, ask, contained, deny, fixtureOf, inject, NOW } from "./host-verdicts.js";

const fixture = fixtureOf("codex");

const EXPECTED: Record<string, { point: string; tool?: string; native?: string }> = {
  "pre-tool-use-bash-npm-test": { point: "PreToolUse", tool: "shell", native: "Bash" },
  "pre-tool-use-bash-rm-rf-home": { point: "PreToolUse", tool: "shell", native: "Bash" },
  "pre-tool-use-apply-patch-src": { point: "PreToolUse", tool: "file_edit", native: "apply_patch" },
  "pre-tool-use-apply-patch-hooks-json": { point: "PreToolUse", tool: "file_write", native: "apply_patch" },
  "pre-tool-use-mcp-slack-post": {
    point: "PreToolUse",
    tool: "mcp_call",
    native: "mcp__slack__post_message",
  },
  "permission-request-bash": { point: "PreToolUse", tool: "shell", native: "Bash" },
  "post-tool-use-bash-benign": { point: "PostToolUse", tool: "shell" },
  "post-tool-use-mcp-poisoned": { point: "PostToolUse", tool: "mcp_call" },
  "user-prompt-submit-secret": { point: "PreUserInput" },
  "session-start-startup": { point: "SessionStart" },
  stop: { point: "PreOutputDeliver" },
  "pre-compact": { point: "PreCompact" },
  "post-compact": { point: "PostCompact" },
  "subagent-start": { point: "PreSubAgentSpawn" },
  "subagent-stop": { point: "PostSubAgentResult" },
};

describe("translateCodex", () => {
  it.each(Object.entries(EXPECTED))("%s becomes a valid AARTS event", (name, want) => {
    const event = translateCodex(fixture(name), NOW);
    expect(event).toMatchObject({
      hook_point: want.point,
      host_id: "codex",
      session_id: fixture(name).session_id,
    });
    if (want.tool) expect(event.tool_name).toBe(want.tool);
    if (want.native) expect(event.tool_name_native).toBe(want.native);
    expect(parseHookEvent(event).ok, name).toBe(true);
  });

  it("covers every Codex event the adapter names", () => {
    const names = new Set(Object.keys(EXPECTED).map((n) => String(fixture(n).hook_event_name)));
    for (const e of CODEX_EVENTS) expect(names.has(e), e).toBe(true);
  });

  it("a patch is checked on the file most likely refused: the hidden settings file, not the source", () => {
    const e = translateCodex(fixture("pre-tool-use-apply-patch-hooks-json"), NOW);
    expect(e.tool_input).toMatchObject({
      file_path: ".codex/hooks.json",
      paths: ["src/parser.ts", ".codex/hooks.json"],
    });
    const outside = translateCodex(
      {
        ...fixture("pre-tool-use-apply-patch-src"),
        tool_input: {
          command: "*** Begin Patch\n*** Update File: a.ts\n*** Update File: ../../.bashrc\n*** End Patch",
        },
      },
      NOW,
    );
    expect((outside.tool_input as Record<string, unknown>).file_path).toBe("../../.bashrc");
  });

  it("the MCP result's content blocks become the text the engine scans; a sub-agent call carries its provenance", () => {
    const e = translateCodex(fixture("post-tool-use-mcp-poisoned"), NOW);
    expect(e.tool_result).toContain("ignore all previous instructions");
    const sub = translateCodex(
      { ...fixture("pre-tool-use-bash-npm-test"), agent_id: "agent-1", agent_type: "worker" },
      NOW,
    );
    expect(sub).toMatchObject({ is_sub_agent: true });
  });

  it("an event Codex does not have becomes an unknown hook point (the engine refuses it)", () => {
    expect(translateCodex({ hook_event_name: "BeforeTeleport", session_id: "s" }, NOW).hook_point).toBe(
      "Codex:BeforeTeleport",
    );
  });
});

describe("renderCodex", () => {
  it("PreToolUse deny and ask (Codex has no ask) block: exit 2, reason on stderr, a deny in the JSON", () => {
    for (const v of [deny, ask]) {
      const a = renderCodex("PreToolUse", v);
      expect(a.exitCode).toBe(2);
      expect(a.stderr).toBe("Warden: no\n");
      expect(JSON.parse(a.stdout ?? "")).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "Warden: no",
        },
      });
    }
  });

  it("PreToolUse allow is silent (Codex's own approvals still apply); a contained call is allow + updatedInput", () => {
    expect(renderCodex("PreToolUse", allow)).toEqual({ exitCode: 0 });
    expect(JSON.parse(renderCodex("PreToolUse", contained).stdout ?? "")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput: { command: "contained npm test" },
      },
    });
  });

  it("PermissionRequest: deny is behavior deny; ask and allow fall through to Codex's own prompt", () => {
    expect(JSON.parse(renderCodex("PermissionRequest", deny).stdout ?? "")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "Warden: no" },
      },
    });
    expect(renderCodex("PermissionRequest", ask)).toEqual({ exitCode: 0 });
    expect(renderCodex("PermissionRequest", allow)).toEqual({ exitCode: 0 });
  });

  it("PostToolUse, UserPromptSubmit, SessionStart and the notifications", () => {
    expect(JSON.parse(renderCodex("PostToolUse", deny).stdout ?? "")).toEqual({
      decision: "block",
      reason: "Warden: no",
    });
    const masked = renderCodex("PostToolUse", { ...allow, directives: { replacement_text: "[masked]" } });
    expect(JSON.parse(masked.stdout ?? "").hookSpecificOutput.additionalContext).toContain("credentials");
    expect(JSON.parse(renderCodex("UserPromptSubmit", ask).stdout ?? "")).toEqual({
      decision: "block",
      reason: "Warden: no",
    });
    expect(
      JSON.parse(renderCodex("SessionStart", inject).stdout ?? "").hookSpecificOutput.additionalContext,
    ).toBe("ctx");
    expect(renderCodex("PreCompact", deny).exitCode).toBe(2);
    for (const e of ["Stop", "SubagentStop", "SubagentStart", "PostCompact"]) {
      expect(renderCodex(e, allow), e).toEqual({ exitCode: 0 });
      expect(JSON.parse(renderCodex(e, deny).stdout ?? ""), e).toEqual({ systemMessage: "Warden: no" });
    }
    expect(renderCodex("BeforeTeleport", allow).exitCode).toBe(2);
  });
});

describe("mergeCodexHooks", () => {
  it("adds one entry per event with no matcher (every tool), keeps the others, and is idempotent", () => {
    const cmd = "'/usr/bin/node' '/opt/warden/bin/warden.js' hooks codex";
    const first = mergeCodexHooks(
      "h.json",
      { hooks: { Stop: [{ hooks: [{ type: "command", command: "x" }] }] } },
      cmd,
    );
    expect(first.added).toEqual([...CODEX_INSTALL_EVENTS]);
    const hooks = first.file.hooks as Record<string, unknown[]>;
    expect(hooks.Stop).toHaveLength(2);
    expect(hooks.PreToolUse).toEqual([{ hooks: [{ type: "command", command: cmd, timeout: 60 }] }]);
    expect(mergeCodexHooks("h.json", first.file, cmd).added).toEqual([]);
  });
});
