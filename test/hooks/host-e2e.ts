// Shared by the Codex, Copilot and Gemini end-to-end tests: the built `warden hooks <host>`
// spawned once per recorded payload (test/hooks/fixtures/<host>), a throwaway HOME and
// workspace the payload is moved into, and what the host does with the answer — each
// host's documented behaviour (blocks, rewrites, fails open) — so a test can run an allowed
// call for real and show the harm did not happen.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { onTestFinished } from "vitest";
import { tempDir } from "./helpers.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const SSH_KEY =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAcanary\n-----END OPENSSH PRIVATE KEY-----\n";
export const AWS_KEY = "[default]\naws_access_key_id = AKIACANARY0000000000\n";

export interface Box {
  /** The hooks state directory. */
  dir: string;
  home: string;
  workspace: string;
}

/** A throwaway HOME with credentials and a start-up file, a workspace in it, a state dir. */
export function box(): Box {
  const root = tempDir();
  const home = join(root, "home");
  const workspace = join(home, "project");
  for (const d of [".ssh", ".aws", "project/src"]) mkdirSync(join(home, d), { recursive: true });
  writeFileSync(join(home, ".ssh/id_ed25519"), SSH_KEY, { mode: 0o600 });
  writeFileSync(join(home, ".aws/credentials"), AWS_KEY, { mode: 0o600 });
  writeFileSync(join(home, ".bashrc"), "# canary bashrc\n");
  writeFileSync(join(workspace, "src/parser.ts"), "export const foo = 1;\n");
  return { dir: join(root, "state"), home, workspace };
}

/** A recorded payload moved into the box: /home/dev/project → workspace, /home/dev → HOME. */
export function payload(host: string, fixture: string, b: Box): string {
  const text = readFileSync(join(ROOT, "test/hooks/fixtures", host, `${fixture}.json`), "utf8");
  return text.replaceAll("/home/dev/project", b.workspace).replaceAll("/home/dev", b.home);
}

export interface Answer {
  code: number | null;
  out: Record<string, unknown> | null;
  stdout: string;
  err: string;
}

/** `warden hooks <args…>` with the input on stdin, HOME and the state dir in the box. */
export function warden(b: Box, args: string[], input: string, env: Record<string, string> = {}): Answer {
  if (!existsSync(join(ROOT, "dist/src/cli/main.js")))
    throw new Error("run `npm run build` first (npm test does)");
  const { CLAUDE_PROJECT_DIR: _c, GEMINI_PROJECT_DIR: _g, COPILOT_AGENT_PROMPT: _a, ...rest } = process.env;
  const r = spawnSync(process.execPath, [join(ROOT, "bin/warden.js"), "hooks", ...args], {
    input,
    cwd: b.workspace,
    env: { ...rest, HOME: b.home, WARDEN_HOOKS_DIR: b.dir, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  let out: Record<string, unknown> | null = null;
  try {
    out = r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, unknown>) : null;
  } catch {
    out = null;
  }
  return { code: r.status, out, stdout: r.stdout, err: r.stderr };
}

/** What a host does with a PreToolUse answer: blocked, or runs the (possibly rewritten) input. */
export type HostAction = { run: false; why: string } | { run: true; input: Record<string, unknown> };

/** Runs an allowed shell command as the host would, in the box (HOME must be the box's). */
export function runShell(b: Box, command: string): { code: number | null; output: string } {
  if (!b.home.startsWith(tmpdir())) throw new Error("refusing to run outside a throwaway HOME");
  const r = spawnSync("/bin/bash", ["-c", command], {
    cwd: b.workspace,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: b.home },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

/** A loopback server that counts what reaches it (an exfiltration canary), closed after the test. */
export async function canary(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits += 1;
    req.resume();
    res.end("ok");
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  onTestFinished(() => new Promise<void>((ok) => server.close(() => ok())));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/collect`, hits: () => hits };
}
