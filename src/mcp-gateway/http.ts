// The gateway over Streamable HTTP. Every request is authenticated (`Authorization:
// Bearer <token>`, compared by SHA-256 hash, or `AgentPin <jwt>` verified by the runtime's
// AgentPin authenticator) before the SDK sees it; the session an `initialize` opens is
// bound to that principal, and a later request on the session with another credential
// is refused. Bodies are size-capped, sessions are counted — in all and per principal
// (`maxSessionsPerPrincipal`, ERR_MCP_SESSION_LIMIT 429: one credential never takes the
// shared pool; sessions still opening count too). Every POST — initialize included — is
// served through a fair queue (src/runtime fair-queue.ts): `maxConcurrent` at once, each
// active principal an equal share, its own requests FIFO, at most `maxInFlightPerPrincipal`
// admitted (ERR_MCP_BUSY 429 beyond) and `maxQueued` waiting in all. The listener is
// loopback by default.
// DNS-rebinding protection is on for the configured host.
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AgentIdentityFacts } from "../contracts/index.js";
import { type FairOutcome, FairQueue } from "../runtime/index.js";
import type { Gateway } from "./gateway.js";
import { claimRequestIds } from "./request-ids.js";
import { releaseAnswered } from "./sdk-release.js";
import { sessionServer } from "./server.js";

interface Live {
  transport: StreamableHTTPServerTransport;
  /** Who opened the session: the principal and, for an AgentPin credential, the agent. */
  owner: string;
  principal: string;
  lastSeen: number;
  /** JSON-RPC request ids in flight in this session (request-ids.ts). */
  ids: Set<string>;
}

/** Sessions held or opening, per principal: the fair-share count. */
function heldBy(sessions: Map<string, Live>, opening: Map<string, number>, principal: string): number {
  let n = opening.get(principal) ?? 0;
  for (const live of sessions.values()) if (live.principal === principal) n++;
  return n;
}

function sumOf(opening: Map<string, number>): number {
  let n = 0;
  for (const v of opening.values()) n += v;
  return n;
}

/** Closes sessions idle longer than `idleMs` (clients that left without a DELETE). */
async function sweepIdle(sessions: Map<string, Live>, idleMs: number): Promise<void> {
  const now = Date.now();
  for (const [id, live] of sessions) {
    if (now - live.lastSeen < idleMs) continue;
    sessions.delete(id);
    await live.transport.close().catch(() => undefined);
  }
}

interface Caller {
  principal: string;
  identity?: AgentIdentityFacts;
}

const ownerOf = (c: Caller) => `${c.principal}\u0000${c.identity?.agentId ?? ""}`;

export interface GatewayHttp {
  url: string;
  close(): Promise<void>;
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function reply(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32001, message: `${code}: ${message}`, data: { code } },
    }),
  );
}

/** The principal (and verified agent identity) a request's credential names, or undefined. */
async function authenticate(gw: Gateway, req: IncomingMessage): Promise<Caller | undefined> {
  const h = req.headers.authorization;
  if (typeof h !== "string" || h.length > 16_384) return undefined;
  const [scheme, token] = h.split(" ", 2);
  if (token === undefined || token.length === 0) return undefined;
  if (scheme === "Bearer") {
    const got = digest(token);
    for (const p of gw.loaded.config.http?.principals ?? []) {
      const want = Buffer.from(p.tokenSha256.slice("sha256:".length), "hex");
      if (want.length === got.length && timingSafeEqual(want, got)) return { principal: p.id };
    }
    return undefined;
  }
  if (scheme === "AgentPin" && gw.runtime.agentpin !== undefined) {
    const r = await gw.runtime.agentpin.authenticate(token);
    return r.ok ? { principal: r.principalId, identity: r.identity } : undefined;
  }
  return undefined;
}

async function readBody(req: IncomingMessage, max: number): Promise<unknown | "too-large" | "malformed"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) return "too-large";
    chunks.push(c as Buffer);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return "malformed";
  }
}

/** Aborts when the client leaves before its answer was sent: a request still waiting its turn is dropped. */
function leaving(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/**
 * A request's turn lasts until its answer is sent (or the client left), not until the SDK's
 * handler returns: with JSON responses the SDK answers after handleRequest resolves.
 */
function answered(res: ServerResponse, handle: () => Promise<void>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve, reject) => {
      if (res.destroyed || res.writableFinished) return resolve();
      res.once("close", () => resolve());
      handle().catch(reject);
    });
}

function isInitialize(body: unknown): boolean {
  const one = Array.isArray(body) ? body[0] : body;
  return typeof one === "object" && one !== null && (one as { method?: unknown }).method === "initialize";
}

