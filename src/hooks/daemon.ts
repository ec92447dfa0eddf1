// `warden hooks daemon`: one long-running process per user (per state directory) that holds
// the hook engines warm and answers hosts over two doors (docs/hooks-daemon.md):
//   HTTP on 127.0.0.1:PORT  Claude Code's `http` hook type: POST /hooks/<host>  (daemon-http.ts)
//   <dir>/daemon.sock       the lean command entry bin/warden-hook.js          (daemon-socket.ts)
// Both require the state directory's token (daemon.token, 0600). The daemon takes
// daemon.pid exclusively (one per directory), writes daemon.json for `--status` and the
// installer, and removes its files on close. With `idleMs`, it closes itself after that long
// without an authenticated request (the command entry starts it again on demand).
import type { Server } from "node:http";
import type { Server as NetServer } from "node:net";
import { join } from "node:path";
import { HookError } from "../contracts/index.js";
import { EnginePool, type EnginePoolOptions } from "./daemon-engines.js";
import {
  acquirePid,
  type DaemonPaths,
  daemonPaths,
  ensureToken,
  prepareDir,
  releasePid,
  removeQuietly,
  writeInfo,
} from "./daemon-files.js";
import { listenHttp } from "./daemon-http.js";
import { listenSocket } from "./daemon-socket.js";
import { ENGINE_VERSION } from "./engine.js";
import { loadShellParser } from "./shell.js";

export interface DaemonOptions {
  /** The state directory (journal.db, state.json and the daemon's files). */
  dir: string;
  /** The HTTP port on 127.0.0.1; 0 an ephemeral one; null no HTTP listener. */
  port: number | null;
  /** Close after this long without a request; 0 or undefined: never. */
  idleMs?: number;
  configFor: EnginePoolOptions["configFor"];
}

export interface RunningDaemon {
  readonly pid: number;
  readonly port: number | null;
  readonly socket: string;
  /** Why the HTTP listener is not up (the port was taken), if it is not. */
  readonly httpError: string | undefined;
  /** Resolves once the daemon has closed (by close(), idle exit or a fatal fault). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

function closeServer(s: Server | NetServer | undefined): Promise<void> {
  if (s === undefined) return Promise.resolve();
  if ("closeIdleConnections" in s) s.closeIdleConnections();
  return new Promise((resolve) => s.close(() => resolve()));
}

/** The servers, the pool and the files of one running daemon; closes them once. */
class Lifecycle {
  pool: EnginePool | undefined;
  sock: NetServer | undefined;
  http: Server | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  #onClosed: () => void = () => {};
  readonly closed = new Promise<void>((r) => {
    this.#onClosed = r;
  });

  constructor(
    private readonly paths: DaemonPaths,
    private readonly idleMs: number,
  ) {}

  /** An authenticated request: the idle timer starts again. */
  readonly touch = (): void => {
    if (!this.idleMs) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.close(), this.idleMs);
    this.#timer.unref();
  };

  readonly close = (): Promise<void> => {
    this.#closing ??= (async () => {
      if (this.#timer) clearTimeout(this.#timer);
      await Promise.all([closeServer(this.sock), closeServer(this.http)]);
      await this.pool?.close();
      removeQuietly(this.paths.socket);
      removeQuietly(this.paths.info);
      releasePid(this.paths.pid);
      this.#onClosed();
    })();
    return this.#closing;
  };
}

/** The HTTP listener, or why it is not up (a port in use leaves the socket door serving). */
async function openHttp(o: DaemonOptions, life: Lifecycle, token: string) {
  if (o.port === null || life.pool === undefined) return { port: null, httpError: undefined };
  try {
    const h = await listenHttp({ pool: life.pool, token, port: o.port, touch: life.touch });
    life.http = h.server;
    return { port: h.port, httpError: undefined };
  } catch (err) {
    return {
      port: null,
      httpError: `127.0.0.1:${o.port}: ${(err as NodeJS.ErrnoException).code ?? "error"}`,
    };
  }
}

/**
 * Starts the daemon in this process. `{ running: pid }` when another live daemon already
 * holds the directory; throws (ERR_HOOK_CONFIG_INVALID) when the state cannot be read.
 */
export async function startDaemon(o: DaemonOptions): Promise<RunningDaemon | { running: number }> {
  const paths = daemonPaths(o.dir);
  prepareDir(o.dir);
  const taken = acquirePid(paths.pid);
  if (!taken.ok) return { running: taken.pid };
  const life = new Lifecycle(paths, o.idleMs ?? 0);
  try {
    const token = ensureToken(paths.token);
    // The shell grammar is loaded before the first event, not by the first Bash call.
    await loadShellParser();
    life.pool = EnginePool.open({ statePath: join(o.dir, "state.json"), configFor: o.configFor });
    // The pid file is ours: a socket file left by a killed predecessor is removed.
    removeQuietly(paths.socket);
    life.sock = await listenSocket({ pool: life.pool, token, path: paths.socket, touch: life.touch });
    const { port, httpError } = await openHttp(o, life, token);
    writeInfo(paths.info, {
      pid: process.pid,
      port,
      socket: paths.socket,
      startedAt: new Date().toISOString(),
      version: ENGINE_VERSION,
      ...(httpError !== undefined ? { httpError } : {}),
    });
    life.touch();
    return {
      pid: process.pid,
      port,
      socket: paths.socket,
      httpError,
      closed: life.closed,
      close: life.close,
    };
  } catch (err) {
    await life.close();
    if (err instanceof HookError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `the hook daemon could not start: ${why}`, {
      cause: err,
    });
  }
}
