// The Cursor adapter end to end: the built `warden hooks cursor` spawned once per recorded
// Cursor hook payload (test/hooks/fixtures/cursor, written from Cursor's documented hook
// input format, https://cursor.com/docs/agent/hooks), as Cursor runs it — a new process per
// hook, state beside the journal.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = join(import.meta.dirname, "fixtures/cursor");

interface Run {
  code: number | null;
  out: Record<string, unknown> | null;
  err: string;
}

function run(dir: string, input: string | Buffer): Run {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "cursor"], {
    input,
    env: { ...process.env, WARDEN_HOOKS_DIR: dir },
    encoding: "utf8",
    timeout: 30_000,
  });
  return {
    code: r.status,
    out: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, unknown>) : null,
    err: r.stderr,
  };
}

const hook = (dir: string, fixture: string): Run => run(dir, readFileSync(join(FIXTURES, `${fixture}.json`)));

describe("warden hooks cursor (spawned, recorded payloads)", () => {
  it("a hostile rm -rf / is denied with Cursor's permission answer and exit 2", () => {
    const r = hook(tempDir(), "before-shell-rm-rf");
    expect(r.code).toBe(2);
    expect(r.out).toMatchObject({ permission: "deny" });
    expect(String(r.out?.agent_message)).toContain("DESTRUCTIVE_COMMAND");
    expect(String(r.out?.user_message)).toMatch(/^Warden: /);
  });

  it("a curl | sh is denied", () => {
    const r = hook(tempDir(), "before-shell-curl-pipe-sh");
    expect(r.out).toMatchObject({ permission: "deny" });
    expect(JSON.stringify(r.out)).toContain("REMOTE_CODE_EXECUTION");
  });

  it("a shell write outside the workspace (>> ~/.bashrc) is denied; a redirect inside it is allowed", () => {
    const dir = tempDir();
    const out = hook(dir, "before-shell-write-outside-workspace");
    expect(out.out).toMatchObject({ permission: "deny" });
    expect(JSON.stringify(out.out)).toContain("OUTSIDE_WORKSPACE");
    expect(hook(dir, "before-shell-write-inside-workspace")).toMatchObject({
      code: 0,
      out: { permission: "allow" },
    });
    expect(hook(dir, "before-shell-npm-test").out).toEqual({ permission: "allow" });
  });

  it("a secret in a prompt is blocked with continue: false before the model sees it", () => {
    const dir = tempDir();
    const r = hook(dir, "before-submit-prompt-secret");
    expect(r.out).toMatchObject({ continue: false });
    expect(String(r.out?.user_message)).toContain("github_token");
    expect(JSON.stringify(r.out)).not.toContain("ghp_R4nd0m");
    expect(hook(dir, "before-submit-prompt-benign").out).toEqual({ continue: true });
  });

  it("an MCP call after a poisoned MCP result is denied in the next process", () => {
    const dir = tempDir();
    expect(hook(dir, "before-mcp-slack-post").out).toEqual({ permission: "allow" });
    expect(hook(dir, "after-mcp-poisoned")).toMatchObject({ code: 0, out: {} });
    const exfil = hook(dir, "before-mcp-slack-post");
    expect(exfil.code).toBe(2);
    expect(exfil.out).toMatchObject({ permission: "deny" });
    expect(JSON.stringify(exfil.out)).toContain("may send data out");
    // The shell is not: its commands run contained (network only through the allowlist proxy).
    expect(hook(dir, "before-shell-npm-test").out).not.toMatchObject({ permission: "deny" });
  });

  it("reading .env is denied (allow|deny only); reading source is allowed", () => {
    const dir = tempDir();
    expect(hook(dir, "before-read-file-env").out).toMatchObject({ permission: "deny" });
    expect(hook(dir, "before-read-file-source").out).toEqual({ permission: "allow" });
  });

  it("observe-only events answer {} and stop ends the session", () => {
    const dir = tempDir();
    for (const f of ["after-shell-benign", "after-file-edit", "after-agent-response", "stop"]) {
      expect(hook(dir, f)).toMatchObject({ code: 0, out: {} });
    }
  });

  it("input that is not a Cursor event fails closed: exit 2, coded reason on stderr", () => {
    const bad = run(tempDir(), "{not json");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("ERR_HOOK_EVENT_INVALID");
    const unknown = run(
      tempDir(),
      JSON.stringify({ hook_event_name: "beforeTeleport", conversation_id: "c" }),
    );
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("ERR_HOOK_POINT_UNKNOWN");
  });
});

describe("warden hooks install cursor", () => {
  const install = (cwd: string, ...args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "install", "cursor", ...args], {
      cwd,
      encoding: "utf8",
    });

  it("writes .cursor/hooks.json with version 1 and Warden on every event, twice is a no-op", () => {
    const dir = tempDir();
    expect(install(dir).status).toBe(0);
    const file = JSON.parse(readFileSync(join(dir, ".cursor/hooks.json"), "utf8"));
    expect(file.version).toBe(1);
    expect(file.hooks.beforeShellExecution).toHaveLength(1);
    expect(file.hooks.beforeShellExecution[0].command).toMatch(
      /^\S+ '?\/\S*\/bin\/warden-hook\.js'? cursor$/,
    );
    expect(install(dir).stdout).toContain("already installed");
  });

  it("refuses a hooks.json of another version, leaving it unchanged", () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".cursor"));
    writeFileSync(join(dir, ".cursor/hooks.json"), '{"version":2,"hooks":{}}');
    const r = install(dir, "--project");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_CLI_INPUT");
    expect(readFileSync(join(dir, ".cursor/hooks.json"), "utf8")).toBe('{"version":2,"hooks":{}}');
  });
});
