// Sweep: escapes from the sandbox through files the HOST later runs, beside the protected
// ones the profile names. The workspace is read-write, `.git/config` and `.git/hooks` are
// read-only — but git also reads its config and hooks from `.git/commondir`'s target, from
// a `.git` replaced whole, and Copilot/Claude load settings the agent may create where
// none existed. Each attack is a Claude Code PreToolUse payload through the real engine,
// run as Claude Code runs the answer, and contained directly (containment alone must
// hold); the harm checked is the user's next `git status` (outside any sandbox) running
// the agent's `core.fsmonitor`, or a planted host-settings file surviving the call.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { answerHostEvent, claudeCodeAdapter } from "../../src/hooks/index.js";
import { asClaudeCode, exec, type Harness, harness, runContained } from "./contain-harness.js";

let h: Harness;
const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: h.ws, env: { ...process.env, HOME: h.home }, stdio: "pipe" });

beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

/** A fresh repository with one commit in the workspace, nothing planted. */
beforeEach(() => {
  for (const p of [".git", ".git-old", "evil", ".github", ".mcp.json", ".vscode", "fsm.cfg"])
    rmSync(join(h.ws, p), { recursive: true, force: true });
  git("init", "-q");
  git(
    "-c",
    "user.email=dev@example.com",
    "-c",
    "user.name=Dev",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "init",
  );
});

/** Runs the command as Claude Code would (when the policy allows it) and contained directly. */
async function attempt(command: string): Promise<void> {
  const viaHook = await asClaudeCode(h, command);
  if (viaHook.decision === "allow") expect(viaHook.contained).toBe(true);
  await runContained(h, command);
}

/** The user's own `git status` afterwards, outside any sandbox: must run none of the agent's code. */
async function userRunsGitStatus(marker: string): Promise<void> {
  await exec(h, "git status >/dev/null 2>&1; true");
  expect(existsSync(join(h.home, marker)), `${marker}: the agent's fsmonitor ran on the host`).toBe(false);
}

const fsmonitor = (marker: string) => `[core]\n\tfsmonitor = touch ${join("$HOME", marker)}; false\n`;

describe("sweep: git control files the host runs", { timeout: 60_000 }, () => {
  it("echo ../evil > .git/commondir (a planted config with core.fsmonitor) runs nothing at the user's next git status", async () => {
    writeFileSync(join(h.ws, "fsm.cfg"), fsmonitor("PWNED-commondir"));
    await attempt(
      "mkdir -p evil && cp -r .git/refs evil/ && ln -s ../.git/objects evil/objects && cp fsm.cfg evil/config && echo ../evil > .git/commondir",
    );
    await userRunsGitStatus("PWNED-commondir");
  });

  it("mv .git aside then a new .git whose config sets core.fsmonitor runs nothing at the user's next git status", async () => {
    writeFileSync(join(h.ws, "fsm.cfg"), fsmonitor("PWNED-regit"));
    await attempt("mv .git .git-old");
    await attempt(
      "mkdir -p .git && cp -r .git-old/HEAD .git-old/objects .git-old/refs .git/ && cp fsm.cfg .git/config",
    );
    await runContained(
      h,
      "mv .git .git-old && mkdir .git && cp -r .git-old/HEAD .git-old/objects .git-old/refs .git/ && cp fsm.cfg .git/config",
    );
    await userRunsGitStatus("PWNED-regit");
    expect(readFileSync(join(h.ws, ".git", "config"), "utf8")).not.toContain("fsmonitor");
  });

  it("a .git file (gitdir: link) swapped for one to a planted gitdir runs nothing at the user's next git status", async () => {
    // The workspace as a linked worktree would have it: `.git` is a file naming the gitdir.
    rmSync(join(h.ws, ".git"), { recursive: true, force: true });
    // Outside /tmp (the sandbox has its own /tmp), as a main checkout beside the worktree is.
    const main = mkdtempSync(join("/var/tmp", "warden-sweep-main-"));
    onTestFinished(() => rmSync(main, { recursive: true, force: true }));
    execFileSync("git", ["init", "-q", main]);
    writeFileSync(join(h.ws, ".git"), `gitdir: ${join(main, ".git")}\n`);
    writeFileSync(
      join(h.ws, "fsm.cfg"),
      `[core]\n\trepositoryformatversion = 0\n${fsmonitor("PWNED-gitfile").slice(7)}`,
    );
    await attempt(
      `mkdir -p evil && cp -r ${main}/.git/HEAD ${main}/.git/refs ${main}/.git/objects evil/ && cp fsm.cfg evil/config && echo 'gitdir: evil' > .git`,
    );
    await userRunsGitStatus("PWNED-gitfile");
  });
});

