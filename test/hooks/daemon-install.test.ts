// `warden hooks install claude-code` for the daemon era: absolute paths (the bare
// `warden hooks claude-code` exited 127 without `warden` on PATH, which Claude Code treats as
// a non-blocking error: fail open), merged with the user's settings, idempotent, an older
// Warden entry replaced, onFailure "block" on every entry, and no hook token in any
// environment Claude Code hands to the agent's commands.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bashEvent, decisionOf, requireBuild, stopDaemonIn, WARDEN } from "./daemon-helpers.js";
import { tempDir } from "./helpers.js";

type Settings = {
  hooks: Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>>;
} & Record<string, unknown>;

const started: string[] = [];
afterAll(async () => {
  for (const dir of started) await stopDaemonIn(dir);
});

function install(cwd: string, ...args: string[]) {
  requireBuild();
  const { WARDEN_HOOKS_PORT: _p, ...env } = process.env;
  return spawnSync(process.execPath, [WARDEN, "hooks", "install", "claude-code", ...args], {
    cwd,
    env: { ...env, PATH: "/usr/bin:/bin" },
    encoding: "utf8",
  });
}

const read = (cwd: string) =>
  JSON.parse(readFileSync(join(cwd, ".claude/settings.json"), "utf8")) as Settings;
const wardenHandlers = (s: Settings, event: string) =>
  (s.hooks[event] ?? []).flatMap((g) => g.hooks).filter((h) => /warden/i.test(JSON.stringify(h)));

describe("warden hooks install claude-code (the lean entry, the daemon's http hook)", () => {
  it("writes the lean entry with absolute node and launcher paths and onFailure block, merged and idempotent", () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, ".claude"));
    const mine = { matcher: "Write", hooks: [{ type: "command", command: "prettier --write" }] };
    writeFileSync(
      join(cwd, ".claude/settings.json"),
      JSON.stringify({ model: "opus", hooks: { PostToolUse: [mine] } }),
    );
    const r = install(cwd, "--project");
    expect(r.status, r.stderr).toBe(0);
    const s = read(cwd);
    expect(s.model).toBe("opus");
    expect(s.hooks.PostToolUse?.[0]).toEqual(mine);
    const [h] = wardenHandlers(s, "PreToolUse");
    expect(h).toMatchObject({ type: "command", onFailure: "block" });
    const command = String(h?.command);
    expect(command.startsWith(process.execPath) || command.startsWith(`'${process.execPath}'`)).toBe(true);
    expect(command).toMatch(/\/bin\/warden-hook\.js'? claude-code$/);
    const before = readFileSync(join(cwd, ".claude/settings.json"), "utf8");
    const again = install(cwd);
    expect(again.stdout).toContain("already installed");
    expect(readFileSync(join(cwd, ".claude/settings.json"), "utf8")).toBe(before);
  });

  it("replaces an older bare `warden hooks claude-code` entry instead of adding a second", () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, ".claude"));
    const old = { type: "command", command: "warden hooks claude-code", timeout: 15 };
    const other = { type: "command", command: "./lint.sh" };
    writeFileSync(
      join(cwd, ".claude/settings.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: "*", hooks: [old] },
            { matcher: "Bash", hooks: [other] },
          ],
        },
      }),
    );
    const r = install(cwd);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("replaced an older Warden entry for PreToolUse");
    const s = read(cwd);
    expect(JSON.stringify(s)).not.toContain('"warden hooks claude-code"');
    expect(wardenHandlers(s, "PreToolUse")).toHaveLength(1);
    expect(s.hooks.PreToolUse).toContainEqual({ matcher: "Bash", hooks: [other] });
    // Switching to --http replaces the entry again: still one Warden handler per event.
    expect(install(cwd, "--http", "--port", "47999").status).toBe(0);
    const http = read(cwd);
    expect(wardenHandlers(http, "PreToolUse")).toEqual([
      expect.objectContaining({ type: "http", url: "http://127.0.0.1:47999/hooks/claude-code" }),
    ]);
  });

  it("the installed command works without warden on PATH (absolute node): rm -rf ~ is denied", () => {
    const cwd = tempDir();
    const dir = join(tempDir(), "state");
    started.push(dir);
    expect(install(cwd, "--dir", dir).status).toBe(0);
    const [h] = wardenHandlers(read(cwd), "PreToolUse");
    const command = String(h?.command);
    expect(command).toContain("--dir");
    // As Claude Code runs a command hook: through a shell, here with no usable PATH at all.
    const r = spawnSync("/bin/sh", ["-c", command], {
      input: JSON.stringify(bashEvent("rm -rf ~")),
      env: { PATH: "/nonexistent", HOME: tempDir(), WARDEN_HOOKS_PORT: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(decisionOf(JSON.parse(r.stdout) as Record<string, unknown>)).toBe("deny");
  }, 90_000);

  it("env of a Bash call cannot reveal the hook token: the command entry needs none in Claude Code's environment", () => {
    const cwd = tempDir();
    const dir = join(tempDir(), "state");
    started.push(dir);
    expect(install(cwd, "--dir", dir).status).toBe(0);
    const settings = readFileSync(join(cwd, ".claude/settings.json"), "utf8");
    expect(settings).not.toMatch(/WARDEN_HOOK_DAEMON_TOKEN|"env"/);
    const [h] = wardenHandlers(read(cwd), "PreToolUse");
    // The hook runs with an environment holding no token; it still answers (it reads the 0600 file).
    const r = spawnSync("/bin/sh", ["-c", String(h?.command)], {
      input: JSON.stringify(bashEvent("env")),
      env: { PATH: "/usr/bin:/bin", HOME: tempDir(), WARDEN_HOOKS_PORT: "0" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const token = readFileSync(join(dir, "daemon.token"), "utf8").trim();
    expect(settings).not.toContain(token);
  }, 90_000);

  it("--http names the token's variable (allowedEnvVars), never the token, and says what hides it", () => {
    const cwd = tempDir();
    const r = install(cwd, "--http", "--port", "47998");
    expect(r.status, r.stderr).toBe(0);
    const [h] = wardenHandlers(read(cwd), "PreToolUse");
    expect(h).toEqual({
      type: "http",
      url: "http://127.0.0.1:47998/hooks/claude-code",
      headers: { Authorization: "Bearer $WARDEN_HOOK_DAEMON_TOKEN" },
      allowedEnvVars: ["WARDEN_HOOK_DAEMON_TOKEN"],
      timeout: 15,
      onFailure: "block",
    });
    expect(r.stdout).toContain("containment");
    expect(install(cwd, "--http", "--command").status).toBe(2);
  });
});
