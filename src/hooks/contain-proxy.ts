// The egress proxy of a contained shell call (docs/hooks-containment.md "Egress"): an HTTP
// proxy on a Unix socket, run by contain-run.ts outside the sandbox; the sandbox has only
// loopback, and its init bridges 127.0.0.1:<port> to this socket. It serves HTTP CONNECT
// (TLS and any tunnelled protocol) and plain HTTP with an absolute URI, lets through only
// destinations on the allowlist (`egressAllowed`: ports 80 and 443 of a listed host, or a
// listed `host:port`), refuses IP literals, loopback and private addresses unless listed
// exactly, and records every destination, allowed or refused, as a JSON line (fsync'd).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { connect, isIP, type LookupFunction, type Socket } from "node:net";
import { egressAllowed } from "./coding-profile-match.js";

/** One destination the proxy saw. */
export interface EgressRecord {
  at: string;
  host: string;
  port: number;
  method: string;
  allowed: boolean;
  reason: string;
}

export interface EgressProxyOptions {
  /** Unix socket path to listen on (its directory should be private). */
  socket: string;
  egress: readonly string[];
  /** JSON-lines journal file (appended, fsync'd per record); none: records are kept in memory only. */
  log?: string;
  /** At most this many records are written (default 1000); then one `truncated` record. */
  maxRecords?: number;
  /** Resolver (tests); default the system's. */
  lookup?: typeof dnsLookup;
}

export interface EgressProxy {
  readonly records: readonly EgressRecord[];
  close(): Promise<void>;
}

const MAX_HEADER_BYTES = 16 * 1024;

/** Loopback, private, link-local, CGNAT, unspecified and multicast addresses (v4 and v6). */
export function isInternalAddress(ip: string): boolean {
  const v4 = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      a >= 224 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168)
    );
  }
  const s = ip.toLowerCase();
  return s === "::" || s === "::1" || /^f[cd]/.test(s) || /^fe[89ab]/.test(s) || s.startsWith("ff");
}

type Judgement = { allowed: true } | { allowed: false; reason: string };

/** Whether the allowlist lets `host:port` through (before any name is resolved). */
export function judgeDestination(egress: readonly string[], host: string, port: number): Judgement {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "" || h.length > 253 || !/^[a-z0-9.:_-]+$/.test(h))
    return { allowed: false, reason: "malformed host" };
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    return { allowed: false, reason: "malformed port" };
  const withPort = isIP(h) === 6 ? `[${h}]:${port}` : `${h}:${port}`;
  if (egressAllowed({ egress }, withPort)) return { allowed: true };
  const listed = egressAllowed({ egress }, h);
  if (isIP(h) !== 0 && !egress.some((e) => e.toLowerCase() === h))
    return { allowed: false, reason: "IP literal not on the allowlist" };
  if (!listed) return { allowed: false, reason: "host not on the allowlist" };
  if (port !== 443 && port !== 80) return { allowed: false, reason: `port ${port} not allowed for ${h}` };
  return { allowed: true };
}

/** A resolver that refuses internal addresses unless the name or the address is listed exactly. */
function guardedLookup(egress: readonly string[], base: typeof dnsLookup): LookupFunction {
  const exact = new Set(egress.map((e) => e.toLowerCase()));
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 4);
      const list = addresses as unknown as LookupAddress[];
      const ok = list.filter(
        (a) => !isInternalAddress(a.address) || exact.has(hostname.toLowerCase()) || exact.has(a.address),
      );
      const first = ok[0];
      if (first === undefined) {
        const e = Object.assign(new Error(`${hostname} resolves to an internal address`), { code: "EACCES" });
        return callback(e, "", 4);
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, ok);
      callback(null, first.address, first.family);
    });
  };
}

