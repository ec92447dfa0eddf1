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
import { HookError } from "../contracts/index.js";
import { EnginePool, type EnginePoolOptions } from "./daemon-engines.js";
import {
  acquirePid,
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

/**
 * Starts the daemon in this process. `{ running: pid }` when another live daemon already
 * holds the directory; throws (ERR_HOOK_CONFIG_INVALID) when the state cannot be read.
 */
export async function startDaemon(o: DaemonOptions): Promise<RunningDaemon | { running: number }> {
  const paths = daemonPaths(o.dir);
  prepareDir(o.dir);
  const taken = acquirePid(paths.pid);
  if (!taken.ok) return { running: taken.pid };
  let pool: EnginePool | undefined;
  let sock: NetServer | undefined;
  let http: Server | undefined;
  const release = () => {
    removeQuietly(paths.socket);
    removeQuietly(paths.info);
    releasePid(paths.pid);
  };
  try {
    const token = ensureToken(paths.token);
    pool = EnginePool.open({ statePath: `${o.dir}/state.json`, configFor: o.configFor });
    let timer: NodeJS.Timeout | undefined;
    let closing: Promise<void> | undefined;
    let onClosed: () => void = () => {};
    const closed = new Promise<void>((r) => {
      onClosed = r;
    });
    const close = (): Promise<void> => {
      closing ??= (async () => {
        if (timer) clearTimeout(timer);
        await Promise.all([closeServer(sock), closeServer(http)]);
        await pool?.close();
        release();
        onClosed();
      })();
      return closing;
    };
    const touch = () => {
      if (!o.idleMs) return;
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void close(), o.idleMs);
      timer.unref();
    };
    // The pid file is ours: a socket file left by a killed predecessor is removed.
    removeQuietly(paths.socket);
    sock = await listenSocket({ pool, token, path: paths.socket, touch });
    let port: number | null = null;
    let httpError: string | undefined;
    if (o.port !== null) {
      try {
        const h = await listenHttp({ pool, token, port: o.port, touch });
        http = h.server;
        port = h.port;
      } catch (err) {
        httpError = `127.0.0.1:${o.port}: ${(err as NodeJS.ErrnoException).code ?? "error"}`;
      }
    }
    writeInfo(paths.info, {
      pid: process.pid,
      port,
      socket: paths.socket,
      startedAt: new Date().toISOString(),
      version: ENGINE_VERSION,
      ...(httpError !== undefined ? { httpError } : {}),
    });
    touch();
    return { pid: process.pid, port, socket: paths.socket, httpError, closed, close };
  } catch (err) {
    await Promise.all([closeServer(sock), closeServer(http)]);
    await pool?.close();
    release();
    if (err instanceof HookError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new HookError("ERR_HOOK_CONFIG_INVALID", `the hook daemon could not start: ${why}`, {
      cause: err,
    });
  }
}
