// GitHub Copilot through the lean entry and the hook daemon: its camelCase payloads do not
// name their event, so the install writes `warden-hook.js copilot --event <event>` per entry
// and the entry passes the event to the daemon (before: Copilot ran the one-shot `warden
// hooks copilot --event …`, about a second per event). The entry's answers are the one-shot's.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mergeCopilotHooks } from "../../src/cli/commands/hooks-copilot.js";
import { ENTRY, hookEnv, requireBuild, stopDaemonIn, WARDEN } from "./daemon-helpers.js";
import { tempDir } from "./helpers.js";

const started: string[] = [];
afterAll(async () => {
  for (const dir of started) await stopDaemonIn(dir);
});

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, "fixtures", "copilot", `${name}.json`), "utf8");

function run(argv: string[], dir: string, input: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    const c = spawn(process.execPath, argv, { env: hookEnv(dir, env) });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    c.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    c.on("close", (code) => res({ code, stdout, stderr }));
    c.stdin.end(input);
  });
}

const decision = (out: string) =>
  (JSON.parse(out || "{}") as { permissionDecision?: string }).permissionDecision ?? "allow";

describe("Copilot's hooks through the lean entry (--event) and the daemon", () => {
  it("preToolUse rm -rf ~ is denied through the daemon exactly as by the one-shot", async () => {
    requireBuild();
    const dir = join(tempDir(), "hooks");
    started.push(dir);
    const input = fixture("pre-tool-use-bash-rm-rf-home");
    const viaDaemon = await run([ENTRY, "copilot", "--event", "preToolUse"], dir, input);
    expect(viaDaemon.code, viaDaemon.stderr).toBe(0);
    expect(decision(viaDaemon.stdout)).toBe("deny");
    const oneShot = await run(
      [WARDEN, "hooks", "copilot", "--event", "preToolUse", "--dir", dir],
      dir,
      input,
    );
    expect(oneShot.code).toBe(viaDaemon.code);
    expect(decision(oneShot.stdout)).toBe("deny");
  }, 90_000);

  it("preToolUse npm test is allowed contained (modifiedArgs); the coding agent (--cloud-agent) is denied the rewrite it may drop", async () => {
    requireBuild();
    const dir = join(tempDir(), "hooks");
    started.push(dir);
    const input = fixture("pre-tool-use-bash-npm-test");
    const cli = await run([ENTRY, "copilot", "--event", "preToolUse"], dir, input);
    expect(cli.code, cli.stderr).toBe(0);
    expect(decision(cli.stdout)).toBe("allow");
    expect(cli.stdout).toContain("contain-run.js");
    const cloud = await run([ENTRY, "copilot", "--event", "preToolUse", "--cloud-agent"], dir, input);
    expect(decision(cloud.stdout)).toBe("deny");
  }, 90_000);

  it("an unknown --event is refused, fail closed (exit 2)", async () => {
    const dir = join(tempDir(), "hooks");
    started.push(dir);
    const r = await run(
      [ENTRY, "copilot", "--event", "notAnEvent"],
      dir,
      fixture("pre-tool-use-bash-npm-test"),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ERR_HOOK_POINT_UNKNOWN");
  }, 90_000);

  it("the install writes the lean entry with --event per Copilot event (absolute paths)", () => {
    const merged = mergeCopilotHooks(
      "/x/warden.json",
      {},
      "'/usr/bin/node' '/opt/warden/bin/warden-hook.js' copilot",
    );
    const text = JSON.stringify(merged.file);
    expect(text).toContain("warden-hook.js' copilot --event preToolUse");
    expect(text).toContain("--event postToolUse");
  });
});
