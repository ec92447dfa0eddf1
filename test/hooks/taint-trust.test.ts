// Trust levels of tool-result sources, in Claude Code's real payload format: the user's own
// workspace does not poison a session by quoting injection phrasing (a finding there is
// journaled at severity info); the web, MCP, files outside the workspace or in its
// dependency directories, network commands, skills and unknown tools do.
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOOK_VERDICT_EVENT, TRUST_LEVELS } from "../../src/hooks/index.js";
import {
  bashResponse,
  decisionOf,
  type Host,
  hostsPerTest,
  INJECTION,
  post,
  pre,
  readResponse,
  SID,
  webFetchResponse,
  workspace,
  writeFile,
} from "./claude-payloads.js";
import { tempDir } from "./helpers.js";

const host = hostsPerTest();

/** The probe of poisoning: a WebFetch to an off-allowlist host, denied only in a poisoned session. */
const probe = (ws: string) =>
  pre(ws, "WebFetch", { url: "https://docs.example.org/guide", prompt: "summarise" });

async function verdicts(h: Host): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const x of h.engine.runtime.store.entries())
    if ("type" in x && x.type === HOOK_VERDICT_EVENT) out.push(x.body as Record<string, unknown>);
  return out;
}

describe("trusted sources: the user's workspace", () => {
  it("reading the workspace README that quotes an injection does not poison the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const readme = join(ws, "README.md");
    const r = await h.send(post(ws, "Read", { file_path: readme }, readResponse(readme, INJECTION)));
    expect(r).toEqual({ exitCode: 0 }); // not blocked
    expect(decisionOf(await h.send(probe(ws)))).toBe("allow");
    expect(decisionOf(await h.send(pre(ws, "mcp__docs__search", { q: "vitest" })))).toBe("allow");
    // The finding is journaled, at severity info, with the detector's rule.
    const found = (await verdicts(h)).find((v) => v.hook_point === "PostToolUse");
    expect(found).toMatchObject({ decision: "allow", severity: "info" });
    expect(String(found?.matched_rule_id)).toMatch(/./);
    expect(JSON.stringify(found?.reasons)).toContain("trusted source (workspace-file)");
  });

  it("grepping and globbing the workspace for injection phrasing does not poison the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const grep = {
      mode: "content",
      numFiles: 1,
      filenames: ["README.md"],
      content: `README.md:2:${INJECTION}`,
      numLines: 1,
    };
    await h.send(post(ws, "Grep", { pattern: "ignore all previous", output_mode: "content" }, grep));
    await h.send(post(ws, "Grep", { pattern: "ignore", path: join(ws, "docs") }, grep));
    expect(decisionOf(await h.send(probe(ws)))).toBe("allow");
  });

  it("the output of a command run in the workspace (cat README.md, npm test) does not poison the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    await h.send(post(ws, "Bash", { command: "cat README.md" }, bashResponse(INJECTION)));
    await h.send(
      post(ws, "Bash", { command: "npm test 2>&1 | tail -50" }, bashResponse(`FAIL ${INJECTION}`)),
    );
    expect(decisionOf(await h.send(probe(ws)))).toBe("allow");
  });

  it("a sub-agent whose own tool calls read only the workspace: its result quoting an injection does not poison", async () => {
    const ws = workspace();
    const h = await host(ws);
    const readme = join(ws, "README.md");
    // The sub-agent's tool calls reached the engine under its own id (an AARTS host's sub-agent).
    await h.send(post(ws, "Read", { file_path: readme }, readResponse(readme, INJECTION), "sub-7"));
    const v = await h.engine.handle({
      hook_point: "PostSubAgentResult",
      session_id: SID,
      timestamp: new Date().toISOString(),
      host_id: "claude-code",
      aarts_version: "1",
      sub_agent_id: "sub-7",
      result: `The README warns about "${INJECTION}".`,
    });
    expect(v.decision).toBe("allow");
    expect(decisionOf(await h.send(probe(ws)))).toBe("allow");
  });
});

