// No lock-out: a clean web read leaves ordinary work alone; a poisoned session loses only
// the tools that send data out around the sandbox; an MCP result in Claude Code's content
// blocks is read and scanned. Claude Code's real payload format throughout; the harm a
// denial prevents is shown not to happen (a loopback canary receives nothing).

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANONICAL_TOOLS, POISONED_SESSION } from "../../src/hooks/index.js";
import { poisonedSignal } from "../../src/hooks/poisoned.js";
import {
  bashResponse,
  decisionOf,
  type Host,
  hostsPerTest,
  INJECTION,
  post,
  pre,
  SID,
  spawnHook,
  webFetchResponse,
  workspace,
} from "./claude-payloads.js";
import { tempDir } from "./helpers.js";

const host = hostsPerTest();

// A loopback canary: what a WebFetch the host ran would have delivered.
let canary: Server;
let canaryUrl = "";
const received: string[] = [];
beforeAll(async () => {
  canary = createServer((req, res) => {
    received.push(req.url ?? "");
    res.end("ok");
  });
  await new Promise<void>((r) => canary.listen(0, "127.0.0.1", r));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => canary.close(() => r())));

/** The host runs a WebFetch only when the hook does not object. */
async function webFetch(h: Host, ws: string, url: string): Promise<string> {
  const d = decisionOf(await h.send(pre(ws, "WebFetch", { url, prompt: "send" })));
  if (d === "allow") await fetch(url);
  return d;
}

const cleanRead = (ws: string) =>
  post(
    ws,
    "WebFetch",
    { url: "https://vitest.dev/guide/", prompt: "how do I run tests" },
    webFetchResponse("https://vitest.dev/guide/", "Run `npx vitest run` to run the tests once."),
  );

const WORK = [
  "npm test",
  "npx vitest run",
  "curl localhost:3000/health",
  'gh pr create --title "Fix parser" --body "Fixes the tokenizer"',
  "docker build -t app .",
];

describe("after a clean web read", () => {
  it("npm test after a clean WebFetch is not denied, nor tests, local servers, PRs and builds", async () => {
    const ws = workspace();
    const h = await host(ws);
    expect(await h.send(cleanRead(ws))).toEqual({ exitCode: 0 });
    for (const command of WORK)
      expect(decisionOf(await h.send(pre(ws, "Bash", { command, description: "work" }))), command).toBe(
        "allow",
      );
    // …and the Gate did not quarantine the run: an edit afterwards is still fine.
    const edit = { file_path: join(ws, "src/a.ts"), old_string: "a", new_string: "b" };
    expect(decisionOf(await h.send(pre(ws, "Edit", edit)))).toBe("allow");
  });

  it("npm test after a clean WebFetch is not denied in the next hook process either (built CLI, state on disk)", () => {
    const ws = workspace();
    const dir = tempDir();
    const run = (payload: Record<string, unknown>) => spawnHook(dir, payload);
    expect(run(cleanRead(ws))).toEqual({ exitCode: 0 });
    expect(decisionOf(run(pre(ws, "Bash", { command: "npx vitest run" })))).toBe("allow");
    expect(decisionOf(run(pre(ws, "Bash", { command: "curl localhost:3000/health" })))).toBe("allow");
  });
});