/** Starts the HTTP listener from `http:` in the configuration. */
export async function serveHttp(gw: Gateway, over: { port?: number } = {}): Promise<GatewayHttp> {
  const cfg = gw.loaded.config.http;
  if (cfg === undefined) throw new Error("the configuration has no http section");
  const sessions = new Map<string, Live>();
  const opening = new Map<string, number>();
  const perPrincipal = cfg.maxSessionsPerPrincipal ?? Math.max(1, Math.floor(cfg.maxSessions / 4));
  // A call still running after a second (a step-up waiting for its timeout, a slow upstream
  // tool) gives its slot back: it waits on nothing the other principals share.
  const fair = new FairQueue({
    concurrency: cfg.maxConcurrent,
    maxPerPrincipal: cfg.maxInFlightPerPrincipal,
    maxQueued: cfg.maxQueued,
    sliceMs: 1000,
  });
  const served = (res: ServerResponse, r: FairOutcome<unknown>) => {
    if (r.ok || r.reason === "aborted" || res.headersSent) return;
    const why =
      r.reason === "principal_full"
        ? `this principal has ${cfg.maxInFlightPerPrincipal} requests in flight`
        : "the gateway's queue is full";
    reply(res, 429, "ERR_MCP_BUSY", `${why}; retry later`);
  };
  // The Host headers a loopback client sends (set once the port is known): DNS rebinding guard.
  let allowedHosts: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if ((req.url ?? "").split("?")[0] !== cfg.path) return reply(res, 404, "ERR_MCP_NOT_FOUND", "not found");
    const caller = await authenticate(gw, req);
    if (caller === undefined)
      return reply(res, 401, "ERR_MCP_AUTH", "a bearer token or AgentPin credential is required");
    const body = req.method === "POST" ? await readBody(req, cfg.maxBodyBytes) : undefined;
    if (body === "too-large") return reply(res, 413, "ERR_MCP_DENIED", `body over ${cfg.maxBodyBytes} bytes`);
    if (body === "malformed") return reply(res, 400, "ERR_MCP_DENIED", "body is not JSON");
    const sid = req.headers["mcp-session-id"];
    if (typeof sid === "string") {
      const live = sessions.get(sid);
      if (live === undefined) return reply(res, 404, "ERR_MCP_NOT_FOUND", "unknown session");
      if (live.owner !== ownerOf(caller))
        return reply(res, 403, "ERR_MCP_AUTH", "the session belongs to another principal");
      live.lastSeen = Date.now();
      if (req.method !== "POST") return live.transport.handleRequest(req, res, body);
      const claim = claimRequestIds(live.ids, body, res);
      if (!claim.ok)
        return reply(
          res,
          400,
          "ERR_MCP_DENIED",
          `request id ${claim.id} is already in flight in this session`,
        );
      // The SDK keeps each answered JSON-mode stream entry (sdk-release.ts): dropped once answered.
      res.once("close", () => releaseAnswered(live.transport));
      const work = answered(res, () => live.transport.handleRequest(req, res, body));
      return served(res, await fair.run(caller.principal, work, leaving(res)));
    }
    if (req.method !== "POST" || !isInitialize(body))
      return reply(res, 400, "ERR_MCP_DENIED", "no session: send initialize first");
    // Answered in the principal's turn, refusals included: a client that sends a refused
    // initialize again at once is paced by its own queue instead of spinning on 429s.
    const work = answered(res, () => initialize(caller, req, res, body));
    served(res, await fair.run(caller.principal, work, leaving(res)));
  };
  const initialize = async (caller: Caller, req: IncomingMessage, res: ServerResponse, body: unknown) => {
    await sweepIdle(sessions, cfg.sessionIdleMs);
    if (sessions.size + sumOf(opening) >= cfg.maxSessions)
      return reply(res, 503, "ERR_MCP_DENIED", "too many sessions");
    if (heldBy(sessions, opening, caller.principal) >= perPrincipal)
      return reply(res, 429, "ERR_MCP_SESSION_LIMIT", `this principal holds ${perPrincipal} sessions`);
    opening.set(caller.principal, (opening.get(caller.principal) ?? 0) + 1);
    try {
      await open(caller, req, res, body);
    } finally {
      const left = (opening.get(caller.principal) ?? 1) - 1;
      if (left <= 0) opening.delete(caller.principal);
      else opening.set(caller.principal, left);
    }
  };
  const open = async (caller: Caller, req: IncomingMessage, res: ServerResponse, body: unknown) => {
    let session: Awaited<ReturnType<Gateway["session"]>>;
    try {
      session = await gw.session(caller.principal, caller.identity);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "ERR_MCP_DENIED";
      return reply(res, 503, "ERR_MCP_DENIED", `cannot open a session: ${code}`);
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (id) => {
        sessions.set(id, {
          transport,
          owner: ownerOf(caller),
          principal: caller.principal,
          lastSeen: Date.now(),
          ids: new Set(),
        });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      session.end();
    };
    await sessionServer(session).connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const server: HttpServer = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "ERR_MCP_DENIED", "internal error");
      else res.end();
    });
  });
  server.requestTimeout = 330_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(over.port ?? cfg.port, cfg.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  allowedHosts = [`${host}:${port}`, ...(cfg.host === "127.0.0.1" ? [`localhost:${port}`] : [])];
  return {
    url: `http://${host}:${port}${cfg.path}`,
    async close() {
      for (const live of sessions.values()) await live.transport.close().catch(() => undefined);
      sessions.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
