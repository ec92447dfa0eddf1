// Fixtures for the file-tool, self-protection and ask-memory tests: a throwaway HOME with
// real credential files, a workspace with the hosts' settings files, and Claude Code's
// documented hook payloads ({session_id, transcript_path, cwd, permission_mode,
// hook_event_name, tool_name, tool_input, tool_use_id}) answered through the Claude Code
// adapter as `warden hooks claude-code` answers them.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  answerHostEvent,
  claudeCodeAdapter,
  createEngine,
  type Engine,
  type EngineConfig,
} from "../../src/hooks/index.js";

/**
 * Machines live outside the temp directory (in the repository's ignored .warden-tmp/), as a
 * real HOME and workspace do: a file there is never a scratch file.
 */
const BASE = resolve(import.meta.dirname, "../../.warden-tmp");

export interface Machine {
  root: string;
  home: string;
  ws: string;
  /** Warden's hooks state directory (~/.warden/hooks). */
  stateDir: string;
}

function put(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

export const KEY =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
export const BASHRC = "# the user's own start-up file\nexport PATH=$HOME/bin:$PATH\n";

/** A throwaway HOME (process.env.HOME points at it) and a workspace beside it. */
export function machine(): Machine {
  mkdirSync(BASE, { recursive: true });
  const root = mkdtempSync(join(BASE, "machine-"));
  const home = join(root, "home");
  const ws = join(root, "project");
  put(join(home, ".bashrc"), BASHRC);
  put(join(home, ".ssh/id_ed25519"), KEY);
  put(join(home, ".aws/credentials"), "[default]\naws_access_key_id = AKIAQWERTYUIOPASDFGH\n");
  const stateDir = join(home, ".warden/hooks");
  // The hooks journal's real signing key, as the installed engine keeps it.
  const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  put(join(stateDir, "journal.db.key.pem"), pem);
  chmodSync(join(stateDir, "journal.db.key.pem"), 0o600);
  put(join(ws, "README.md"), "# project\n");
  put(join(ws, "src/index.ts"), "export const x = 1;\n");
  put(join(ws, "src/auth/credentials.ts"), "export function loadCredentials() {}\n");
  put(join(ws, "docs/credentials.md"), "# How credentials are loaded\n");
  put(join(ws, ".env.example"), "API_KEY=\n");
  put(join(ws, ".env"), "API_KEY=live-secret\n");
  put(join(ws, ".claude/settings.json"), '{"hooks":{"PreToolUse":[]}}\n');
  put(join(ws, ".cursor/hooks.json"), '{"version":1,"hooks":{}}\n');
  mkdirSync(join(ws, ".git/hooks"), { recursive: true });
  process.env.HOME = home;
  return { root, home, ws, stateDir };
}

export function dispose(m: Machine): void {
  rmSync(m.root, { recursive: true, force: true });
}

/** An engine over the machine's workspace, its state in ~/.warden/hooks like the installed one. */
export async function engineOn(m: Machine, config: EngineConfig = {}): Promise<Engine> {
  mkdirSync(m.stateDir, { recursive: true });
  return createEngine({ workspace: m.ws, statePath: join(m.stateDir, "state.json"), ...config });
}

export function payload(
  m: Machine,
  event: string,
  fields: Record<string, unknown>,
  session = "3b9d2f4e-1c7a-4e8b-9f21-5d6c7a8b9e01",
): Record<string, unknown> {
  return {
    session_id: session,
    transcript_path: join(m.home, ".claude/projects/-project", `${session}.jsonl`),
    cwd: m.ws,
    permission_mode: "default",
    hook_event_name: event,
    ...fields,
  };
}

/** A PreToolUse payload of one Claude Code tool call. */
export function pre(m: Machine, tool_name: string, tool_input: Record<string, unknown>, session?: string) {
  return payload(m, "PreToolUse", { tool_name, tool_input, tool_use_id: `toolu_${randomUUID()}` }, session);
}

export interface Answer {
  decision: "allow" | "deny" | "ask";
  reason: string;
}

/** The engine's answer as Claude Code reads it (no output: allowed). */
export async function answer(e: Engine, p: Record<string, unknown>): Promise<Answer> {
  const a = await answerHostEvent(e, claudeCodeAdapter, p, new Date().toISOString());
  if (a.stdout === undefined || a.stdout.trim() === "") return { decision: "allow", reason: "" };
  const out = JSON.parse(a.stdout) as {
    hookSpecificOutput?: { permissionDecision?: Answer["decision"]; permissionDecisionReason?: string };
    decision?: string;
    reason?: string;
  };
  const h = out.hookSpecificOutput;
  if (h?.permissionDecision !== undefined)
    return { decision: h.permissionDecision, reason: h.permissionDecisionReason ?? "" };
  return { decision: out.decision === "block" ? "deny" : "allow", reason: out.reason ?? "" };
}

export const read = (path: string) => readFileSync(path, "utf8");