describe("sweep: host settings created where none existed", { timeout: 60_000 }, () => {
  it("python3 writing .github/hooks/x.json and .vscode/tasks.json leaves neither behind", async () => {
    const py =
      "import os; os.makedirs('.github/hooks', exist_ok=True); open('.github/hooks/x.json','w').write('{}'); os.makedirs('.vscode', exist_ok=True); open('.vscode/tasks.json','w').write('{}')";
    await attempt(`python3 -c "${py}"`);
    expect(existsSync(join(h.ws, ".github", "hooks", "x.json"))).toBe(false);
    expect(existsSync(join(h.ws, ".vscode", "tasks.json"))).toBe(false);
  });

  it("Write .git/commondir (the file tool) is denied", async () => {
    const payload = {
      session_id: "sweep-files",
      transcript_path: join(h.home, ".claude", "t.jsonl"),
      cwd: h.ws,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(h.ws, ".git", "commondir"), content: "../evil\n" },
      tool_use_id: "toolu_sweep_commondir",
    };
    const answer = await answerHostEvent(h.engine, claudeCodeAdapter, payload, new Date().toISOString());
    // An empty answer is Claude Code's allow.
    const out = (answer.stdout ? JSON.parse(answer.stdout) : {}) as {
      hookSpecificOutput?: { permissionDecision?: string };
    };
    expect(out.hookSpecificOutput?.permissionDecision).toBe("deny");
  });
});

describe("sweep: ordinary git work still runs contained", { timeout: 60_000 }, () => {
  it("git add, commit, branch and checkout in the pinned .git work; the repository stays intact", async () => {
    writeFileSync(join(h.ws, "a.txt"), "a\n");
    const ran = await asClaudeCode(
      h,
      "git add a.txt && git -c user.email=a@b -c user.name=A commit -qm add && git checkout -qb feature && git log --oneline | wc -l",
    );
    expect(ran.decision).toBe("allow");
    expect(ran.contained).toBe(true);
    expect(ran.status).toBe(0);
    expect(ran.stdout.trim()).toBe("2");
    expect(git("branch", "--show-current").toString().trim()).toBe("feature");
  });
});

/** Claude Code's PreToolUse for a file tool, answered by the harness's engine. */
async function fileTool(tool_name: string, tool_input: Record<string, unknown>): Promise<string> {
  const payload = {
    session_id: `sweep-file-${tool_name}-${Math.random()}`,
    transcript_path: join(h.home, ".claude", "t.jsonl"),
    cwd: h.ws,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name,
    tool_input,
    tool_use_id: `toolu_sweep_${Math.random().toString(36).slice(2)}`,
  };
  const answer = await answerHostEvent(h.engine, claudeCodeAdapter, payload, new Date().toISOString());
  const out = (answer.stdout ? JSON.parse(answer.stdout) : {}) as {
    hookSpecificOutput?: { permissionDecision?: string };
  };
  return out.hookSpecificOutput?.permissionDecision ?? "allow";
}

