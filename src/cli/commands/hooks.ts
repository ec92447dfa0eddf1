// `warden hooks`: Warden as an AARTS security engine for agent hosts (docs/hooks.md).
//   hooks serve --stdio            the subprocess transport: JSON lines on stdin/stdout
//   hooks claude-code              one Claude Code hook event on stdin → Claude Code's answer
//   hooks install claude-code      writes the hook entries into Claude Code's settings.json
//   hooks conformance              drives an engine through an AARTS conformance level
//   hooks cursor, install cursor   the Cursor adapter (hooks-cursor.ts)
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import { loadPrivateKeyFile } from "../../crypto/index.js";
import {
  answerHostEvent,
  answerHostEventRemote,
  CLAUDE_CODE_EVENTS,
  claudeCodeAdapter,
  createEngine,
  cursorAdapter,
  type EngineConfig,
  type EngineTransport,
  formatReport,
  type HookPoint,
  type HostAdapter,
  type HostAnswer,
  httpTransport,
  inProcessTransport,
  isHookPoint,
  runConformance,
  type SourceTrustConfig,
  SourceTrustConfigSchema,
  serveJsonLines,
  splitCommand,
  stdioTransport,
} from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { journalKey } from "../runtime.js";
import { installCursor, registerCursor } from "./hooks-cursor.js";
import { registerHooksState } from "./hooks-state.js";
import { SUMMARY } from "./summaries.js";

const MAX_STDIN_BYTES = 16 * 1024 * 1024;

const ENGINE_OPTIONS = defineOptions({
  policy: {
    flags: "--policy <file...>",
    description: "policy files (default: the host-tools preset)",
    kind: "values",
  },
  dir: {
    flags: "--dir <dir>",
    description: "journal, key and session state (default: $WARDEN_HOOKS_DIR or ~/.warden/hooks)",
    kind: "value",
  },
  workspace: {
    flags: "--workspace <dir>",
    description:
      "workspace root; file changes outside it are denied (default: $CLAUDE_PROJECT_DIR or the event's cwd)",
    kind: "value",
  },
  failOpen: {
    flags: "--fail-open <hook...>",
    description: "hooks answered allow when the engine fails (default: none, fail-closed)",
    kind: "values",
  },
  sourceTrust: {
    flags: "--source-trust <file>",
    description: "JSON source-trust configuration for plugins, skills and MCP servers (docs/hooks.md)",
    kind: "value",
  },
  sidecar: {
    flags: "--sidecar <url>",
    description: "claude-code/cursor: ask the sidecar's AARTS routes instead of an in-process engine",
    kind: "value",
  },
  tokenFile: {
    flags: "--token-file <file>",
    description: "with --sidecar: a file holding the host credential (default: $WARDEN_HOOKS_TOKEN)",
    kind: "value",
  },
  failOpenMax: {
    flags: "--fail-open-max <n>",
    description: "at most this many fail-open answers per engine process",
    kind: "value",
    default: "3",
  },
});
type EngineOptions = OptionsOf<typeof ENGINE_OPTIONS>;

function hooksDir(o: EngineOptions): string {
  return resolve(o.dir ?? process.env.WARDEN_HOOKS_DIR ?? join(homedir(), ".warden", "hooks"));
}

/** The journal's key beside it; two first hook processes racing to create it share the winner's. */
function hookJournalKey(db: string) {
  try {
    return journalKey(db, undefined).pair;
  } catch (err) {
    const pem = `${db}.key.pem`;
    if (!existsSync(pem)) throw err;
    return loadPrivateKeyFile(pem);
  }
}

function engineConfig(o: EngineOptions, transport: string, workspace: string | undefined): EngineConfig {
  const dir = hooksDir(o);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = join(dir, "journal.db");
  const hooks = (o.failOpen ?? []).map((h) => {
    if (!isHookPoint(h)) throw new CliError("ERR_CLI_USAGE", `--fail-open: unknown hook point ${h}`);
    return h as HookPoint;
  });
  const max = Number(o.failOpenMax ?? "3");
  if (!Number.isInteger(max) || max < 0)
    throw new CliError("ERR_CLI_USAGE", "--fail-open-max must be a whole number");
  return {
    ...(o.policy ? { policy: o.policy.map((p) => resolve(p)) } : {}),
    journal: { path: db, signer: hookJournalKey(db) },
    statePath: join(dir, "state.json"),
    sourcePins: join(dir, "source-pins.json"),
    ...(o.sourceTrust ? { sourceTrust: readSourceTrust(o.sourceTrust) } : {}),
    ...(workspace !== undefined ? { workspace: resolve(workspace) } : {}),
    ...(hooks.length > 0 ? { failure: { failOpen: { hooks, max } } } : {}),
    transport,
  };
}

