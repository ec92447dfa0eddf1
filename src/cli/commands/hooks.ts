// `warden hooks`: Warden as an AARTS security engine for agent hosts (docs/hooks.md).
//   hooks serve --stdio            the subprocess transport: JSON lines on stdin/stdout
//   hooks claude-code              one Claude Code hook event on stdin → Claude Code's answer
//   hooks install claude-code      writes the hook entries into Claude Code's settings.json
//                                  (the lean entry or the daemon's http hook: hooks-install.ts)
//   hooks daemon                   the long-running hook daemon (hooks-daemon.ts)
//   hooks conformance              drives an engine through an AARTS conformance level
//   hooks cursor, install cursor   the Cursor adapter (hooks-cursor.ts)
//   hooks codex|copilot|gemini     and their installs (hooks-codex.ts, hooks-copilot.ts, hooks-gemini.ts)
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { CliError, parseStrictJson } from "../../contracts/index.js";
import { loadPrivateKeyFile } from "../../crypto/index.js";
import {
  answerHostEvent,
  answerHostEventRemote,
  type CodingProfileConfig,
  CodingProfileConfigSchema,
  claudeCodeAdapter,
  codexAdapter,
  createEngine,
  cursorAdapter,
  type EngineConfig,
  type EngineTransport,
  formatReport,
  geminiAdapter,
  type HookPoint,
  type HostAdapter,
  type HostAnswer,
  hostSecretPath,
  httpTransport,
  inProcessTransport,
  isHookPoint,
  runConformance,
  type SourceTrustConfig,
  SourceTrustConfigSchema,
  secretFile,
  serveJsonLines,
  splitCommand,
  stdioTransport,
} from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionsOf } from "../options.js";
import { journalKey } from "../runtime.js";
import { registerCodex } from "./hooks-codex.js";
import { registerCopilot } from "./hooks-copilot.js";
import { registerCursor } from "./hooks-cursor.js";
import { registerDaemon } from "./hooks-daemon.js";
import { registerGemini } from "./hooks-gemini.js";
import { INSTALL_OPTIONS, type InstallFlags, install } from "./hooks-install.js";
import { registerHooksState } from "./hooks-state.js";
import { SUMMARY } from "./summaries.js";

const MAX_STDIN_BYTES = 16 * 1024 * 1024;