class Recorder {
  readonly records: EgressRecord[] = [];
  #fd: number | undefined;
  #written = 0;
  constructor(
    private readonly path: string | undefined,
    private readonly max: number,
  ) {}
  add(r: Omit<EgressRecord, "at">): void {
    const rec = { at: new Date().toISOString(), ...r, host: r.host.slice(0, 253) };
    if (this.records.length < this.max) this.records.push(rec);
    if (this.path === undefined || this.#written > this.max) return;
    this.#fd ??= openSync(this.path, "a", 0o600);
    const line =
      this.#written === this.max ? { ...rec, host: "(truncated)", reason: "record limit reached" } : rec;
    this.#written++;
    writeSync(this.#fd, `${JSON.stringify(line)}\n`);
    fsyncSync(this.#fd);
  }
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function refuse(socket: Socket, status: string, why: string): void {
  const body = `Warden: ${why}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** `host:port` of a CONNECT target. */
function connectTarget(url: string | undefined): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/]+):(\d{1,5})$/.exec(url ?? "");
  return m ? { host: (m[1] ?? "").replace(/^\[|\]$/g, ""), port: Number(m[2]) } : undefined;
}

const HOP = new Set([
  "connection",
  "proxy-connection",
  "proxy-authorization",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "transfer-encoding",
]);

function forwardHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
}

type Ctx = { egress: readonly string[]; rec: Recorder; lookup: LookupFunction; tunnels: Set<Socket> };

function onConnect(c: Ctx, req: IncomingMessage, client: Socket, head: Buffer): void {
  client.on("error", () => client.destroy());
  c.tunnels.add(client);
  client.once("close", () => c.tunnels.delete(client));
  const t = connectTarget(req.url);
  const host = t?.host ?? String(req.url ?? "").slice(0, 253);
  const j = t
    ? judgeDestination(c.egress, t.host, t.port)
    : ({ allowed: false, reason: "malformed CONNECT target" } as const);
  if (!j.allowed || t === undefined) {
    c.rec.add({
      host,
      port: t?.port ?? 0,
      method: "CONNECT",
      allowed: false,
      reason: j.allowed ? "malformed" : j.reason,
    });
    refuse(client, "403 Forbidden", `egress to ${host} refused (${j.allowed ? "malformed" : j.reason})`);
    return;
  }
  const upstream = connect({ host: t.host, port: t.port, lookup: c.lookup });
  upstream.once("connect", () => {
    c.rec.add({ host, port: t.port, method: "CONNECT", allowed: true, reason: "allowlist" });
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.once("error", (err) => {
    c.rec.add({
      host,
      port: t.port,
      method: "CONNECT",
      allowed: false,
      reason: `upstream: ${err.message.slice(0, 200)}`,
    });
    if (client.writable && !client.destroyed)
      refuse(client, "502 Bad Gateway", `${host}: ${err.message.slice(0, 200)}`);
  });
  client.once("close", () => upstream.destroy());
}

function onRequest(c: Ctx, req: IncomingMessage, res: ServerResponse): void {
  let url: URL | undefined;
  try {
    url = new URL(req.url ?? "");
  } catch {
    url = undefined;
  }
  const method = (req.method ?? "GET").slice(0, 16);
  const deny = (status: number, host: string, port: number, reason: string) => {
    c.rec.add({ host, port, method, allowed: false, reason });
    res.writeHead(status, { "content-type": "text/plain", connection: "close" }).end(`Warden: ${reason}\n`);
  };
  if (url === undefined || url.protocol !== "http:") {
    deny(400, "", 0, "not an absolute http:// URI");
    return;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port === "" ? 80 : Number(url.port);
  const j = judgeDestination(c.egress, host, port);
  if (!j.allowed) {
    deny(403, host, port, `egress to ${host} refused (${j.reason})`);
    return;
  }
  c.rec.add({ host, port, method, allowed: true, reason: "allowlist" });
  const up = request(
    {
      host,
      port,
      method,
      path: `${url.pathname}${url.search}`,
      headers: forwardHeaders(req),
      lookup: c.lookup,
    },
    (r) => {
      res.writeHead(r.statusCode ?? 502, forwardHeaders(r));
      r.pipe(res);
    },
  );
  up.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`Warden: ${host}: ${err.message.slice(0, 200)}\n`);
  });
  req.pipe(up);
}

/** Starts the proxy; resolves once it listens on the socket. */
export function startEgressProxy(o: EgressProxyOptions): Promise<EgressProxy> {
  const rec = new Recorder(o.log, o.maxRecords ?? 1000);
  const lookup = guardedLookup(o.egress, o.lookup ?? dnsLookup);
  const c: Ctx = { egress: o.egress, rec, lookup, tunnels: new Set() };
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => onRequest(c, req, res));
  server.headersTimeout = 30_000;
  server.requestTimeout = 0;
  server.on("connect", (req, socket, head) => onConnect(c, req, socket as Socket, head));
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.socket, () => {
      server.off("error", reject);
      resolve({
        records: rec.records,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => {
              rec.close();
              done();
            });
            server.closeAllConnections();
            for (const t of c.tunnels) t.destroy();
          }),
      });
    });
  });
}