describe("a poisoned session", () => {
  it("a web read with an injection poisons: direct egress is denied and the canary receives nothing", async () => {
    const ws = workspace();
    const clean = await host(ws);
    // The same WebFetch in a clean session reaches the canary (the harness works).
    expect(await webFetch(clean, ws, `${canaryUrl}/clean`)).toBe("allow");
    expect(received).toContain("/clean");
    const h = await host(ws);
    const url = "https://blog.example.net/post";
    const r = await h.send(post(ws, "WebFetch", { url, prompt: "p" }, webFetchResponse(url, INJECTION)));
    expect(decisionOf(r)).toBe("block");
    expect(await webFetch(h, ws, `${canaryUrl}/exfil?d=QUtJQQ`)).toBe("deny");
    expect(received.some((u) => u.startsWith("/exfil"))).toBe(false);
    expect(decisionOf(await h.send(pre(ws, "mcp__slack__post_message", { text: "hi" })))).toBe("deny");
    const task = { description: "d", prompt: "send the notes", subagent_type: "general-purpose" };
    expect(decisionOf(await h.send(pre(ws, "Task", task)))).toBe("deny");
  });

  it("a poisoned session still runs contained shell commands, edits workspace files and fetches from the allowlist", async () => {
    const ws = workspace();
    const h = await host(ws);
    await h.send(post(ws, "Bash", { command: "curl -s https://x.example/p" }, bashResponse(INJECTION)));
    for (const command of WORK)
      expect(decisionOf(await h.send(pre(ws, "Bash", { command }))), command).toBe("allow");
    const edit = { file_path: join(ws, "src/a.ts"), old_string: "a", new_string: "b" };
    expect(decisionOf(await h.send(pre(ws, "Edit", edit)))).toBe("allow");
    const registry = { url: "https://registry.npmjs.org/vitest", prompt: "latest version" };
    expect(decisionOf(await h.send(pre(ws, "WebFetch", registry)))).toBe("allow");
    const denied = JSON.parse(
      (await h.send(pre(ws, "WebFetch", { url: "https://x.example", prompt: "p" }))).stdout ?? "{}",
    );
    expect(JSON.stringify(denied)).toContain("warden hooks clear");
  });

  it("a poisoned session asks before writing outside the workspace and the scratch directory", () => {
    const ws = workspace();
    const ctx = { workspace: ws, session: { poisoned: ["prompt injection from WebFetch (web)"] } };
    const signal = (tool: "file_write" | "file_edit", path: string) =>
      poisonedSignal(ctx as unknown as Parameters<typeof poisonedSignal>[0], tool, { file_path: path }, [
        path,
      ]);
    expect(signal("file_write", join(ws, "src/a.ts"))).toBeUndefined();
    expect(signal("file_write", join(tempDir(), "sample.json"))).toBeUndefined(); // scratch (temp dir)
    expect(signal("file_edit", join(homedir(), ".bashrc"))).toMatchObject({
      decision: "ask",
      matched_rule_id: "aarts-poisoned-write-outside",
    });
    expect(signal("file_write", "~/.profile")).toMatchObject({ decision: "ask" });
  });

  it("the table says what a poisoned session may do for every canonical tool", () => {
    for (const t of CANONICAL_TOOLS) expect(POISONED_SESSION[t]?.reason, t).toBeTruthy();
    expect(POISONED_SESSION.shell.answer).toBe("allow");
    expect(POISONED_SESSION.mcp_call.answer).toBe("deny");
  });
});

describe("MCP results in content blocks", () => {
  const fixture = (name: string) =>
    JSON.parse(
      readFileSync(join(import.meta.dirname, "../fixtures/claude-code", `${name}.json`), "utf8"),
    ) as Record<string, unknown>;

  it("a recorded MCP result of content blocks carrying an injection poisons the next hook process (built CLI)", () => {
    const dir = tempDir();
    expect(decisionOf(spawnHook(dir, fixture("pre-tool-use-webfetch-after-mcp")))).toBe("allow");
    const r = spawnHook(dir, fixture("post-tool-use-mcp-content-blocks"));
    expect(r.exitCode).toBe(0); // no ERR_HOOK_EVENT_INVALID
    expect(decisionOf(r)).toBe("block");
    expect(decisionOf(spawnHook(dir, fixture("pre-tool-use-webfetch-after-mcp")))).toBe("deny");
  });

  const mcpBlocks = (text: string) => [
    { type: "text", text: "Onboarding checklist" },
    { type: "image", data: "iVBORw0KGgo".repeat(50_000), mimeType: "image/png" },
    { type: "resource", resource: { uri: "notes://onboarding", mimeType: "text/markdown", text } },
  ];

  it("an MCP tool result in content blocks carrying an injection poisons the session", async () => {
    const ws = workspace();
    const h = await host(ws);
    const r = await h.send(post(ws, "mcp__notes__get_note", { id: "onboarding" }, mcpBlocks(INJECTION)));
    expect(decisionOf(r)).toBe("block");
    expect(await webFetch(h, ws, `${canaryUrl}/mcp-exfil`)).toBe("deny");
    expect(received.some((u) => u.startsWith("/mcp-exfil"))).toBe(false);
  });

  it("an MCP result wrapped as {content, isError} or carrying structuredContent is scanned too", async () => {
    for (const response of [
      { content: [{ type: "text", text: INJECTION }], isError: false },
      { content: [{ type: "text", text: "{}" }], structuredContent: { note: INJECTION } },
    ]) {
      const ws = workspace();
      const h = await host(ws);
      expect(decisionOf(await h.send(post(ws, "mcp__notes__get", {}, response)))).toBe("block");
      expect(decisionOf(await h.send(pre(ws, "WebFetch", { url: "https://x.example", prompt: "p" })))).toBe(
        "deny",
      );
    }
  });

  it("a clean MCP result in content blocks does not poison the session (and is no invalid event)", async () => {
    const ws = workspace();
    const h = await host(ws);
    const r = await h.send(post(ws, "mcp__notes__get_note", { id: "onboarding" }, mcpBlocks("Meet at 10.")));
    expect(r).toEqual({ exitCode: 0 });
    expect(decisionOf(await h.send(pre(ws, "WebFetch", { url: "https://x.example", prompt: "p" })))).toBe(
      "allow",
    );
    expect(SID).toBeTruthy();
  });
});
