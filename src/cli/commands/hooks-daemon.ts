// `warden hooks daemon`: the long-running hook daemon (src/hooks/daemon.ts, docs/hooks-daemon.md).
//   warden hooks daemon                 start it detached (a no-op when it runs), print where
//   warden hooks daemon --foreground    run it in this process (what the detached start and
//                                       the lean entry spawn; a service manager's command)
//   warden hooks daemon --status        exit 0 and print pid, HTTP port, socket when it runs; 1 when not
//   warden hooks daemon --stop          SIGTERM, wait for it to close
// The engine options (policy, fail-open, source trust) are the one-shot `warden hooks <host>`'s.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { CliError } from "../../contracts/index.js";
import type { EngineConfig } from "../../hooks/index.js";
import type { CliContext } from "../io.js";
import { addOptions, defineOptions, type OptionSpec, type OptionsOf } from "../options.js";
import { wardenLauncher } from "./hook-command.js";

/** The daemon's HTTP port unless --port or $WARDEN_HOOKS_PORT says otherwise. */
export const DEFAULT_DAEMON_PORT = 47731;

const DAEMON_OPTIONS = defineOptions({
  foreground: { flags: "--foreground", description: "run in this process (not detached)", kind: "flag" },
  status: { flags: "--status", description: "print whether it runs (exit 1 when not)", kind: "flag" },
  stop: { flags: "--stop", description: "stop the running daemon", kind: "flag" },
  port: {
    flags: "--port <n>",
    description: `HTTP port on 127.0.0.1, 0 for any, "off" for none (default $WARDEN_HOOKS_PORT or ${DEFAULT_DAEMON_PORT})`,
    kind: "value",
  },
  idleMinutes: {
    flags: "--idle-minutes <n>",
    description: "exit after this many minutes without a hook event (default 0: never)",
    kind: "value",
  },
});
type DaemonFlags = OptionsOf<typeof DAEMON_OPTIONS>;

export interface DaemonDeps<S extends Record<string, OptionSpec>> {
  /** The engine options the daemon shares with `warden hooks <host>`. */
  engineOptions: S;
  dirOf(o: OptionsOf<S>): string;
  configFor(o: OptionsOf<S>, hostId: string, workspace: string | undefined): EngineConfig;
  /** The engine options as arguments again, for the detached start. */
  argsOf(o: OptionsOf<S>): string[];
}

export function daemonPort(text: string | undefined): number | null {
  const t = text ?? process.env.WARDEN_HOOKS_PORT ?? String(DEFAULT_DAEMON_PORT);
  if (t === "off") return null;
  const n = Number(t);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new CliError("ERR_CLI_USAGE", `--port ${t}: a port 0-65535 or "off"`);
  return n;
}

function idleMs(text: string | undefined): number {
  const n = Number(text ?? "0");
  if (!Number.isFinite(n) || n < 0) throw new CliError("ERR_CLI_USAGE", "--idle-minutes must be >= 0");
  return Math.round(n * 60_000);
}

async function hooksApi() {
  return import("../../hooks/index.js");
}

/** The running daemon of `dir`, if any: its pid and what daemon.json says. */
async function running(dir: string) {
  const h = await hooksApi();
  const paths = h.daemonPaths(dir);
  const pid = h.readPid(paths.pid);
  if (pid === undefined || !h.isDaemonPid(pid)) return undefined;
  const info = h.readInfo(paths.info);
  return { pid, info: info?.pid === pid ? info : undefined, paths };
}

async function status(ctx: CliContext, dir: string): Promise<void> {
  const r = await running(dir);
  if (r === undefined) {
    ctx.io.out(`warden hook daemon: not running (state ${dir})\n`);
    ctx.exitCode = 1;
    return;
  }
  const http =
    r.info?.port != null
      ? `http://127.0.0.1:${r.info.port}`
      : `off${r.info?.httpError ? ` (${r.info.httpError})` : ""}`;
  ctx.io.out(
    `warden hook daemon: running, pid ${r.pid}\n  http    ${http}\n  socket  ${r.paths.socket}\n  token   ${r.paths.token}\n  since   ${r.info?.startedAt ?? "?"}\n`,
  );
}

