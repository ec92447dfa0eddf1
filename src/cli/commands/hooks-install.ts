// `warden hooks install <host> [--project|--user] [--command|--http]`: registers Warden in a
// host's settings with ABSOLUTE paths (no reliance on PATH), merged with what is there:
// other hooks and settings are kept, an older Warden entry (the bare `warden hooks
// claude-code`, the one-shot, the lean entry, the daemon's http hook) is replaced rather
// than joined by a second one, and a second run changes nothing.
// Claude Code, two ways (docs/hooks-daemon.md):
//   --command (default)  the lean entry `'<node>' '<pkg>/bin/warden-hook.js' claude-code`: the
//                        daemon over its Unix socket, started on demand; no secret in any
//                        environment (the entry reads the token file)
//   --http               Claude Code's http hook to http://127.0.0.1:PORT/hooks/claude-code with
//                        `Authorization: Bearer $WARDEN_HOOK_DAEMON_TOKEN` (allowedEnvVars)
// Both with `onFailure: "block"`: a hook that cannot start, times out or fails blocks the
// action. Claude Code older than 2.1.295 ignores onFailure and lets such a hook through
// (fail open): a version this old is refused unless --accept-fail-open says otherwise.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import { CLAUDE_CODE_EVENTS, daemonPaths, isDaemonPid, readInfo, readPid } from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { defineOptions, type OptionsOf } from "../options.js";
import { hookEntryCommand, shellQuote, wardenLauncher } from "./hook-command.js";
import { installCodex } from "./hooks-codex.js";
import { installCopilot } from "./hooks-copilot.js";
import { installCursor } from "./hooks-cursor.js";
import { daemonPort } from "./hooks-daemon.js";
import { installGemini } from "./hooks-gemini.js";

export const INSTALL_OPTIONS = defineOptions({
  project: {
    flags: "--project",
    description: "write .claude/settings.json in the current directory (default)",
    kind: "flag",
  },
  user: { flags: "--user", description: "write ~/.claude/settings.json", kind: "flag" },
  command: {
    flags: "--command",
    description: "a command hook running the lean entry bin/warden-hook.js (default)",
    kind: "flag",
  },
  http: {
    flags: "--http",
    description: "an http hook to the hook daemon (token in $WARDEN_HOOK_DAEMON_TOKEN)",
    kind: "flag",
  },
  hookCommand: {
    flags: "--hook-command <cmd>",
    description: "install this command line instead of Warden's own",
    kind: "value",
  },
  dir: {
    flags: "--dir <dir>",
    description: "the hook state directory the entry and daemon use (default ~/.warden/hooks)",
    kind: "value",
  },
  port: { flags: "--port <n>", description: "with --http: the daemon's port", kind: "value" },
  acceptFailOpen: {
    flags: "--accept-fail-open",
    description:
      "install on a host that lets a tool call through when its hook times out or crashes (Claude Code older than 2.1.295, codex, copilot, gemini)",
    kind: "flag",
  },
});
export type InstallFlags = OptionsOf<typeof INSTALL_OPTIONS>;

/** The environment variable Claude Code fills the http hook's Authorization header from. */
export const DAEMON_TOKEN_ENV = "WARDEN_HOOK_DAEMON_TOKEN";
const HOOK_TIMEOUT_S = 15;
const FAIL_CLOSED_SINCE = [2, 1, 295] as const;

type Handler = Record<string, unknown>;
type Settings = Record<string, unknown> & { hooks?: Record<string, unknown[]> };