const ENGINE_OPTIONS = defineOptions({
  policy: {
    flags: "--policy <file...>",
    description: "policy files (default: the host-tools preset)",
    kind: "values",
  },
  shadowPolicy: {
    flags: "--shadow-policy <file...>",
    description: "a shadow bundle judged beside the policy, deciding nothing; disagreements journaled",
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
  profile: {
    flags: "--profile <file>",
    description:
      "JSON coding-agent profile: extra credential and protected paths, the egress allowlist (default: <dir>/profile.json when present; docs/hooks-containment.md)",
    kind: "value",
  },
  containment: {
    flags: "--containment <mode>",
    description: "auto (default: ask when the sandbox is unavailable) or required (deny instead)",
    kind: "value",
  },
  sidecar: {
    flags: "--sidecar <url>",
    description:
      "a host command (claude-code, cursor, codex, copilot, gemini): ask the sidecar's AARTS routes instead of an in-process engine",
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

function hooksDir(o: { dir?: string | undefined }): string {
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

type EngineConfigOptions = Pick<
  EngineOptions,
  "policy" | "shadowPolicy" | "dir" | "failOpen" | "failOpenMax" | "sourceTrust" | "profile" | "containment"
>;

/**
 * The operator's coding-agent profile: --profile, else `<dir>/profile.json` when present (the
 * hooks directory is out of the agent's reach, so the agent can neither write nor read it).
 */
function readProfile(o: EngineConfigOptions, dir: string): CodingProfileConfig | undefined {
  const file = o.profile !== undefined ? resolve(o.profile) : join(dir, "profile.json");
  if (o.profile === undefined && !existsSync(file)) return undefined;
  try {
    return CodingProfileConfigSchema.parse(parseStrictJson(readFileSync(file, "utf8")));
  } catch (err) {
    const why = err instanceof Error ? err.message.slice(0, 500) : "invalid";
    throw new CliError("ERR_CLI_INPUT", `profile ${file}: ${why}`);
  }
}

function containmentMode(v: string | undefined): "auto" | "required" | undefined {
  if (v === undefined || v === "auto" || v === "required") return v;
  throw new CliError("ERR_CLI_USAGE", `--containment must be auto or required, not ${v.slice(0, 32)}`);
}

function engineConfig(
  o: EngineConfigOptions,
  transport: string,
  workspace: string | undefined,
): EngineConfig {
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
  const profile = readProfile(o, dir);
  const containment = containmentMode(o.containment);
  return {
    ...(o.policy ? { policy: o.policy.map((p) => resolve(p)) } : {}),
    ...(o.shadowPolicy ? { shadowPolicy: o.shadowPolicy.map((p) => resolve(p)) } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(containment !== undefined ? { containment } : {}),
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
  hostSecretFile: {
    flags: "--host-secret-file <file>",
    description:
      "with a command engine: present this file's secret in the handshake (Warden's: <hooks dir>/host.secret)",
    kind: "value",
  },
});

async function engineTransport(
  engine: string | undefined,
  workspace: string,
  hostSecretFile?: string,
): Promise<EngineTransport> {
  if (engine === undefined)
    return inProcessTransport(await createEngine({ workspace }), { closeEngine: true });
  if (/^https?:\/\//.test(engine)) {
    const token = process.env.WARDEN_ENGINE_TOKEN;
    if (!token)
      throw new CliError("ERR_CLI_USAGE", "an engine URL needs its bearer token in $WARDEN_ENGINE_TOKEN");
    return httpTransport(engine, token);
  }
  const { command, args } = splitCommand(engine);
  return stdioTransport(
    command,
    args,
    hostSecretFile ? { hostSecret: secretFile(resolve(hostSecretFile)) } : {},
  );
}

async function conformance(ctx: CliContext, o: OptionsOf<typeof CONFORMANCE_OPTIONS>): Promise<void> {
  const level = Number(o.level ?? "3");
  if (level !== 1 && level !== 2 && level !== 3)
    throw new CliError("ERR_CLI_USAGE", "--level must be 1, 2 or 3");
  const workspace = join(tmpdir(), "warden-conformance-workspace");
  const transport = await engineTransport(o.engine, workspace, o.hostSecretFile);
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

/** The engine options the daemon takes (a daemon serves every workspace and host itself). */
const { policy, shadowPolicy, dir, failOpen, failOpenMax, sourceTrust, profile, containment } =
  ENGINE_OPTIONS;
const DAEMON_ENGINE_OPTIONS = {
  policy,
  shadowPolicy,
  dir,
  failOpen,
  failOpenMax,
  sourceTrust,
  profile,
  containment,
};

/** The daemon's engine options as arguments again (absolute paths), for its detached start. */
function daemonArgs(o: OptionsOf<typeof DAEMON_ENGINE_OPTIONS>): string[] {
  return [
    "--dir",
    hooksDir(o),
    ...(o.policy ? ["--policy", ...o.policy.map((p) => resolve(p))] : []),
    ...(o.shadowPolicy ? ["--shadow-policy", ...o.shadowPolicy.map((p) => resolve(p))] : []),
    ...(o.failOpen?.length ? ["--fail-open", ...o.failOpen] : []),
    ...(o.failOpenMax !== undefined ? ["--fail-open-max", o.failOpenMax] : []),
    ...(o.sourceTrust !== undefined ? ["--source-trust", resolve(o.sourceTrust)] : []),
    ...(o.profile !== undefined ? ["--profile", resolve(o.profile)] : []),
    ...(o.containment !== undefined ? ["--containment", o.containment] : []),
  ];
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
      // The host's launcher presents this secret in the handshake (docs/hooks-files.md).
      const hostSecret = secretFile(hostSecretPath(hooksDir(o)));
      await serveJsonLines(engine, process.stdin, process.stdout, { hostSecret });
    } finally {
      await engine.close();
    }
  });
  addOptions(
    hooks.command("claude-code").description("answer one Claude Code hook event read from stdin"),
    ENGINE_OPTIONS,
  ).action((o: EngineOptions) => hostHook(ctx, o, claudeCodeAdapter));
  registerCursor(hooks, ENGINE_OPTIONS, (o: EngineOptions) => hostHook(ctx, o, cursorAdapter));
  registerCodex(hooks, ENGINE_OPTIONS, (o: EngineOptions) => hostHook(ctx, o, codexAdapter));
  registerCopilot(hooks, ENGINE_OPTIONS, (o: EngineOptions, adapter) => hostHook(ctx, o, adapter));
  registerGemini(hooks, ENGINE_OPTIONS, (o: EngineOptions) => hostHook(ctx, o, geminiAdapter));
  addOptions(
    hooks
      .command("install <host>")
      .description("register Warden's hooks with a host (claude-code, cursor, codex, copilot, gemini)"),
    INSTALL_OPTIONS,
  ).action((host: string, o: InstallFlags) => install(ctx, host, o));
  registerDaemon(hooks, ctx, {
    engineOptions: DAEMON_ENGINE_OPTIONS,
    dirOf: (o) => hooksDir(o),
    configFor: (o, _host, workspace) => engineConfig(o, "daemon", workspace),
    argsOf: daemonArgs,
  });
  addOptions(
    hooks
      .command("conformance")
      .description("drive an AARTS engine through a conformance level; exit 1 on a failure"),
    CONFORMANCE_OPTIONS,
  ).action((o: OptionsOf<typeof CONFORMANCE_OPTIONS>) => conformance(ctx, o));
  registerHooksState(hooks, ctx);
}

export { mergeClaudeSettings } from "./hooks-install.js";
