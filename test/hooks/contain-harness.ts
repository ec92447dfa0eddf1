// The containment harness: a throwaway HOME with canary credentials, a workspace inside it,
// a canary TCP and UDP server on 127.0.0.1 standing for the attacker, an allowlisted HTTP
// server reached only through the egress proxy, and a real engine driven with Claude Code
// PreToolUse payloads. A command is run as Claude Code would run it: the answer's
// `updatedInput.command` when Warden rewrote it, the original when Warden allowed it
// unchanged, nothing when it was denied.
import { spawn } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containCommand, containmentUnavailable, containSpec, runnerFiles } from "../../src/hooks/contain.js";
import { answerHostEvent, claudeCodeAdapter, createEngine, type Engine } from "../../src/hooks/index.js";

export const SSH_KEY = "CANARY-SSH-ed25519-7f3a9c";
export const RSA_KEY = "CANARY-SSH-rsa-5b1e22";
export const AWS_KEY = "CANARY-AWS-aws_secret_access_key-91ac";
export const DOTENV = "CANARY-DOTENV-STRIPE-sk_live_c4n4ry";
export const BASHRC = "# the user's bashrc\nexport EDITOR=vim\n";
export const GITCONFIG = "[user]\n\tname = Dev\n";
export const SETTINGS =
  '{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"warden"}]}]}}';

/** Fails (never skips) when this machine cannot run the sandbox, saying how to fix it. */
export function requireContainment(): void {
  const why = containmentUnavailable();
  if (why !== undefined) throw new Error(`containment tests need bubblewrap with user namespaces: ${why}`);
  if (!existsSync(runnerFiles().run))
    throw new Error("run `npm run build` first (the runner is dist/src/hooks/contain-run.js)");
}

export interface Harness {
  home: string;
  ws: string;
  hooksDir: string;
  engine: Engine;
  /** Bytes and connections the attacker's canary (TCP) and its DNS stand-in (UDP) received. */
  canary: { port: number; udpPort: number; connections: number; bytes: number; datagrams: number };
  /** The allowlisted server (`127.0.0.1:okPort` is on the profile's egress list). */
  okPort: number;
  close(): Promise<void>;
}

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const a = server.address();
      resolve(typeof a === "object" && a !== null ? a.port : 0);
    }),
  );
}

function seedHome(home: string, ws: string): void {
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), `${SSH_KEY}\n`);
  writeFileSync(join(home, ".ssh", "id_rsa"), `${RSA_KEY}\n`);
  mkdirSync(join(home, ".aws"));
  writeFileSync(join(home, ".aws", "credentials"), `[default]\naws_secret_access_key = ${AWS_KEY}\n`);
  writeFileSync(join(home, ".bashrc"), BASHRC);
  writeFileSync(join(home, ".gitconfig"), GITCONFIG);
  mkdirSync(join(home, "keep", "photos"), { recursive: true });
  writeFileSync(join(home, "keep", "photos", "a.jpg"), "jpg");
  mkdirSync(join(ws, ".claude"), { recursive: true });
  writeFileSync(join(ws, ".claude", "settings.json"), SETTINGS);
  writeFileSync(join(ws, ".env"), `STRIPE_KEY=${DOTENV}\n`);
  const pkg = {
    name: "tiny",
    version: "1.0.0",
    scripts: { test: `node -e "console.log('tests ok', 1 + 1)"` },
  };
  writeFileSync(join(ws, "package.json"), JSON.stringify(pkg));
}