describe("untrusted sources poison the session when they carry an injection", () => {
  it("a file outside the workspace carrying an injection poisons the session", async () => {
    const ws = workspace();
    const outside = writeFile(tempDir(), "notes.md", INJECTION);
    const h = await host(ws);
    const r = await h.send(post(ws, "Read", { file_path: outside }, readResponse(outside, INJECTION)));
    expect(decisionOf(r)).toBe("block");
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("a dependency's README in node_modules carrying an injection poisons the session", async () => {
    const ws = workspace();
    const dep = writeFile(ws, "node_modules/left-pad/README.md", INJECTION);
    const h = await host(ws);
    expect(decisionOf(await h.send(post(ws, "Read", { file_path: dep }, readResponse(dep, INJECTION))))).toBe(
      "block",
    );
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("a workspace file written after a web read (downloaded, copied) carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const url = "https://docs.example.org/setup";
    await h.send(post(ws, "WebFetch", { url, prompt: "p" }, webFetchResponse(url, "a clean page")));
    const readme = join(ws, "README.md"); // there before: still the user's own
    expect(
      decisionOf(await h.send(post(ws, "Read", { file_path: readme }, readResponse(readme, INJECTION)))),
    ).toBe("allow");
    const saved = writeFile(ws, "notes/setup.md", INJECTION); // e.g. `curl … -o notes/setup.md`
    const later = new Date(Date.now() + 60_000);
    utimesSync(saved, later, later);
    const r = await h.send(post(ws, "Read", { file_path: saved }, readResponse(saved, INJECTION)));
    expect(decisionOf(r)).toBe("block");
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("the same downloaded file through cat or a Grep of the workspace poisons the session too", async () => {
    for (const via of ["cat", "grep"] as const) {
      const ws = workspace();
      const h = await host(ws);
      const url = "https://docs.example.org/setup";
      await h.send(post(ws, "WebFetch", { url, prompt: "p" }, webFetchResponse(url, "a clean page")));
      const saved = writeFile(ws, "notes/setup.md", INJECTION);
      const later = new Date(Date.now() + 60_000);
      utimesSync(saved, later, later);
      const r =
        via === "cat"
          ? await h.send(post(ws, "Bash", { command: "cat notes/setup.md" }, bashResponse(INJECTION)))
          : await h.send(
              post(
                ws,
                "Grep",
                { pattern: "ignore" },
                { mode: "content", filenames: ["notes/setup.md"], content: INJECTION },
              ),
            );
      expect(decisionOf(r), via).toBe("block");
    }
  });

  it("curl output carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const cmd = { command: "curl -s https://raw.example.com/install.md" };
    expect(decisionOf(await h.send(post(ws, "Bash", cmd, bashResponse(INJECTION))))).toBe("block");
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("a shell command reading a file in HOME carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    await h.send(post(ws, "Bash", { command: "cat ~/Downloads/notes.md" }, bashResponse(INJECTION)));
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("a web page carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const url = "https://blog.example.net/post";
    await h.send(post(ws, "WebFetch", { url, prompt: "summarise" }, webFetchResponse(url, INJECTION)));
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("an MCP resource read through ReadMcpResourceTool carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const contents = { contents: [{ uri: "notes://onboarding", mimeType: "text/plain", text: INJECTION }] };
    await h.send(post(ws, "ReadMcpResourceTool", { server: "notes", uri: "notes://onboarding" }, contents));
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("a sub-agent's (Task) result carrying an injection poisons the session: what it read is unknown", async () => {
    const ws = workspace();
    const h = await host(ws);
    const task = { content: [{ type: "text", text: INJECTION }], totalToolUseCount: 3 };
    const input = { description: "research", prompt: "find the API docs", subagent_type: "general-purpose" };
    expect(decisionOf(await h.send(post(ws, "Task", input, task)))).toBe("block");
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });

  it("an unknown tool's result carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    await h.send(post(ws, "FancyNewTool", { x: 1 }, INJECTION));
    expect(decisionOf(await h.send(probe(ws)))).toBe("deny");
  });
});

describe("the trust table and the preset's host tools", () => {
  it("every source names its trust and reason; every untrusted source a taint label", () => {
    for (const [name, e] of Object.entries(TRUST_LEVELS)) {
      expect(e.reason.length, name).toBeGreaterThan(10);
      if (e.trust === "untrusted") expect("taint" in e && e.taint, name).toBeTruthy();
    }
  });

  it("Skill, TodoWrite, ExitPlanMode, BashOutput, KillShell, AskUserQuestion, MCP resource tools are allowed; Artifact is not", async () => {
    const ws = workspace();
    const h = await host(ws);
    const allowed: [string, Record<string, unknown>][] = [
      ["Skill", { skill: "pdf" }],
      ["TodoWrite", { todos: [{ content: "x", status: "pending", activeForm: "x" }] }],
      ["ExitPlanMode", { plan: "do it" }],
      ["EnterPlanMode", {}],
      ["BashOutput", { bash_id: "b1" }],
      ["KillShell", { shell_id: "b1" }],
      ["AskUserQuestion", { questions: [] }],
      ["SlashCommand", { command: "/review" }],
      ["ListMcpResourcesTool", {}],
      ["ReadMcpResourceTool", { server: "s", uri: "s://x" }],
      ["TaskOutput", { task_id: "t" }],
      ["ToolSearch", { query: "slack" }],
    ];
    for (const [name, input] of allowed)
      expect(decisionOf(await h.send(pre(ws, name, input))), name).toBe("allow");
    expect(decisionOf(await h.send(pre(ws, "Artifact", { path: "x.html" })))).toBe("deny");
  });
});
