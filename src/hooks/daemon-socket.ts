// The hook daemon's Unix socket, for the lean command entry (bin/warden-hook.js). The socket
// file is 0600 in the 0700 state directory. One exchange per connection:
//   client → {"v":1,"token":"…","host":"claude-code","env":{"CLAUDE_PROJECT_DIR":"/abs"}}\n<raw event>
//            then closes its side (the event is the host's stdin, byte for byte; `env` holds
//            the entry's *_PROJECT_DIR variables, of which the host adapter's workspaceEnv
//            names the workspace, as for the one-shot `warden hooks <host>`)
//   daemon → {"exitCode":0|2,"stdout":"…","stderr":"…"}\n and closes
// The header line (at most 8 KiB) is checked first: a wrong or missing token is answered
// exit 2 with ERR_HOOK_UNAUTHENTICATED and the connection closed; nothing is journaled. An
// event over the limit is answered exit 2 (ERR_HOOK_EVENT_TOO_LARGE). An event that is not a
// host event reaches the engine, which refuses it (journaled, fail closed) as the one-shot does.
import { chmodSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { EnginePool } from "./daemon-engines.js";
import { tokensEqual } from "./daemon-files.js";
import { type DaemonHost, daemonHost } from "./daemon-hosts.js";
import { MAX_EVENT_BYTES } from "./daemon-http.js";
import type { HostAnswer } from "./host-adapter-common.js";

const MAX_HEADER_BYTES = 8 * 1024;

export interface DaemonSocketOptions {
  pool: EnginePool;
  token: string;
  path: string;
  touch?: () => void;
  maxBytes?: number;
}

interface Header {
  token: string;
  host: string;
  env: Record<string, unknown>;
  /** The event the host's command line names (`--event`: Copilot's payloads do not). */
  event?: string;
  cloudAgent?: boolean;
}

function parseHeader(line: string): Header | undefined {
  try {
    const h = JSON.parse(line) as Record<string, unknown>;
    if (h.v !== 1 || typeof h.token !== "string" || typeof h.host !== "string") return undefined;
    if (h.event !== undefined && (typeof h.event !== "string" || !/^[A-Za-z]{1,64}$/.test(h.event)))
      return undefined;
    const env = typeof h.env === "object" && h.env !== null ? (h.env as Record<string, unknown>) : {};
    return {
      token: h.token,
      host: h.host,
      env,
      ...(typeof h.event === "string" ? { event: h.event } : {}),
      ...(h.cloudAgent === true ? { cloudAgent: true } : {}),
    };
  } catch {
    return undefined;
  }
}

function workspaceOf(host: DaemonHost, env: Record<string, unknown>): string | undefined {
  const name = host.adapter.workspaceEnv;
  const v = name !== undefined && Object.hasOwn(env, name) ? env[name] : undefined;
  return typeof v === "string" && v.startsWith("/") ? v : undefined;
}

const refusal = (code: string, message: string): HostAnswer => ({
  exitCode: 2,
  stderr: `Warden: ${code}: ${message} (fail-closed)\n`,
});

function reply(sock: Socket, answer: HostAnswer): void {
  if (sock.destroyed) return;
  sock.end(`${JSON.stringify(answer)}\n`);
}

/** Reads one exchange off a connection and answers it. */
function serve(o: DaemonSocketOptions, sock: Socket): void {
  const max = o.maxBytes ?? MAX_EVENT_BYTES;
  let buf: Buffer = Buffer.alloc(0);
  let header: Header | undefined;
  let done = false;
  const finish = (answer: HostAnswer | Promise<HostAnswer>) => {
    done = true;
    sock.removeAllListeners("data");
    Promise.resolve(answer).then(
      (a) => reply(sock, a),
      () => reply(sock, refusal("ERR_HOOK_ENGINE_FAULT", "the hook daemon failed")),
    );
  };
  sock.setTimeout(30_000, () => sock.destroy());
  sock.on("error", () => sock.destroy());
  sock.on("data", (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    if (header === undefined) {
      const nl = buf.indexOf(10);
      if (nl === -1) {
        if (buf.length > MAX_HEADER_BYTES) finish(refusal("ERR_HOOK_EVENT_INVALID", "no header line"));
        return;
      }
      const h = parseHeader(buf.subarray(0, nl).toString("utf8"));
      if (h === undefined) return finish(refusal("ERR_HOOK_EVENT_INVALID", "a malformed header"));
      if (!tokensEqual(h.token, o.token))
        return finish(refusal("ERR_HOOK_UNAUTHENTICATED", "the hook daemon's token is required"));
      header = h;
      buf = buf.subarray(nl + 1);
      o.touch?.();
    }
    if (buf.length > max) finish(refusal("ERR_HOOK_EVENT_TOO_LARGE", `a hook event is at most ${max} bytes`));
  });
  sock.on("end", () => {
    if (done) return;
    if (header === undefined) return finish(refusal("ERR_HOOK_EVENT_INVALID", "no header line"));
    const host = daemonHost(header.host, header);
    if (host === undefined) return finish(refusal("ERR_HOOK_POINT_UNKNOWN", `unknown host ${header.host}`));
    finish(o.pool.answer(host, workspaceOf(host, header.env), buf.toString("utf8")));
  });
}

/** Listens on the socket path (which must not exist) and makes it 0600. */
export function listenSocket(o: DaemonSocketOptions): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (sock) => serve(o, sock));
  return new Promise((resolve, reject) => {
    // The directory is 0700 already; the umask closes the moment before chmod as well.
    const umask = process.umask(0o177);
    server.once("error", (err) => {
      process.umask(umask);
      reject(err);
    });
    server.listen(o.path, () => {
      process.umask(umask);
      server.removeAllListeners("error");
      // A fault of one connection is that connection's; the listener stays up.
      server.on("error", () => {});
      chmodSync(o.path, 0o600);
      resolve(server);
    });
  });
}
