// The coding-agent sandbox profile as bwrap arguments, the environment allowlist, the
// runner's spec, the rewritten command and the engine's answers around them (no sandbox
// is started here; contain-attacks/contain-benign run the real one).
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  containCommand,
  containSpec,
  containVerdict,
  runnerFiles,
  workspaceCredentials,
} from "../../src/hooks/contain.js";
import { scrubEnv } from "../../src/hooks/contain-env.js";
import { containArgv, specProblem } from "../../src/hooks/contain-profile.js";
import { gitRemoteHosts, remoteHost } from "../../src/hooks/contain-remotes.js";
import { decodeSpec, encodeSpec } from "../../src/hooks/contain-spec.js";
import { renderClaudeCode, renderCursor } from "../../src/hooks/index.js";
import { allow } from "../../src/hooks/verdicts.js";

function fixture() {
  const root = mkdtempSync(join(tmpdir(), "warden-profile-"));
  const home = join(root, "home");
  const ws = join(home, "project");
  const hooksDir = join(root, "hooks");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".npmrc"), "//registry.npmjs.org/:_authToken=x");
  mkdirSync(join(ws, "config"), { recursive: true });
  writeFileSync(join(ws, ".env"), "A=1");
  writeFileSync(join(ws, "config", ".env.production"), "B=2");
  writeFileSync(join(ws, ".env.example"), "A=");
  mkdirSync(hooksDir);
  const config = { hooksDir, stateDirs: [], home, profile: { egress: ["git.internal.example"] } };
  const spec = containSpec(config, ws, { sessionKey: "abcdef", callId: "toolu_1" });
  return { root, home, ws, hooksDir, spec, config };
}

const pairs = (args: string[], flag: string) =>
  args.flatMap((a, i) => (a === flag ? [[args[i + 1], args[i + 2]].join(" ")] : []));

describe("coding-agent profile (bwrap argv)", () => {
  it("makes every namespace new, the network loopback only, drops every capability, and dies with its parent", () => {
    const { spec, ws } = fixture();
    const args = containArgv(spec, { socket: "/x/p.sock", cwd: ws, commandFile: "/x/command" });
    expect(args[args.indexOf("--cap-drop") + 1]).toBe("ALL");
    for (const f of ["--unshare-all", "--unshare-net", "--die-with-parent", "--new-session"])
      expect(args).toContain(f);
    expect(args.slice(6, 9)).toEqual(["--ro-bind", "/", "/"]);
    expect(args).not.toContain("--share-net");
  });

  it("masks the credential locations that exist (dir: empty tmpfs, file: /dev/null), the workspace's .env files too", () => {
    const { spec, ws, home } = fixture();
    const args = containArgv(spec, { socket: "/x/p.sock", cwd: ws, commandFile: "/x/command" });
    expect(pairs(args, "--tmpfs")).toContain(`${join(home, ".ssh")} --remount-ro`);
    const nulls = pairs(args, "--ro-bind").filter((p) => p.startsWith("/dev/null "));
    expect(nulls).toEqual(
      expect.arrayContaining([
        `/dev/null ${join(home, ".npmrc")}`,
        `/dev/null ${join(ws, ".env")}`,
        `/dev/null ${join(ws, "config", ".env.production")}`,
      ]),
    );
    expect(nulls.join()).not.toContain(".env.example");
    expect(args.join(" ")).not.toContain(join(home, ".aws"));
  });

  it("binds the workspace read-write, /tmp to the session's own directory, /run empty, state invisible last", () => {
    const { spec, ws, hooksDir } = fixture();
    const args = containArgv(spec, { socket: "/x/p.sock", cwd: ws, commandFile: "/x/command" });
    expect(pairs(args, "--bind")).toEqual(expect.arrayContaining([`${ws} ${ws}`, `${spec.sessionTmp} /tmp`]));
    expect(pairs(args, "--tmpfs")).toContain("/run --bind");
    expect(args.lastIndexOf(hooksDir)).toBeGreaterThan(args.indexOf(ws));
    expect(args.slice(-2)).toEqual(["--chdir", ws]);
  });

  it("makes the hosts' settings directories read-only, creating an empty .claude when missing", () => {
    const { spec, ws } = fixture();
    expect(existsSync(join(ws, ".claude"))).toBe(false);
    const args = containArgv(spec, { socket: "/x/p.sock", cwd: ws, commandFile: "/x/command" });
    expect(existsSync(join(ws, ".claude"))).toBe(true);
    expect(pairs(args, "--ro-bind")).toContain(`${join(ws, ".claude")} ${join(ws, ".claude")}`);
    expect(args.indexOf(join(ws, ".claude"))).toBeGreaterThan(args.indexOf(ws));
  });

  it("keeps Warden's runner read-only, and the whole package when it is installed in the workspace", () => {
    const { spec, config } = fixture();
    const root = resolve(runnerFiles().dir, "..", "..", "..");
    expect(spec.readOnly[0]).toBe(runnerFiles().dir);
    // A workspace holding Warden's package (as node_modules/warden would be): all of it read-only.
    const around = containSpec(config, dirname(root), { sessionKey: "a", callId: "b" });
    expect(around.readOnly[0]).toBe(root);
  });

  it("refuses a workspace that contains $HOME or is a top-level directory", () => {
    const { spec, home } = fixture();
    expect(specProblem({ ...spec, workspace: home })).toMatch(/HOME/);
    expect(specProblem({ ...spec, workspace: "/opt" })).toMatch(/top-level/);
  });

  it("finds the workspace's credential files, not templates", () => {
    const { ws } = fixture();
    const found = workspaceCredentials(ws).map((p) => p.slice(ws.length));
    expect(found.sort()).toEqual(["/.env", "/config/.env.production"]);
  });
});

