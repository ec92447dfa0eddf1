// The Cursor adapter's translation and rendering, and `warden hooks install cursor`'s merge.
import { describe, expect, it } from "vitest";
import { mergeCursorHooks } from "../../src/cli/commands/hooks-cursor.js";
import { CURSOR_EVENTS, renderCursor, translateCursor, type Verdict } from "../../src/hooks/index.js";

const NOW = "2026-01-01T00:00:00.000Z";
const base = { conversation_id: "c1", generation_id: "g1", workspace_roots: ["/w"] };
const deny: Verdict = {
  decision: "deny",
  category: "tool_execution",
  severity: "critical",
  source: "policy",
  reasons: ["no"],
};
const ask: Verdict = { ...deny, decision: "ask", severity: "warning" };
const allow: Verdict = { decision: "allow", category: "tool_execution", severity: "info", source: "policy" };

describe("translateCursor", () => {
  it("an MCP call names its server from the URL and parses Cursor's JSON-string tool_input", () => {
    const e = translateCursor(
      {
        ...base,
        hook_event_name: "beforeMCPExecution",
        tool_name: "post_message",
        tool_input: '{"text":"hi"}',
        url: "https://mcp.slack.example/sse",
      },
      NOW,
    );
    expect(e).toMatchObject({
      hook_point: "PreToolUse",
      session_id: "c1",
      turn_id: "g1",
      tool_name: "mcp_call",
      tool_name_native: "mcp__mcp.slack.example__post_message",
      tool_input: { text: "hi", server_url: "https://mcp.slack.example/sse" },
    });
  });

  it("a tool name with __ cannot pose as another server; a tool_input that is not JSON is kept as text", () => {
    const e = translateCursor(
      {
        ...base,
        hook_event_name: "beforeMCPExecution",
        tool_name: "x__trusted__read",
        tool_input: "{oops",
        command: "npx evil-mcp",
      },
      NOW,
    );
    expect(e.tool_name_native).toBe("mcp__npx__x_trusted_read");
    expect(e.tool_input).toMatchObject({ input: "{oops", server_command: "npx evil-mcp" });
  });

  it("the server input fields win over tool arguments of the same name", () => {
    const e = translateCursor(
      {
        ...base,
        hook_event_name: "beforeMCPExecution",
        tool_name: "t",
        tool_input: '{"server_url":"https://spoof"}',
        url: "https://real.example",
      },
      NOW,
    );
    expect((e.tool_input as Record<string, unknown>).server_url).toBe("https://real.example");
  });

  it("an event Cursor does not have becomes an unknown hook point (the engine refuses it)", () => {
    expect(translateCursor({ ...base, hook_event_name: "beforeTeleport" }, NOW).hook_point).toBe(
      "Cursor:beforeTeleport",
    );
  });
});

describe("renderCursor", () => {
  it("deny on a shell/MCP call exits 2 with permission deny; ask is kept; allow is permission allow", () => {
    const d = renderCursor("beforeShellExecution", deny);
    expect(d.exitCode).toBe(2);
    expect(JSON.parse(d.stdout ?? "")).toMatchObject({ permission: "deny", user_message: "Warden: no" });
    expect(JSON.parse(renderCursor("beforeMCPExecution", ask).stdout ?? "")).toMatchObject({
      permission: "ask",
    });
    expect(JSON.parse(renderCursor("beforeShellExecution", allow).stdout ?? "")).toEqual({
      permission: "allow",
    });
  });

  it("beforeReadFile has no ask: ask becomes deny", () => {
    expect(JSON.parse(renderCursor("beforeReadFile", ask).stdout ?? "")).toMatchObject({
      permission: "deny",
    });
  });

  it("a blocked prompt answers continue: false", () => {
    expect(JSON.parse(renderCursor("beforeSubmitPrompt", ask).stdout ?? "")).toMatchObject({
      continue: false,
    });
  });

  it("an unknown event exits 2 with the reason on stderr", () => {
    expect(renderCursor("beforeTeleport", deny)).toMatchObject({ exitCode: 2, stderr: "Warden: no\n" });
  });
});

describe("mergeCursorHooks (install)", () => {
  it("adds Warden to every handled event, keeps other hooks and fields, and is idempotent", () => {
    const mine = { command: "./hooks/format.sh" };
    const { file, added } = mergeCursorHooks(
      { version: 1, hooks: { afterFileEdit: [mine] }, x: 1 },
      "warden hooks cursor",
    );
    expect(added).toEqual([...CURSOR_EVENTS]);
    expect(file.x).toBe(1);
    expect(file.hooks?.afterFileEdit).toEqual([mine, { command: "warden hooks cursor" }]);
    expect(mergeCursorHooks(file, "warden hooks cursor").added).toEqual([]);
  });
});