export async function harness(): Promise<Harness> {
  requireContainment();
  const home = mkdtempSync(join(tmpdir(), "warden-contain-home-"));
  const ws = join(home, "project");
  mkdirSync(ws);
  seedHome(home, ws);
  const hooksDir = mkdtempSync(join(tmpdir(), "warden-contain-hooks-"));
  writeFileSync(join(hooksDir, "state-canary.json"), "STATE-CANARY");
  const canary = { port: 0, udpPort: 0, connections: 0, bytes: 0, datagrams: 0 };
  const tcp = createServer((s) => {
    canary.connections++;
    s.on("data", (d) => {
      canary.bytes += d.length;
    });
    s.on("error", () => s.destroy());
    // A valid HTTP answer carrying the attacker's script (curl | sh would run it).
    const script = "echo pwned > pwned-marker\n";
    s.end(`HTTP/1.0 200 OK\r\nContent-Length: ${script.length}\r\n\r\n${script}`);
  });
  canary.port = await listen(tcp);
  const udp: UdpSocket = createSocket("udp4");
  udp.on("message", () => {
    canary.datagrams++;
  });
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", () => r()));
  canary.udpPort = udp.address().port;
  const ok = createHttpServer((_q, r) => r.end("hello-through-proxy"));
  const okPort = await listen(ok);
  const engine = await createEngine({
    workspace: ws,
    statePath: join(hooksDir, "state.json"),
    profile: { egress: [`127.0.0.1:${okPort}`] },
  });
  await engine.versionCheck({ aarts_version: "1" });
  const close = async () => {
    await engine.close();
    await new Promise((r) => tcp.close(r));
    await new Promise((r) => ok.close(r));
    udp.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(hooksDir, { recursive: true, force: true });
  };
  return { home, ws, hooksDir, engine, canary, okPort, close };
}

let call = 0;

/** Claude Code's PreToolUse payload for one Bash command. */
export function bashPayload(
  h: Harness,
  command: string,
  session = "contain-session",
): Record<string, unknown> {
  return {
    session_id: session,
    transcript_path: join(h.home, ".claude", "projects", "t.jsonl"),
    cwd: h.ws,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, description: "run it", timeout: 60_000 },
    tool_use_id: `toolu_${++call}`,
  };
}

export interface Ran {
  decision: "allow" | "deny" | "ask";
  /** Claude Code's tool_use_id of the call. */
  callId: string;
  /** The command Claude Code ran (undefined: none ran). */
  ran: string | undefined;
  contained: boolean;
  stdout: string;
  stderr: string;
  status: number | null;
}

/** Runs `command` in `bash -c` with the throwaway HOME, in the workspace (async: the servers keep answering). */
export function exec(h: Harness, command: string, env: Record<string, string> = {}) {
  return new Promise<{ stdout: string; stderr: string; status: number | null }>((resolve) => {
    const child = spawn("/bin/bash", ["-c", command], {
      cwd: h.ws,
      env: { ...process.env, HOME: h.home, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (status) => resolve({ stdout, stderr, status }));
  });
}

/** One Bash call as Claude Code makes it: the hook's answer, then the command it runs. */
export async function asClaudeCode(
  h: Harness,
  command: string,
  env: Record<string, string> = {},
): Promise<Ran> {
  const payload = bashPayload(h, command);
  const answer = await answerHostEvent(h.engine, claudeCodeAdapter, payload, new Date().toISOString());
  const out = answer.stdout
    ? (JSON.parse(answer.stdout) as { hookSpecificOutput?: Record<string, unknown> })
    : {};
  const hso = out.hookSpecificOutput ?? {};
  const decision = (hso.permissionDecision as Ran["decision"] | undefined) ?? "allow";
  const updated = hso.updatedInput as { command?: string } | undefined;
  const callId = payload.tool_use_id as string;
  if (decision !== "allow")
    return { decision, callId, ran: undefined, contained: false, stdout: "", stderr: "", status: null };
  const ran = updated?.command ?? command;
  const r = await exec(h, ran, env);
  return { decision, callId, ran, contained: updated?.command !== undefined, ...r };
}

/** The same command contained directly (as if the policy had allowed it): containment alone. */
export async function runContained(h: Harness, command: string, env: Record<string, string> = {}) {
  const config = { hooksDir: h.hooksDir, stateDirs: [], profile: { egress: [`127.0.0.1:${h.okPort}`] } };
  const spec = containSpec(config, h.ws, { sessionKey: "0123456789abcdef", callId: `direct_${++call}` });
  return exec(h, containCommand({ command, spec }), env);
}
