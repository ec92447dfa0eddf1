// The Gemini CLI adapter: every recorded Gemini CLI event (test/hooks/fixtures/gemini, written
// from https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md) translated
// to its AARTS event and every verdict rendered in Gemini CLI's output — ask (undocumented
// there) as deny, the contained rewrite as hookSpecificOutput.tool_input — and the install's merge.
import { describe, expect, it } from "vitest";
import { mergeGeminiSettings } from "../../src/cli/commands/hooks-gemini.js";
import { GEMINI_EVENTS, parseHookEvent, renderGemini, translateGemini } from "../../src/hooks/index.js";
import { allow, ask, deny, fixtureOf, inject, NOW } from "./host-verdicts.js";

const fixture = fixtureOf("gemini");

const EXPECTED: Record<string, { point: string; tool?: string; native?: string }> = {
  "before-tool-shell-npm-test": { point: "PreToolUse", tool: "shell", native: "Bash" },
  "before-tool-read-file-ssh-key": { point: "PreToolUse", tool: "file_read", native: "Read" },
  "before-tool-write-gemini-settings": { point: "PreToolUse", tool: "file_write", native: "Write" },
  "before-tool-replace-source": { point: "PreToolUse", tool: "file_edit", native: "Edit" },
  "before-tool-web-fetch": { point: "PreToolUse", tool: "web_request", native: "WebFetch" },
  "before-tool-mcp-slack-post": { point: "PreToolUse", tool: "mcp_call", native: "mcp__slack__post_message" },
  "after-tool-web-fetch-poisoned": { point: "PostToolUse", tool: "web_request" },
  "after-tool-read-file-benign": { point: "PostToolUse", tool: "file_read" },
  "before-agent-secret": { point: "PreUserInput" },
  "after-agent": { point: "PreOutputDeliver" },
  "session-start": { point: "SessionStart" },
  "session-end": { point: "SessionEnd" },
  "pre-compress": { point: "PreCompact" },
};

describe("translateGemini", () => {
  it.each(Object.entries(EXPECTED))("%s becomes a valid AARTS event", (name, want) => {
    const event = translateGemini(fixture(name), NOW);
    expect(event).toMatchObject({ hook_point: want.point, host_id: "gemini" });
    if (want.tool) expect(event.tool_name).toBe(want.tool);
    if (want.native) expect(event.tool_name_native).toBe(want.native);
    expect(parseHookEvent(event).ok, name).toBe(true);
  });

  it("covers every Gemini event the adapter handles", () => {
    const names = new Set(Object.keys(EXPECTED).map((n) => String(fixture(n).hook_event_name)));
    for (const e of GEMINI_EVENTS) expect(names.has(e), e).toBe(true);
  });

  it("web_fetch's URL comes out of its prompt; a directory tool's dir_path is its path; llmContent is the result", () => {
    expect(translateGemini(fixture("before-tool-web-fetch"), NOW).tool_input).toMatchObject({
      url: "https://docs.example.dev/guide/setup",
    });
    const ls = translateGemini(
      {
        ...fixture("before-tool-read-file-source"),
        tool_name: "list_directory",
        tool_input: { dir_path: "/home/dev/.ssh" },
      },
      NOW,
    );
    expect(ls.tool_input).toMatchObject({ path: "/home/dev/.ssh" });
    expect(translateGemini(fixture("after-tool-web-fetch-poisoned"), NOW).tool_result).toContain(
      "ignore all previous",
    );
  });

  it("an MCP tool without mcp_context still becomes mcp__server__tool; a sub-agent tool is a delegation", () => {
    const e = translateGemini(
      { ...fixture("before-tool-shell-npm-test"), tool_name: "mcp_github_create_issue", tool_input: {} },
      NOW,
    );
    expect(e).toMatchObject({ tool_name: "mcp_call", tool_name_native: "mcp__github__create_issue" });
    const d = translateGemini(
      { ...fixture("before-tool-shell-npm-test"), tool_name: "codebase_investigator", tool_input: {} },
      NOW,
    );
    expect(d.tool_name).toBe("delegate");
  });

  it("an event Warden does not handle becomes an unknown hook point", () => {
    expect(translateGemini({ hook_event_name: "BeforeModel", session_id: "s" }, NOW).hook_point).toBe(
      "Gemini:BeforeModel",
    );
  });
});

describe("renderGemini", () => {
  it("BeforeTool deny and ask block twice over: decision deny on stdout and exit 2 with the reason", () => {
    for (const v of [deny, ask]) {
      const a = renderGemini("BeforeTool", v);
      expect(a.exitCode).toBe(2);
      expect(JSON.parse(a.stdout ?? "")).toEqual({ decision: "deny", reason: "Warden: no" });
      expect(a.stderr).toBe("Warden: no\n");
    }
  });

  it("BeforeTool allow is {} (no decision: the host's confirmations stay); a contained call rewrites tool_input", () => {
    expect(JSON.parse(renderGemini("BeforeTool", allow).stdout ?? "")).toEqual({});
    const c = renderGemini("BeforeTool", {
      ...allow,
      directives: { updated_input: { command: "contained" } },
    });
    expect(JSON.parse(c.stdout ?? "")).toEqual({
      hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: "contained" } },
    });
  });

  it("AfterTool: deny replaces the result with the reason, a masked credential with the masked text", () => {
    expect(JSON.parse(renderGemini("AfterTool", deny).stdout ?? "")).toEqual({
      decision: "deny",
      reason: "Warden: no",
    });
    const m = renderGemini("AfterTool", { ...allow, directives: { replacement_text: "key=[masked]" } });
    expect(JSON.parse(m.stdout ?? "")).toEqual({ decision: "deny", reason: "key=[masked]" });
    expect(JSON.parse(renderGemini("AfterTool", allow).stdout ?? "")).toEqual({});
  });

  it("BeforeAgent blocks a prompt; SessionStart injects; advisory events show findings only", () => {
    expect(renderGemini("BeforeAgent", ask).exitCode).toBe(2);
    expect(JSON.parse(renderGemini("BeforeAgent", allow).stdout ?? "")).toEqual({});
    expect(
      JSON.parse(renderGemini("SessionStart", inject).stdout ?? "").hookSpecificOutput.additionalContext,
    ).toBe("ctx");
    for (const e of ["AfterAgent", "SessionEnd", "PreCompress"]) {
      expect(renderGemini(e, deny).exitCode, e).toBe(0);
      expect(JSON.parse(renderGemini(e, deny).stdout ?? ""), e).toEqual({ systemMessage: "Warden: no" });
    }
    expect(renderGemini("BeforeModel", allow).exitCode).toBe(2);
  });
});

describe("mergeGeminiSettings", () => {
  it("adds a named command hook per event, with matcher * on the tool events only, idempotently", () => {
    const cmd = "'/usr/bin/node' '/opt/warden/bin/warden.js' hooks gemini";
    const first = mergeGeminiSettings("s.json", { theme: "dark" }, cmd);
    expect(first.added).toEqual([...GEMINI_EVENTS]);
    const hooks = first.file.hooks as Record<string, Record<string, unknown>[]>;
    expect(hooks.BeforeTool?.[0]).toEqual({
      matcher: "*",
      hooks: [{ name: "warden", type: "command", command: cmd, timeout: 60000 }],
    });
    expect(hooks.SessionStart?.[0]?.matcher).toBeUndefined();
    expect(mergeGeminiSettings("s.json", first.file, cmd).added).toEqual([]);
  });
});
