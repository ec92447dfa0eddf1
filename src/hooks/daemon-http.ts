// The hook daemon's HTTP listener: Claude Code's `http` hook type (and any host with one)
// POSTs the hook's JSON to http://127.0.0.1:PORT/hooks/<host>. Bound to loopback only.
// Refused, in this order, before any body is read and with nothing journaled:
//   a browser (an Origin header)                          403 ERR_HOOK_ORIGIN_REFUSED
//   no token, or not this state directory's token         401 ERR_HOOK_UNAUTHENTICATED
//   a Host header that is not the loopback listener's     421 (DNS rebinding)
//   not POST /hooks/<known host>                          404 / 405
//   a declared or streamed body over the limit            413
//   a body that is not a JSON object                      400
// The token travels as `Authorization: Bearer <token>` (Claude Code fills the header from an
// environment variable listed in the hook's allowedEnvVars) and is compared in constant time.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseStrictJson } from "../contracts/index.js";
import type { EnginePool } from "./daemon-engines.js";
import { tokensEqual } from "./daemon-files.js";
import { daemonHost } from "./daemon-hosts.js";
import { isObject } from "./host-adapter-common.js";

/** The largest hook event accepted (the one-shot's stdin limit). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export interface DaemonHttpOptions {
  pool: EnginePool;
  token: string;
  /** 0: an ephemeral port (tests, the bench). */
  port: number;
  /** Called on every authenticated request (the idle timer). */
  touch?: () => void;
  maxBytes?: number;
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  res.setHeader("connection", "close");
  send(res, status, JSON.stringify({ error: { code, message } }));
}

function bearer(req: IncomingMessage): string {
  const h = req.headers.authorization;
  return typeof h === "string" && h.startsWith("Bearer ") ? h.slice(7).trim() : "";
}

function loopbackHost(req: IncomingMessage, port: number): boolean {
  const host = (req.headers.host ?? "").toLowerCase();
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host);
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | "too-large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > max) {
        resolve("too-large");
        req.pause();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

async function handle(o: DaemonHttpOptions, port: number, req: IncomingMessage, res: ServerResponse) {
  if (req.headers.origin !== undefined)
    return refuse(res, 403, "ERR_HOOK_ORIGIN_REFUSED", "requests from a browser are refused");
  if (!tokensEqual(bearer(req), o.token))
    return refuse(res, 401, "ERR_HOOK_UNAUTHENTICATED", "the hook daemon's token is required");
  if (!loopbackHost(req, port))
    return refuse(res, 421, "ERR_HOOK_UNAUTHENTICATED", "the Host header is not this loopback listener");
  o.touch?.();
  const m = /^\/hooks\/([a-z][a-z0-9-]{0,31})$/.exec(req.url ?? "");
  const host = m?.[1] !== undefined ? daemonHost(m[1]) : undefined;
  if (host === undefined) return refuse(res, 404, "ERR_HOOK_POINT_UNKNOWN", "POST /hooks/<host>");
  if (req.method !== "POST") return refuse(res, 405, "ERR_HOOK_EVENT_INVALID", "POST only");
  const max = o.maxBytes ?? MAX_EVENT_BYTES;
  if (Number(req.headers["content-length"] ?? 0) > max)
    return refuse(res, 413, "ERR_HOOK_EVENT_TOO_LARGE", `a hook event is at most ${max} bytes`);
  const body = await readBody(req, max);
  if (body === "too-large")
    return refuse(res, 413, "ERR_HOOK_EVENT_TOO_LARGE", `a hook event is at most ${max} bytes`);
  const text = body.toString("utf8");
  let parsed: unknown;
  try {
    parsed = parseStrictJson(text);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) return refuse(res, 400, "ERR_HOOK_EVENT_INVALID", "the body is not a JSON object");
  const answer = await o.pool.answer(host, undefined, text);
  const reply = host.http(answer, host.adapter.eventName(parsed));
  send(res, reply.status, reply.body);
}

export interface DaemonHttp {
  server: Server;
  port: number;
}

/** Listens on 127.0.0.1:port; rejects when the port cannot be bound. */
export function listenHttp(o: DaemonHttpOptions): Promise<DaemonHttp> {
  let port = o.port;
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    handle(o, port, req, res).catch(() => {
      if (!res.headersSent) refuse(res, 500, "ERR_HOOK_ENGINE_FAULT", "the hook daemon failed");
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, "127.0.0.1", () => {
      server.off("error", reject);
      server.on("error", () => {});
      port = (server.address() as AddressInfo).port;
      resolve({ server, port });
    });
  });
}
