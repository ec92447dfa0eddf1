// The GitHub Copilot adapter: every recorded Copilot event (test/hooks/fixtures/copilot, written
// from https://docs.github.com/en/copilot/reference/hooks-reference) in both payload formats
// translated to its AARTS event, every verdict rendered in Copilot's output — ask kept, the
// contained rewrite as modifiedArgs except in the cloud agent — and the install's merge.
import { describe, expect, it } from "vitest";
import { mergeCopilotHooks } from "../../src/cli/commands/hooks-copilot.js";
import {
  COPILOT_EVENTS,
  copilotAdapterFor,
  copilotEventName,
  parseHookEvent,
  renderCopilot,
  translateCopilotEvent,
} from "../../src/hooks/index.js";
import { allow, ask, contained, deny, fixtureOf, inject, json, NOW } from "./host-verdicts.js";

const fixture = fixtureOf("copilot");

const EXPECTED: [string, string, string, string?][] = [
  ["pre-tool-use-bash-npm-test", "preToolUse", "PreToolUse", "shell"],
  ["pre-tool-use-view-aws-credentials", "preToolUse", "PreToolUse", "file_read"],
  ["pre-tool-use-create-github-hook", "preToolUse", "PreToolUse", "file_write"],
  ["pre-tool-use-edit-source", "preToolUse", "PreToolUse", "file_edit"],
  ["pre-tool-use-web-fetch", "preToolUse", "PreToolUse", "web_request"],
  ["pre-tool-use-args-string", "preToolUse", "PreToolUse", "shell"],
  ["post-tool-use-web-fetch-poisoned", "postToolUse", "PostToolUse", "web_request"],
  ["post-tool-use-failure", "postToolUseFailure", "PostToolUse", "shell"],
  ["user-prompt-submitted", "userPromptSubmitted", "PreUserInput"],
  ["session-start", "sessionStart", "SessionStart"],
  ["session-end", "sessionEnd", "SessionEnd"],
  ["agent-stop", "agentStop", "PreOutputDeliver"],
  ["subagent-start", "subagentStart", "PreSubAgentSpawn"],
  ["subagent-stop", "subagentStop", "PostSubAgentResult"],
  ["pre-compact", "preCompact", "PreCompact"],
];

describe("translateCopilotEvent", () => {
  it.each(EXPECTED)("%s (%s) becomes a valid %s event", (name, event, point, tool) => {
    const e = translateCopilotEvent(event, fixture(name), NOW);
    expect(e).toMatchObject({ hook_point: point, host_id: "copilot", session_id: fixture(name).sessionId });
    if (tool) expect(e.tool_name).toBe(tool);
    expect(parseHookEvent(e).ok, name).toBe(true);
  });

  it("covers every Copilot event the adapter handles", () => {
    for (const e of COPILOT_EVENTS)
      expect(
        EXPECTED.some(([, ev]) => ev === e),
        e,
      ).toBe(true);
  });

  it("reads the VS Code-compatible form: PascalCase event, snake_case fields, Claude tool names", () => {
    const input = fixture("vscode-pre-tool-use-bash-rm-rf-home");
    expect(copilotEventName(input)).toBe("preToolUse");
    const e = translateCopilotEvent("preToolUse", input, NOW);
    expect(e).toMatchObject({
      tool_name: "shell",
      tool_name_native: "Bash",
      tool_input: { command: "rm -rf ~" },
    });
  });

  it("a JSON-string toolArgs is parsed; a payload without a session id is keyed by its workspace", () => {
    const e = translateCopilotEvent(
      "preToolUse",
      { timestamp: 1, cwd: "/w", toolName: "bash", toolArgs: '{"command":"ls"}' },
      NOW,
    );
    expect(e).toMatchObject({ session_id: "copilot:/w", tool_input: { command: "ls" } });
  });

  it("str_replace_editor by sub-command, apply_patch by file, task as a delegation", () => {
    const t = (toolName: string, toolArgs: unknown) =>
      translateCopilotEvent(
        "preToolUse",
        { ...fixture("pre-tool-use-bash-npm-test"), toolName, toolArgs },
        NOW,
      );
    expect(t("str_replace_editor", { command: "view", path: "a" }).tool_name).toBe("file_read");
    expect(t("str_replace_editor", { command: "create", path: "a" }).tool_name).toBe("file_write");
    expect(
      t("apply_patch", {
        input: "*** Begin Patch\n*** Delete File: .github/hooks/warden.json\n*** End Patch",
      }),
    ).toMatchObject({
      tool_name: "file_delete",
      tool_input: { file_path: ".github/hooks/warden.json" },
    });
    expect(t("task", { prompt: "x" }).tool_name).toBe("delegate");
  });

  it("the configured event wins; an unknown one becomes an unknown hook point", () => {
    const a = copilotAdapterFor({ event: "postToolUse" });
    expect(a.eventName(fixture("vscode-pre-tool-use-bash-rm-rf-home"))).toBe("postToolUse");
    expect(translateCopilotEvent("unknown", {}, NOW).hook_point).toBe("Copilot:unknown");
  });
});