function readSourceTrust(file: string): SourceTrustConfig {
  try {
    return SourceTrustConfigSchema.parse(parseStrictJson(readFileSync(resolve(file), "utf8")));
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 500) : "invalid";
    throw new CliError("ERR_CLI_INPUT", `--source-trust ${file}: ${why}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of process.stdin) {
    size += (c as Buffer).length;
    if (size > MAX_STDIN_BYTES) throw new CliError("ERR_CLI_INPUT", "stdin over 16 MiB");
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function render(ctx: CliContext, answer: HostAnswer): void {
  if (answer.stdout) ctx.io.out(answer.stdout);
  if (answer.stderr) ctx.io.err(answer.stderr);
  ctx.exitCode = answer.exitCode;
}

function sidecarUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError("ERR_CLI_USAGE", `--sidecar ${text} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new CliError("ERR_CLI_USAGE", "--sidecar must be an http(s) URL");
  return url.href;
}

/** The host credential: from a file (never on the command line), else $WARDEN_HOOKS_TOKEN. */
function hostToken(file: string | undefined): string {
  const token = (
    file !== undefined ? readFileSync(resolve(file), "utf8") : (process.env.WARDEN_HOOKS_TOKEN ?? "")
  ).trim();
  if (token === "")
    throw new CliError("ERR_CLI_USAGE", "--sidecar needs --token-file or $WARDEN_HOOKS_TOKEN");
  return token;
}

/** One host hook event read from stdin, answered in the host's format (host-adapter-common.ts). */
async function hostHook(ctx: CliContext, o: EngineOptions, adapter: HostAdapter): Promise<void> {
  const text = await readStdin();
  let input: unknown;
  try {
    input = parseStrictJson(text);
  } catch {
    input = text;
  }
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  if (o.sidecar !== undefined) {
    const remote = { url: sidecarUrl(o.sidecar), token: hostToken(o.tokenFile) };
    render(ctx, await answerHostEventRemote(remote, adapter, input, new Date().toISOString()));
    return;
  }
  const fromEnv = adapter.workspaceEnv !== undefined ? process.env[adapter.workspaceEnv] : undefined;
  const workspace = o.workspace ?? fromEnv ?? adapter.workspaceOf(fields);
  const engine = await createEngine(engineConfig(o, adapter.hostId, workspace));
  try {
    render(ctx, await answerHostEvent(engine, adapter, input, new Date().toISOString()));
  } finally {
    await engine.close();
  }
}

const INSTALL_OPTIONS = defineOptions({
  project: {
    flags: "--project",
    description: "write .claude/settings.json in the current directory (default)",
    kind: "flag",
  },
  user: { flags: "--user", description: "write ~/.claude/settings.json", kind: "flag" },
  command: {
    flags: "--command <cmd>",
    description: "the command the host runs (default: warden hooks <host>)",
    kind: "value",
  },
});

type Settings = Record<string, unknown> & { hooks?: Record<string, unknown[]> };

/** Adds Warden's entry for every event it handles; other hooks and settings are kept. */
export function mergeClaudeSettings(
  settings: Settings,
  command: string,
): { settings: Settings; added: string[] } {
  const hooks: Record<string, unknown[]> = { ...(settings.hooks ?? {}) };
  const added: string[] = [];
  for (const event of CLAUDE_CODE_EVENTS) {
    const list = Array.isArray(hooks[event]) ? [...(hooks[event] as unknown[])] : [];
    const present = JSON.stringify(list).includes(JSON.stringify(command));
    if (present) continue;
    const entry = { type: "command", command, timeout: 15 };
    list.push(
      event === "PreToolUse" || event === "PostToolUse"
        ? { matcher: "*", hooks: [entry] }
        : { hooks: [entry] },
    );
    hooks[event] = list;
    added.push(event);
  }
  return { settings: { ...settings, hooks }, added };
}

function install(ctx: CliContext, host: string, o: OptionsOf<typeof INSTALL_OPTIONS>): void {
  if (o.project && o.user) throw new CliError("ERR_CLI_USAGE", "give --project or --user, not both");
  if (host === "cursor") {
    installCursor(ctx, o);
    return;
  }
  if (host !== "claude-code")
    throw new CliError("ERR_CLI_USAGE", `unknown host ${host} (supported: claude-code, cursor)`);
  const path = o.user ? join(homedir(), ".claude", "settings.json") : resolve(".claude", "settings.json");
  let current: Settings = {};
  if (existsSync(path)) {
    const parsed = parseStrictJson(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new CliError("ERR_CLI_INPUT", `${path} is not a JSON object; not changed`);
    }
    current = parsed as Settings;
    if (current.hooks !== undefined && (typeof current.hooks !== "object" || Array.isArray(current.hooks))) {
      throw new CliError("ERR_CLI_INPUT", `${path}: "hooks" is not an object; not changed`);
    }
  }
  const { settings, added } = mergeClaudeSettings(current, o.command ?? "warden hooks claude-code");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`);
  ctx.io.out(
    added.length > 0 ? `${path}: added Warden for ${added.join(", ")}\n` : `${path}: already installed\n`,
  );
}

const CONFORMANCE_OPTIONS = defineOptions({
  level: {
    flags: "--level <n>",
    description: "AARTS conformance level 1, 2 or 3",
    kind: "value",
    default: "3",
  },
  engine: {
    flags: "--engine <cmd|url>",
    description:
      "the engine: a command speaking JSON lines (split on spaces, no shell) or an http(s) URL of a sidecar (token in $WARDEN_ENGINE_TOKEN); default Warden's own, in process",
    kind: "value",
  },
  json: { flags: "--json", description: "print the report as JSON", kind: "flag" },
});

async function engineTransport(engine: string | undefined, workspace: string): Promise<EngineTransport> {
  if (engine === undefined)
    return inProcessTransport(await createEngine({ workspace }), { closeEngine: true });
  if (/^https?:\/\//.test(engine)) {
    const token = process.env.WARDEN_ENGINE_TOKEN;
    if (!token)
      throw new CliError("ERR_CLI_USAGE", "an engine URL needs its bearer token in $WARDEN_ENGINE_TOKEN");
    return httpTransport(engine, token);
  }
  const { command, args } = splitCommand(engine);
  return stdioTransport(command, args);
}

async function conformance(ctx: CliContext, o: OptionsOf<typeof CONFORMANCE_OPTIONS>): Promise<void> {
  const level = Number(o.level ?? "3");
  if (level !== 1 && level !== 2 && level !== 3)
    throw new CliError("ERR_CLI_USAGE", "--level must be 1, 2 or 3");
  const workspace = join(tmpdir(), "warden-conformance-workspace");
  const transport = await engineTransport(o.engine, workspace);
  try {
    const report = await runConformance({
      level,
      engine: o.engine ?? "warden (in process)",
      transport,
      workspace,
    });
    ctx.io.out(o.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    ctx.exitCode = report.passed ? 0 : 1;
  } finally {
    await transport.close();
  }
}

export function registerHooks(program: Command, ctx: CliContext): void {
  const hooks = program.command("hooks").description(SUMMARY.hooks);
  addOptions(hooks.command("serve").description("serve the AARTS engine over a transport"), {
    ...ENGINE_OPTIONS,
    stdio: {
      flags: "--stdio",
      description: "JSON lines over stdin/stdout (the subprocess transport)",
      kind: "flag",
    },
  }).action(async (o: EngineOptions & { stdio?: boolean }) => {
    if (!o.stdio) throw new CliError("ERR_CLI_USAGE", "give --stdio (the HTTP transport is on the sidecar)");
    const engine = await createEngine(engineConfig(o, "stdio", o.workspace));
    try {
      await serveJsonLines(engine, process.stdin, process.stdout);
    } finally {
      await engine.close();
    }
  });
  addOptions(
    hooks.command("claude-code").description("answer one Claude Code hook event read from stdin"),
    ENGINE_OPTIONS,
  ).action((o: EngineOptions) => hostHook(ctx, o, claudeCodeAdapter));
  registerCursor(hooks, ENGINE_OPTIONS, (o: EngineOptions) => hostHook(ctx, o, cursorAdapter));
  addOptions(
    hooks.command("install <host>").description("register Warden's hooks with a host (claude-code, cursor)"),
    INSTALL_OPTIONS,
  ).action((host: string, o: OptionsOf<typeof INSTALL_OPTIONS>) => install(ctx, host, o));
  addOptions(
    hooks
      .command("conformance")
      .description("drive an AARTS engine through a conformance level; exit 1 on a failure"),
    CONFORMANCE_OPTIONS,
  ).action((o: OptionsOf<typeof CONFORMANCE_OPTIONS>) => conformance(ctx, o));
  registerHooksState(hooks, ctx);
}
