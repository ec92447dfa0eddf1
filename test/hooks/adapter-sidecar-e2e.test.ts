// Host adapters asking the sidecar (`--sidecar URL`, credential from $WARDEN_HOOKS_TOKEN or
// --token-file): the built CLI spawned per recorded payload against a real sidecar over
// loopback; every failure on the way (bad credential, no sidecar) blocks the host.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostToolsPolicyPath } from "../../src/hooks/index.js";
import { hashToken } from "../../src/server/index.js";
import { type Sidecar, startTestSidecar, TOKENS } from "../server/harness.js";
import { tempDir } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const HOST = "token-host-cursor-0123456789";

let s: Sidecar;
beforeAll(async () => {
  s = await startTestSidecar({
    requireContract: false,
    config: {
      policies: [hostToolsPolicyPath()],
      gate: {
        tenant: "test",
        environment: "test",
        requireContract: false,
        principals: [{ id: "cursor-host", roles: ["host"] }],
      },
      auth: {
        principals: [{ id: "cursor-host", tokenSha256: hashToken(HOST) }],
        approvers: [{ id: "alice", roles: ["approver"], tokenSha256: hashToken(TOKENS.approver) }],
      },
    },
  });
});
afterAll(() => s.stop());

function hook(host: string, fixture: string, args: string[], env: Record<string, string> = {}) {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const dir = host === "cursor" ? "hooks/fixtures/cursor" : "fixtures/claude-code";
  return new Promise<{ code: number | null; out: string; err: string }>((res) => {
    const { WARDEN_HOOKS_TOKEN: _t, CLAUDE_PROJECT_DIR: _c, ...base } = process.env;
    const c = spawn(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", host, ...args], {
      env: { ...base, WARDEN_HOOKS_DIR: tempDir(), ...env },
    });
    let out = "";
    let err = "";
    c.stdout.on("data", (b: Buffer) => (out += b.toString()));
    c.stderr.on("data", (b: Buffer) => (err += b.toString()));
    c.on("close", (code) => res({ code, out, err }));
    c.stdin.end(readFileSync(join(ROOT, "test", dir, `${fixture}.json`)));
  });
}

describe("host adapters over the sidecar", () => {
  it("Cursor: a hostile rm -rf is denied by the sidecar's engine and journaled there", async () => {
    const r = await hook("cursor", "before-shell-rm-rf", ["--sidecar", s.url], { WARDEN_HOOKS_TOKEN: HOST });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({ permission: "deny" });
    expect(r.out).toContain("DESTRUCTIVE_COMMAND");
    const benign = await hook("cursor", "before-shell-npm-test", ["--sidecar", s.url], {
      WARDEN_HOOKS_TOKEN: HOST,
    });
    // Cursor cannot run a command contained (no rewrite): an allowed shell call is asked.
    expect(JSON.parse(benign.out)).toMatchObject({ permission: "ask" });
  });

  it("Claude Code: a credential read from --token-file works the same way", async () => {
    const file = join(tempDir(), "token");
    writeFileSync(file, `${HOST}\n`, { mode: 0o600 });
    const r = await hook("claude-code", "pre-tool-use-bash-curl-pipe-sh", [
      "--sidecar",
      s.url,
      "--token-file",
      file,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
  });

  it("a wrong credential fails closed: the sidecar refuses the handshake and the host blocks", async () => {
    const r = await hook("cursor", "before-shell-npm-test", ["--sidecar", s.url], {
      WARDEN_HOOKS_TOKEN: "wrong-token-0123456789abc",
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({ permission: "deny" });
    expect(r.out).toContain("ERR_HOOK_HANDSHAKE_REQUIRED");
  });

  it("a sidecar that is not there fails closed", async () => {
    const r = await hook("cursor", "before-shell-npm-test", ["--sidecar", "http://127.0.0.1:9"], {
      WARDEN_HOOKS_TOKEN: HOST,
    });
    expect(r.code).toBe(2);
    expect(r.out).toContain("ERR_HOOK_ENGINE_FAULT");
  });

  it("--sidecar without a credential is refused (exit 2: blocks)", async () => {
    const r = await hook("cursor", "before-shell-npm-test", ["--sidecar", s.url]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("WARDEN_HOOKS_TOKEN");
  });
});
