// One network per session (docs/hooks-containment.md): contained Bash calls of one Claude
// Code session share a network and PID namespace (the session's holder), so a server left
// running by one call (`npm run dev &`) answers `curl localhost:3000` in the next, and a
// `cd` carries over — while the host's loopback and another session's servers stay out of
// reach, and a `cd` out of the workspace is not followed. Real bwrap, Claude Code's
// PreToolUse payloads, each answer run the way Claude Code runs it (`eval '<command>' &&
// pwd -P >| <cwd file>`, the next call started in the recorded directory).
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionKeyOf } from "../../src/hooks/contain.js";
import { holderDir, stopHolder } from "../../src/hooks/contain-holder.js";
import { answerHostEvent, claudeCodeAdapter } from "../../src/hooks/index.js";
import { bashPayload, type Harness, harness } from "./contain-harness.js";

let h: Harness;
const sessions: string[] = [];
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  const uid = process.getuid?.() ?? "user";
  for (const s of sessions)
    stopHolder(holderDir(join(tmpdir(), `warden-contain-${uid}`, sessionKeyOf("claude-code", s))));
  await h?.close();
});

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/** Claude Code's run of a Bash answer: eval, then the shell's directory recorded for the next call. */
function claudeRun(command: string, cwd: string) {
  const cwdFile = join(h.hooksDir, `claude-cwd-${Date.now()}-${Math.random()}`);
  const line = `eval ${quote(command)} < /dev/null && pwd -P >| ${quote(cwdFile)}`;
  return new Promise<{ stdout: string; status: number | null; cwd: string }>((resolve) => {
    const child = spawn("/bin/bash", ["-c", line], {
      cwd,
      env: { ...process.env, HOME: h.home },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.on("close", (status) => {
      let next = cwd;
      try {
        next = readFileSync(cwdFile, "utf8").trim() || cwd;
      } catch {
        // The command failed: Claude Code keeps the directory.
      }
      resolve({ stdout, status, cwd: next });
    });
  });
}

/** One Bash call of `session` in `cwd`: Warden's answer, then what Claude Code runs. */
async function bash(session: string, command: string, cwd = h.ws) {
  if (!sessions.includes(session)) sessions.push(session);
  const payload = { ...bashPayload(h, command, session), cwd };
  const answer = await answerHostEvent(h.engine, claudeCodeAdapter, payload, new Date().toISOString());
  const hso = (JSON.parse(answer.stdout || "{}") as { hookSpecificOutput?: Record<string, unknown> })
    .hookSpecificOutput;
  expect(hso?.permissionDecision).toBe("allow");
  const contained = (hso?.updatedInput as { command?: string } | undefined)?.command;
  expect(contained).toContain("contain-run.js");
  return claudeRun(contained as string, cwd);
}

const SERVER = `node -e "require('http').createServer((q,r)=>r.end('dev-server-up')).listen(3000,'127.0.0.1')"`;
const PROBE =
  "for i in $(seq 100); do curl -s --max-time 1 http://localhost:3000 && exit 0; sleep 0.1; done; exit 7";

describe("contained calls of one session share a network: servers and cd carry over", {
  timeout: 60_000,
}, () => {
  it("npm run dev & in one call, curl localhost:3000 in the next call of the same session answers", async () => {
    const started = await bash("net-a", `${SERVER} >/dev/null 2>&1 &`);
    expect(started.status).toBe(0);
    const probe = await bash("net-a", PROBE);
    expect(probe.stdout).toBe("dev-server-up");
    expect(probe.status).toBe(0);
  });

  it("another session cannot reach that server (its own namespaces)", async () => {
    const other = await bash("net-b", "curl -s --max-time 2 http://localhost:3000; echo status=$?");
    expect(other.stdout).not.toContain("dev-server-up");
    expect(other.stdout).toMatch(/status=[1-9]/);
  });

  it("the host's loopback stays unreachable from a session with a shared network (canary gets nothing)", async () => {
    const before = h.canary.connections;
    const r = await bash(
      "net-a",
      `curl -s --noproxy '*' --max-time 2 http://127.0.0.1:${h.canary.port}/; echo status=$?`,
    );
    expect(r.stdout).toMatch(/status=[1-9]/);
    expect(r.stdout).not.toContain("pwned");
    expect(h.canary.connections).toBe(before);
  });

  it("cd sub in one call: the next call starts in sub (Claude Code's tracked directory follows)", async () => {
    mkdirSync(join(h.ws, "sub"), { recursive: true });
    const cd = await bash("net-a", "cd sub");
    expect(cd.cwd).toBe(join(realpathSync(h.ws), "sub"));
    const next = await bash("net-a", "pwd -P", cd.cwd);
    expect(next.stdout.trim()).toBe(join(realpathSync(h.ws), "sub"));
  });

  it("cd $HOME (out of the workspace) is not carried to the host shell; the status stays the command's", async () => {
    const out = await bash("net-a", 'cd "$HOME" && false');
    expect(out.status).toBe(1);
    const cd = await bash("net-a", 'cd "$HOME"');
    expect(cd.cwd).toBe(realpathSync(h.ws));
  });
});
