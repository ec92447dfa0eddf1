// Containment through the command Claude Code runs: the built `warden hooks claude-code`
// spawned with a recorded-format PreToolUse payload (a new process, state in
// $WARDEN_HOOKS_DIR), its `updatedInput.command` then run as Claude Code runs it, in a
// throwaway HOME: the tests pass, the key and Warden's state stay invisible.
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bashPayload, exec, type Harness, harness, SSH_KEY } from "./contain-harness.js";

const ROOT = resolve(import.meta.dirname, "../..");
let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

function hook(payload: Record<string, unknown>): Record<string, unknown> {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js"))) throw new Error("run `npm run build` first");
  const { CLAUDE_PROJECT_DIR: _omit, ...env } = process.env;
  const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", "claude-code"], {
    input: JSON.stringify(payload),
    env: { ...env, HOME: h.home, WARDEN_HOOKS_DIR: h.hooksDir },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe("warden hooks claude-code (spawned): an allowed Bash call runs contained", {
  timeout: 90_000,
}, () => {
  it("npm test passes; cat ~/.ssh/id_ed25519 and Warden's hooks directory show nothing", async () => {
    writeFileSync(join(h.hooksDir, "marker-visible-outside"), "STATE");
    const out = hook(bashPayload(h, `npm test; ls -A ${h.hooksDir}; cat ~/.ssh/id_ed25519`));
    // (The shell analysis denies the credential read and a listing of Warden's state outright;
    // then the same call with the state directory named in a file the parser cannot read.)
    if ((out.hookSpecificOutput as { permissionDecision?: string }).permissionDecision === "deny") {
      writeFileSync(join(h.ws, "where.txt"), h.hooksDir);
      const retry = hook(bashPayload(h, `npm test; ls -A "$(cat where.txt)"`));
      Object.assign(out, retry);
    }
    const hso = out.hookSpecificOutput as { permissionDecision: string; updatedInput: { command: string } };
    expect(hso.permissionDecision).toBe("allow");
    const r = await exec(h, hso.updatedInput.command);
    expect(r.stdout).toContain("tests ok 2");
    expect(r.stdout + r.stderr).not.toContain(SSH_KEY);
    expect(r.stdout).not.toContain("marker-visible-outside");
  });
});