/** A hook handler some Warden install wrote (any version, any mode). */
export function isWardenHandler(h: unknown): boolean {
  if (typeof h !== "object" || h === null) return false;
  const { type, command, url } = h as Handler;
  if (type === "http" && typeof url === "string")
    return /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/hooks\/claude-code$/.test(url);
  if (typeof command !== "string") return false;
  return (
    /(^|[\s'"/])warden(\.js)?'?\s+hooks\s+claude-code(\s|$)/.test(command) ||
    /warden-hook\.js'?\s+claude-code(\s|$)/.test(command)
  );
}

const groupsOf = (list: unknown[]) =>
  list.flatMap((g) =>
    typeof g === "object" && g !== null && Array.isArray((g as Handler).hooks)
      ? [(g as { hooks: unknown[] }).hooks]
      : [],
  );

/** The event's list without Warden's handlers (a group left empty by that is dropped). */
function withoutWarden(list: unknown[]): unknown[] {
  return list.flatMap((g) => {
    if (typeof g !== "object" || g === null || !Array.isArray((g as Handler).hooks)) return [g];
    const hooks = (g as { hooks: unknown[] }).hooks;
    const kept = hooks.filter((h) => !isWardenHandler(h));
    if (kept.length === hooks.length) return [g];
    return kept.length === 0 ? [] : [{ ...(g as Handler), hooks: kept }];
  });
}

/**
 * Warden's handler on every event it handles; other hooks and settings are kept, an older
 * Warden handler is replaced, and the same handler twice is a no-op. A string is a command.
 */
export function mergeClaudeSettings(
  settings: Settings,
  handler: string | Handler,
): { settings: Settings; added: string[]; replaced: string[] } {
  const mine: Handler =
    typeof handler === "string"
      ? { type: "command", command: handler, timeout: HOOK_TIMEOUT_S, onFailure: "block" }
      : handler;
  const hooks: Record<string, unknown[]> = { ...(settings.hooks ?? {}) };
  const added: string[] = [];
  const replaced: string[] = [];
  for (const event of CLAUDE_CODE_EVENTS) {
    const list = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const wardens = groupsOf(list).flat().filter(isWardenHandler);
    const same = wardens.length === 1 && JSON.stringify(wardens[0]) === JSON.stringify(mine);
    if (same || JSON.stringify(list).includes(JSON.stringify(mine))) continue;
    const group =
      event === "PreToolUse" || event === "PostToolUse" ? { matcher: "*", hooks: [mine] } : { hooks: [mine] };
    hooks[event] = [...withoutWarden(list), group];
    (wardens.length > 0 ? replaced : added).push(event);
  }
  return { settings: { ...settings, hooks }, added, replaced };
}

/** The installed Claude Code's version, when `claude --version` answers (else undefined). */
function claudeVersion(): number[] | undefined {
  const r = spawnSync("claude", ["--version"], { encoding: "utf8", timeout: 5_000 });
  const m = r.status === 0 ? /(\d+)\.(\d+)\.(\d+)/.exec(r.stdout) : null;
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function failsOpen(v: number[]): boolean {
  for (let i = 0; i < 3; i++) {
    const a = v[i] ?? 0;
    const b = FAIL_CLOSED_SINCE[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

function readSettings(path: string): Settings {
  if (!existsSync(path)) return {};
  const parsed = parseStrictJson(readFileSync(path, "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CliError("ERR_CLI_INPUT", `${path} is not a JSON object; not changed`);
  const s = parsed as Settings;
  if (s.hooks !== undefined && (typeof s.hooks !== "object" || Array.isArray(s.hooks)))
    throw new CliError("ERR_CLI_INPUT", `${path}: "hooks" is not an object; not changed`);
  return s;
}

function stateDir(o: InstallFlags): string {
  return resolve(o.dir ?? process.env.WARDEN_HOOKS_DIR ?? join(homedir(), ".warden", "hooks"));
}

/** The port of the http hook: --port, else the running daemon's, else $WARDEN_HOOKS_PORT or the default. */
function httpPort(o: InstallFlags, dir: string): number | null {
  if (o.port !== undefined) return daemonPort(o.port);
  const paths = daemonPaths(dir);
  const info = readInfo(paths.info);
  const pid = readPid(paths.pid);
  if (info?.port != null && pid === info.pid && isDaemonPid(pid)) return info.port;
  return daemonPort(undefined);
}

function httpHandler(o: InstallFlags, dir: string): Handler {
  const port = httpPort(o, dir);
  if (port === null || port === 0) throw new CliError("ERR_CLI_USAGE", "--http needs a fixed --port");
  return {
    type: "http",
    url: `http://127.0.0.1:${port}/hooks/claude-code`,
    headers: { Authorization: `Bearer $${DAEMON_TOKEN_ENV}` },
    allowedEnvVars: [DAEMON_TOKEN_ENV],
    timeout: HOOK_TIMEOUT_S,
    onFailure: "block",
  };
}

function instructions(o: InstallFlags, dir: string, handler: string | Handler): string {
  const daemon = [process.execPath, wardenLauncher(), "hooks", "daemon"].map(shellQuote).join(" ");
  const dirArg = o.dir !== undefined ? ` --dir ${shellQuote(dir)}` : "";
  const url = typeof handler === "string" ? "" : String(handler.url);
  const port = url ? ` --port ${new URL(url).port}` : "";
  const closed =
    '  every entry has onFailure "block" (Claude Code >= 2.1.295): a hook that cannot start, times out or fails blocks the action\n';
  if (!o.http)
    return `  the hook daemon starts on the first hook event; to start it now:\n    ${daemon}${dirArg}\n${closed}`;
  const token = join(dir, "daemon.token");
  return (
    `  start the hook daemon (the http hook does not start it):\n    ${daemon}${dirArg}${port}\n${closed}` +
    `  then, in the shell that starts claude:\n    export ${DAEMON_TOKEN_ENV}="$(cat ${shellQuote(token)})"\n` +
    `  Claude Code passes its environment to the agent's commands: only Warden's containment (which\n` +
    `  scrubs the environment) hides this token from them; without it prefer --command.\n`
  );
}

const OTHER_HOSTS = new Map([
  ["codex", installCodex],
  ["copilot", installCopilot],
  ["gemini", installGemini],
]);

export function install(ctx: CliContext, host: string, o: InstallFlags): void {
  if (o.project && o.user) throw new CliError("ERR_CLI_USAGE", "give --project or --user, not both");
  if (o.http && o.command) throw new CliError("ERR_CLI_USAGE", "give --http or --command, not both");
  if (host === "cursor") {
    installCursor(ctx, { project: o.project, user: o.user, command: o.hookCommand });
    return;
  }
  const other = OTHER_HOSTS.get(host);
  if (other !== undefined) {
    other(ctx, {
      project: o.project,
      user: o.user,
      command: o.hookCommand,
      acceptFailOpen: o.acceptFailOpen,
    });
    return;
  }
  if (host !== "claude-code")
    throw new CliError(
      "ERR_CLI_USAGE",
      `unknown host ${host} (supported: claude-code, cursor, codex, copilot, gemini)`,
    );
  const version = o.acceptFailOpen ? undefined : claudeVersion();
  if (version !== undefined && failsOpen(version))
    throw new CliError(
      "ERR_CLI_USAGE",
      `Claude Code ${version.join(".")} lets a hook that times out or cannot start through (onFailure "block" needs ${FAIL_CLOSED_SINCE.join(".")}): upgrade it, or give --accept-fail-open`,
    );
  const path = o.user ? join(homedir(), ".claude", "settings.json") : resolve(".claude", "settings.json");
  const dir = stateDir(o);
  const handler: string | Handler = o.http
    ? httpHandler(o, dir)
    : (o.hookCommand ?? hookEntryCommand("claude-code", o.dir !== undefined ? dir : undefined));
  const { settings, added, replaced } = mergeClaudeSettings(readSettings(path), handler);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`);
  const what = [
    ...(added.length > 0 ? [`added Warden for ${added.join(", ")}`] : []),
    ...(replaced.length > 0 ? [`replaced an older Warden entry for ${replaced.join(", ")}`] : []),
  ];
  ctx.io.out(`${path}: ${what.length > 0 ? what.join("; ") : "already installed"}\n`);
  ctx.io.out(instructions(o, dir, handler));
}