describe("renderCopilot", () => {
  it("preToolUse: deny and ask as permissionDecision (exit 0), allow silent, a contained call as modifiedArgs", () => {
    expect(json(renderCopilot("preToolUse", deny).stdout)).toEqual({
      permissionDecision: "deny",
      permissionDecisionReason: "Warden: no",
    });
    expect(json(renderCopilot("preToolUse", ask).stdout)).toEqual({
      permissionDecision: "ask",
      permissionDecisionReason: "Warden: no",
    });
    expect(renderCopilot("preToolUse", allow)).toEqual({ exitCode: 0 });
    expect(json(renderCopilot("preToolUse", contained).stdout)).toEqual({
      permissionDecision: "allow",
      modifiedArgs: { command: "contained npm test" },
    });
  });

  it("in the cloud agent a contained call is denied (its runtime may drop modifiedArgs)", () => {
    const a = renderCopilot("preToolUse", contained, true);
    expect(json(a.stdout)).toMatchObject({ permissionDecision: "deny" });
    expect(
      copilotAdapterFor({ event: "preToolUse", cloudAgent: true }).render("preToolUse", contained).stdout,
    ).toBe(a.stdout);
  });

  it("postToolUse and subagentStop replace what the model sees; the rest answer {}", () => {
    expect(json(renderCopilot("postToolUse", deny).stdout)).toEqual({
      modifiedResult: { resultType: "success", textResultForLlm: "Warden: no" },
    });
    const masked = { ...allow, directives: { replacement_text: "[masked]" } };
    expect(json(renderCopilot("postToolUse", masked).stdout)).toEqual({
      modifiedResult: { resultType: "success", textResultForLlm: "[masked]" },
    });
    expect(json(renderCopilot("subagentStop", deny).stdout)).toEqual({ modifiedResponse: "Warden: no" });
    expect(json(renderCopilot("postToolUseFailure", deny).stdout)).toEqual({
      additionalContext: "Warden: no",
    });
    expect(json(renderCopilot("sessionStart", inject).stdout)).toEqual({ additionalContext: "ctx" });
    for (const e of ["userPromptSubmitted", "sessionEnd", "agentStop", "subagentStart", "preCompact"])
      expect(json(renderCopilot(e, deny).stdout), e).toEqual({});
    expect(renderCopilot("notification", allow).exitCode).toBe(2);
  });
});

describe("mergeCopilotHooks", () => {
  it("one entry per event naming its event, version 1, idempotent; another version is refused", () => {
    const cmd = "'/usr/bin/node' '/opt/warden/bin/warden.js' hooks copilot";
    const first = mergeCopilotHooks("w.json", {}, cmd);
    expect(first.file.version).toBe(1);
    expect(first.added).toEqual([...COPILOT_EVENTS]);
    expect((first.file.hooks as Record<string, unknown[]>).preToolUse).toEqual([
      { type: "command", bash: `${cmd} --event preToolUse`, timeoutSec: 60 },
    ]);
    expect(mergeCopilotHooks("w.json", first.file, cmd).added).toEqual([]);
    expect(() => mergeCopilotHooks("w.json", { version: 2 }, cmd)).toThrow(/not 1/);
  });
});