describe("environment and spec", () => {
  it("keeps only the allowlist: no hook credential, token or agent socket", () => {
    const env = scrubEnv({
      PATH: "/usr/bin",
      HOME: "/h",
      GIT_AUTHOR_NAME: "Dev",
      WARDEN_HOOKS_TOKEN: "t",
      GITHUB_TOKEN: "ghp_x",
      SSH_AUTH_SOCK: "/tmp/ssh/agent",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/1/bus",
      ANTHROPIC_API_KEY: "k",
    });
    expect(Object.keys(env).sort()).toEqual(
      [
        "GIT_AUTHOR_NAME",
        "HOME",
        "PATH",
        "TMPDIR",
        "XDG_CACHE_HOME",
        "npm_config_cache",
        "npm_config_update_notifier",
      ].sort(),
    );
  });

  it("round-trips the spec and refuses a tampered one", () => {
    const { spec } = fixture();
    expect(decodeSpec(encodeSpec(spec))).toEqual(spec);
    expect(decodeSpec(encodeSpec({ ...spec, workspace: "relative/ws" }))).toMatch(/absolute/);
    expect(decodeSpec("not base64 json")).toMatch(/base64 JSON/);
  });

  it("passes the original command as one base64 word, never as shell syntax", () => {
    const { spec } = fixture();
    const evil = `x'; rm -rf ~; echo '$(id)`;
    const cmd = containCommand({ command: evil, spec });
    expect(cmd).not.toContain("rm -rf");
    // The runner's four words; then only Warden's own `cd` to the directory the runner left.
    const words = cmd.split("; ")[0]!.split(" ");
    expect(words).toHaveLength(4);
    expect(cmd.slice(cmd.indexOf("; "))).not.toContain(words[3]!);
    expect(Buffer.from(words[3]!.slice(1, -1), "base64").toString("utf8")).toBe(evil);
  });

  it("adds the project's git remotes to the egress list and protects core.hooksPath", () => {
    const { ws, config } = fixture();
    mkdirSync(join(ws, ".git"));
    writeFileSync(
      join(ws, ".git", "config"),
      '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://github.com/o/r.git\n[remote "up"]\n\turl = git@gitlab.example:o/r.git\n\tpushurl = https://code.example:8443/o/r\n',
    );
    expect(gitRemoteHosts(ws).sort()).toEqual(["code.example:8443", "github.com", "gitlab.example"]);
    writeFileSync(join(ws, ".git", "config"), "[core]\n\thooksPath = .husky\n", { flag: "a" });
    expect(containSpec(config, ws, { sessionKey: "a", callId: "b" }).protectedPaths).toContain(
      join(ws, ".husky"),
    );
    expect(containSpec(config, ws, { sessionKey: "a", callId: "b" }).egress).toContain("github.com");
    expect(remoteHost("file:///srv/repo")).toBeUndefined();
  });
});

describe("engine answers", () => {
  const call = (ws: string) => ({
    tool: "shell",
    input: { command: "npm test", description: "d", timeout: 5, run_in_background: false },
    workspace: ws,
    names: { sessionKey: "abc", callId: "t" },
  });

  it("an allowed shell call: allow with updated_input keeping description, timeout, run_in_background", () => {
    const { config, ws } = fixture();
    const v = containVerdict(config, call(ws), allow("tool_execution", "policy"));
    expect(v.decision).toBe("allow");
    expect(v.directives?.updated_input).toMatchObject({
      description: "d",
      timeout: 5,
      run_in_background: false,
    });
    expect(String(v.directives?.updated_input?.command)).toContain("contain-run.js");
  });

  it("without bubblewrap: ask naming the package (never a silent allow); `required` denies", () => {
    const { config, ws } = fixture();
    const none = { ...config, bwrap: "/nonexistent/bwrap" };
    const v = containVerdict(none, call(ws), allow("tool_execution", "policy"));
    expect(v).toMatchObject({ decision: "ask", matched_rule_id: "warden-containment-unavailable" });
    expect(v.reasons?.[0]).toContain("apt-get install bubblewrap");
    expect(containVerdict({ ...none, mode: "required" }, call(ws), allow("x", "policy")).decision).toBe(
      "deny",
    );
  });

  it("a command line it cannot rewrite (an argv array) is asked; a shell-class call with no command line keeps its verdict", () => {
    const { config, ws } = fixture();
    const argv = { ...call(ws), input: { command: ["bash", "-lc", "id"] } };
    expect(containVerdict(config, argv, allow("x", "policy")).decision).toBe("ask");
    const own = { ...call(ws), input: { path: "notes.txt" } };
    expect(containVerdict(config, own, allow("x", "policy"))).toEqual(allow("x", "policy"));
  });

  it("Claude Code renders updatedInput with allow; Cursor, which cannot rewrite, asks", () => {
    const { config, ws } = fixture();
    const v = containVerdict(config, call(ws), allow("tool_execution", "policy"));
    const cc = JSON.parse(renderClaudeCode("PreToolUse", v).stdout ?? "{}");
    expect(cc.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      permissionDecisionReason: "Warden: contained",
      updatedInput: { description: "d" },
    });
    expect(JSON.parse(renderCursor("beforeShellExecution", v).stdout ?? "{}")).toMatchObject({
      permission: "ask",
    });
  });
});