async function stop(ctx: CliContext, dir: string): Promise<void> {
  const r = await running(dir);
  if (r === undefined) {
    ctx.io.out("warden hook daemon: not running\n");
    return;
  }
  process.kill(r.pid, "SIGTERM");
  const h = await hooksApi();
  for (let i = 0; i < 100 && h.isDaemonPid(r.pid); i++) await new Promise((res) => setTimeout(res, 50));
  if (h.isDaemonPid(r.pid)) throw new CliError("ERR_CLI_INPUT", `pid ${r.pid} did not stop within 5 s`);
  ctx.io.out(`warden hook daemon: stopped (pid ${r.pid})\n`);
}

async function foreground<S extends Record<string, OptionSpec>>(
  ctx: CliContext,
  deps: DaemonDeps<S>,
  o: OptionsOf<S> & DaemonFlags,
): Promise<void> {
  const h = await hooksApi();
  const dir = deps.dirOf(o);
  const d = await h.startDaemon({
    dir,
    port: daemonPort(o.port),
    idleMs: idleMs(o.idleMinutes),
    configFor: (host, workspace) => deps.configFor(o, host, workspace),
  });
  if ("running" in d) {
    ctx.io.out(`warden hook daemon: already running, pid ${d.running}\n`);
    return;
  }
  const http =
    d.port !== null ? `http://127.0.0.1:${d.port}` : `off${d.httpError ? ` (${d.httpError})` : ""}`;
  ctx.io.out(`warden hook daemon: pid ${d.pid}, http ${http}, socket ${d.socket}\n`);
  const onSignal = () => void d.close();
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  await d.closed;
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
}

/** Starts `--foreground` detached (its output to daemon.log, 0600) and waits for it to listen. */
async function detached<S extends Record<string, OptionSpec>>(
  ctx: CliContext,
  deps: DaemonDeps<S>,
  o: OptionsOf<S> & DaemonFlags,
): Promise<void> {
  const dir = deps.dirOf(o);
  if ((await running(dir)) === undefined) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const log = openSync(join(dir, "daemon.log"), "a", 0o600);
    const args = [wardenLauncher(), "hooks", "daemon", "--foreground", ...deps.argsOf(o)];
    if (o.port !== undefined) args.push("--port", o.port);
    if (o.idleMinutes !== undefined) args.push("--idle-minutes", o.idleMinutes);
    const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", log, log], cwd: dir });
    child.unref();
    closeSync(log);
    for (let i = 0; i < 200; i++) {
      const r = await running(dir);
      if (r?.info !== undefined && existsSync(r.paths.socket)) break;
      if (child.exitCode !== null) break;
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  await status(ctx, dir);
  if (ctx.exitCode !== 0) ctx.io.err(`warden: the daemon did not start; see ${join(dir, "daemon.log")}\n`);
}

export function registerDaemon<S extends Record<string, OptionSpec>>(
  hooks: Command,
  ctx: CliContext,
  deps: DaemonDeps<S>,
): void {
  addOptions(
    hooks
      .command("daemon")
      .description("the long-running hook daemon: Claude Code http hooks and the lean command entry"),
    { ...deps.engineOptions, ...DAEMON_OPTIONS },
  ).action(async (o: OptionsOf<S> & DaemonFlags) => {
    const modes = [o.foreground, o.status, o.stop].filter(Boolean).length;
    if (modes > 1) throw new CliError("ERR_CLI_USAGE", "give one of --foreground, --status, --stop");
    const dir = deps.dirOf(o);
    if (o.status) return status(ctx, dir);
    if (o.stop) return stop(ctx, dir);
    if (o.foreground) return foreground(ctx, deps, o);
    return detached(ctx, deps, o);
  });
}
