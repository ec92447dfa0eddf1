// The edge plugin: what every request passes before and after its route. Bodies are
// parsed only as strict JSON (size and depth bounded, duplicate keys and __proto__
// refused — two parsers that disagree on duplicates is a classic bypass; numbers outside
// the finite range refused: ERR_CANON_NON_FINITE_NUMBER), the in-flight gauge and shutdown refusal, response
// counting, and the one error answer shape from the one error table.
import type { Socket } from "node:net";
import type { Context } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { parseStrictJson } from "../contracts/index.js";
import { contextFromTraceparent } from "../gate/index.js";
import { ApiError, toApiError } from "./errors.js";
import type { SidecarMetrics } from "./metrics.js";

export interface EdgeState {
  /** Requests being answered now. */
  inFlight: number;
  /** Set once shutdown began: new requests are refused, kept-alive connections closed. */
  closing: boolean;
  /** Open connections and how many requests each is answering now. */
  readonly sockets: Map<Socket, number>;
}

// W3C Trace Context: a valid incoming `traceparent` is the parent of the Gate's spans and
// names the journal's trace (unless the body names one); it is returned on the response,
// replaced by the action span's own when a tracer records one (routes/calls.ts).
const incoming = new WeakMap<FastifyRequest, Context>();

/** The trace context a request brought in its `traceparent` header, when valid. */
export function traceParentOf(req: FastifyRequest): Context | undefined {
  return incoming.get(req);
}

export function edgeState(): EdgeState {
  return { inFlight: 0, closing: false, sockets: new Map() };
}

/**
 * Closes every connection that is not answering a request. Node's closeIdleConnections
 * (which fastify calls on close) skips a kept-alive connection the client opened but never
 * sent a request on, and such a socket would hold shutdown open until its timeout; busy
 * connections finish their answer (sent with `connection: close`) and close themselves.
 */
export function dropIdleConnections(state: EdgeState): void {
  for (const [socket, busy] of state.sockets) if (busy === 0) socket.destroy();
}

export interface EdgePluginOptions {
  bodyBytes: number;
  jsonDepth: number;
  metrics: SidecarMetrics;
  state: EdgeState;
}

export function edgePlugin(app: FastifyInstance, o: EdgePluginOptions & { tls: boolean }): void {
  const { state, metrics } = o;
  // Over TLS the request's socket is the TLS socket, announced by secureConnection.
  app.server.on(o.tls ? "secureConnection" : "connection", (socket: Socket) => {
    state.sockets.set(socket, 0);
    socket.once("close", () => state.sockets.delete(socket));
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    try {
      done(null, parseStrictJson(body as string, { maxLength: o.bodyBytes, maxDepth: o.jsonDepth }));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // The per-request hooks are callback-style, not async: an async hook costs a promise
  // and a microtask turn per request per hook, which on /v1/decide is a measurable share
  // of everything the HTTP layer adds (bench/sidecar.ts).
  app.addHook("onRequest", (req, reply, done) => {
    state.inFlight++;
    const socket = req.raw.socket;
    const busy = state.sockets.get(socket);
    if (busy !== undefined) state.sockets.set(socket, busy + 1);
    // 'close' fires once per response, finished or aborted: the gauge cannot leak.
    reply.raw.on("close", () => {
      state.inFlight--;
      const n = state.sockets.get(socket);
      if (n !== undefined) state.sockets.set(socket, n - 1);
    });
    if (state.closing) {
      reply.header("connection", "close");
      done(new ApiError("ERR_SERVER_SHUTTING_DOWN", "the server is shutting down"));
      return;
    }
    const tp = req.headers.traceparent;
    if (typeof tp === "string") {
      const ctx = contextFromTraceparent(tp);
      if (ctx !== undefined) {
        incoming.set(req, ctx);
        reply.header("traceparent", tp.toLowerCase());
      }
    }
    done();
  });
  app.addHook("onSend", (_req, reply, payload, done) => {
    // During shutdown a kept-alive connection is not reused.
    if (state.closing) reply.header("connection", "close");
    // Counted here rather than in onResponse: every reply passes through onSend, and an
    // onResponse hook makes fastify attach two listeners and read the clock twice per request.
    metrics.response(reply.statusCode);
    done(null, payload);
  });

  app.setErrorHandler((err, _req, reply) => {
    const e = toApiError(err);
    if (e.code === "ERR_SERVER_INTERNAL") app.log.error(err);
    // A run dropped under a call in flight (distributed mode: adopted elsewhere) is logged.
    else if (e.code === "ERR_CONTEXT_SESSION_CLOSED") app.log.warn({ code: e.code, msg: e.message });
    void reply.code(e.status).headers(e.headers).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError(
      "ERR_SERVER_NOT_FOUND",
      `no route ${req.method} ${req.url.split("?")[0]?.slice(0, 200)}`,
    );
    void reply.code(e.status).send(e.body());
  });
}