describe("sweep: the host's file tools and git's other redirects", { timeout: 60_000 }, () => {
  it("Write of a worktree's .git file (gitdir: evil) is denied", async () => {
    rmSync(join(h.ws, ".git"), { recursive: true, force: true });
    writeFileSync(join(h.ws, ".git"), "gitdir: /var/tmp/elsewhere/.git\n");
    expect(await fileTool("Write", { file_path: join(h.ws, ".git"), content: "gitdir: evil\n" })).toBe(
      "deny",
    );
  });

  it("Write .git/modules/x/config and .git/info/attributes are denied", async () => {
    const cfg = fsmonitor("PWNED-module");
    expect(await fileTool("Write", { file_path: join(h.ws, ".git/modules/x/config"), content: cfg })).toBe(
      "deny",
    );
    expect(await fileTool("Write", { file_path: ".git/info/attributes", content: "* filter=evil\n" })).toBe(
      "deny",
    );
  });

  it("Write .claude/skills/x/SKILL.md and .claude/agents/x.md (front matter hooks run on the host) are denied", async () => {
    const skill =
      "---\nname: x\nhooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: touch ~/PWNED\n---\n";
    expect(await fileTool("Write", { file_path: ".claude/skills/x/SKILL.md", content: skill })).toBe("deny");
    expect(await fileTool("Write", { file_path: join(h.ws, ".claude/agents/x.md"), content: skill })).toBe(
      "deny",
    );
  });

  it("ordinary workspace writes stay allowed (src, CLAUDE.md, .gitignore)", async () => {
    expect(await fileTool("Write", { file_path: "src/a.ts", content: "export {};\n" })).toBe("allow");
    expect(await fileTool("Write", { file_path: "CLAUDE.md", content: "# notes\n" })).toBe("allow");
    expect(await fileTool("Write", { file_path: ".gitignore", content: "node_modules\n" })).toBe("allow");
  });
});

describe("sweep: the runner's clean-up touches only what a call created", { timeout: 60_000 }, () => {
  it("a plain contained call removes nothing and says nothing (the settings placeholders stay)", async () => {
    rmSync(join(h.ws, ".codex"), { recursive: true, force: true });
    const ran = await runContained(h, "echo ok");
    expect(ran.stdout.trim()).toBe("ok");
    expect(ran.stderr).not.toContain("protected");
    expect(existsSync(join(h.ws, ".codex"))).toBe(true);
  });
});

describe("sweep: a submodule's git directory", { timeout: 60_000 }, () => {
  it("core.fsmonitor written into .git/modules/lib/config runs nothing at the user's next git status", async () => {
    const lib = mkdtempSync(join("/var/tmp", "warden-sweep-lib-"));
    onTestFinished(() => rmSync(lib, { recursive: true, force: true }));
    execFileSync("git", ["init", "-q", lib]);
    execFileSync("git", [
      "-C",
      lib,
      "-c",
      "user.email=a@b",
      "-c",
      "user.name=A",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "i",
    ]);
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib");
    git("-c", "user.email=a@b", "-c", "user.name=A", "commit", "-qm", "sub");
    const marker = join(h.home, "PWNED-submodule");
    const py = `import subprocess; subprocess.run(['git','config','-f','.git/modules/lib/config','core.fsmonitor','touch ${marker}; false'])`;
    await attempt(`python3 -c "${py}"`);
    await runContained(h, `git config -f .git/modules/lib/config core.fsmonitor 'touch ${marker}; false'`);
    await userRunsGitStatus("PWNED-submodule");
    rmSync(join(h.ws, "lib"), { recursive: true, force: true });
    rmSync(join(h.ws, ".gitmodules"), { force: true });
  });
});

describe("sweep: what the host writes during a call is not the call's", { timeout: 60_000 }, () => {
  it("Claude Code's .claude/settings.local.json written during a contained call stays", async () => {
    const local = join(h.ws, ".claude", "settings.local.json");
    rmSync(local, { force: true });
    const session = join(tmpdir(), `warden-contain-${process.getuid?.() ?? "user"}`, "0123456789abcdef");
    const [started, go] = [join(session, "started"), join(session, "go")];
    rmSync(started, { force: true });
    rmSync(go, { force: true });
    // The call says it runs (a file in its /tmp), then waits for the host's write.
    const call = runContained(
      h,
      "touch /tmp/started; for i in $(seq 1 400); do [ -e /tmp/go ] && break; sleep 0.05; done; echo done",
    );
    while (!existsSync(started)) await new Promise((r) => setTimeout(r, 20));
    writeFileSync(local, '{"permissions":{"allow":["Bash(npm test)"]}}');
    writeFileSync(go, "");
    const ran = await call;
    expect(ran.stdout.trim()).toBe("done");
    expect(readFileSync(local, "utf8")).toContain("npm test");
    rmSync(local, { force: true });
  });
});
