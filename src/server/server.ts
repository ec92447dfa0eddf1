// The sidecar HTTP server (Ari Kernel §12 sidecar mode): the agent's only path to its
// tools. A short assembly of fastify plugins: the edge (strict JSON, in-flight gauge,
// shutdown refusal, the one error shape), auth (principal from the credential, roles,
// per-credential rate limit), and one route module per resource (routes/). Shutdown
// stops accepting, lets in-flight calls finish (cancelling approval waits after a grace
// period), then flushes the journal.
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { auditViews, consolePlugin } from "../console/index.js";
import type { ReplayHost } from "../evidence/index.js";
import { FairQueue } from "../runtime/index.js";
import { AgentPinIdentities } from "./agentpin-auth.js";
import { Authenticator } from "./auth.js";
import { authPlugin, RateLimiter } from "./auth-plugin.js";
import { dropIdleConnections, edgePlugin, edgeState } from "./edge.js";
import { type ApiErrorCode, ERROR_STATUS } from "./errors.js";
import { SidecarMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { mountRoutes } from "./routes/index.js";
import type { SidecarRuntime } from "./runtime.js";

export interface SidecarServer {
  readonly app: FastifyInstance;
  readonly runtime: SidecarRuntime;
  /** Starts listening (host/port from the configuration unless given); resolves with the URL. */
  listen(at?: { host?: string; port?: number }): Promise<string>;
  /** The listening URL (after listen). */
  readonly url: string | undefined;
  /** Every route served, as "METHOD /path" (fastify's automatic HEAD routes excluded). */
  readonly routes: readonly string[];
  /** Graceful shutdown: stop accepting, finish in-flight calls, flush and close the journal. */
  close(): Promise<void>;
}

export interface SidecarServerOptions {
  /** Fastify logger (default off). */
  logger?: boolean;
  /**
   * How the entry point opens a runtime over a recorded bundle, for the console's what-if
   * (`warden sidecar` passes the CLI's replay host); without it what-if answers
   * ERR_CONSOLE_VIEW_UNAVAILABLE.
   */
  replayHost?: ReplayHost;
}

export function createSidecarServer(
  runtime: SidecarRuntime,
  options: SidecarServerOptions = {},
): SidecarServer {
  const cfg = runtime.loaded.config;
  const limits = cfg.limits;
  const metrics = new SidecarMetrics({ isKnownTool: (n) => runtime.contracts?.get(n) !== undefined });
  const shutdown = new AbortController();
  const state = edgeState();
  let closing: Promise<void> | undefined;
  let url: string | undefined;

  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: limits.bodyBytes,
    return503OnClosing: false,
    requestTimeout: limits.requestTimeoutMs,
    ...(cfg.tls ? { https: { cert: readFileSync(cfg.tls.cert), key: readFileSync(cfg.tls.key) } } : {}),
  }) as unknown as FastifyInstance;

  const routes: string[] = [];
  app.addHook("onRoute", (r) => {
    for (const m of [r.method].flat()) if (m !== "HEAD") routes.push(`${m} ${r.url}`);
  });
  edgePlugin(app, {
    bodyBytes: limits.bodyBytes,
    jsonDepth: limits.jsonDepth,
    metrics,
    state,
    tls: cfg.tls !== undefined,
  });
  const rolesOf = (id: string) => runtime.loaded.gate.principals[id]?.roles.slice() ?? [];
  const auth = new Authenticator(cfg.auth, rolesOf);
  authPlugin(app, {
    auth,
    agentpin: runtime.agentpin === undefined ? undefined : new AgentPinIdentities(runtime.agentpin, rolesOf),
    limiter: new RateLimiter(limits.rateLimitPerMinute, undefined, limits.rateLimitDelayMs),
    metricsPublic: cfg.metrics.public,
  });
  // The shared decision work is served per principal, round-robin with equal shares (issue 37).
  // Its calls wait on nothing but the Gate and the journal (a step-up is returned, not
  // awaited), which are the shared work itself: a slot is held to the end (no slice).
  const fair = new FairQueue({
    concurrency: limits.maxConcurrent,
    maxPerPrincipal: limits.maxInFlightPerPrincipal,
    maxQueued: limits.maxQueued,
    sliceMs: 0,
  });
  mountRoutes(app, { runtime, metrics, state, shutdown: shutdown.signal, openApi: openApiDocument, fair });
  // Protective state is durable before the answer that caused it leaves (issue 36): the
  // denial that quarantined its principal is sent once the quarantine is in the store (the
  // shared one in distributed mode), so a run started on another replica right after the
  // answer is refused. With APAE, the trust updates the call queued (its decision's and its
  // outcome's) are applied first: a trust revocation is in the shared store (its floor, read
  // by every replica's token check) and a trust quarantine is the principal's before the
  // answer. A save that failed was reported (onError); the state stays in force here (fail
  // closed).
  const principals = runtime.gate.sessions.principals;
  const apae = runtime.apae;
  // Callback-style: the common answer, with nothing being saved, goes out without a promise
  // and microtask turns of its own.
  app.addHook("onSend", (_req, _reply, payload, done) => {
    if (apae === undefined && !principals.saving) return done(null, payload);
    (async () => {
      await apae?.applied();
      await principals.flush();
    })().then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });
  if (cfg.console.enabled && runtime.consoleKeys !== undefined) {
    consolePlugin(app, {
      runtime: runtime.composed,
      config: cfg.console,
      tls: cfg.tls !== undefined,
      // Operator credentials only: an agent token never opens the console.
      signIn: (token) => {
        const r = auth.authenticate(`Bearer ${token}`, undefined);
        return r.ok && r.identity.kind === "operator" ? r.identity : undefined;
      },
      keys: runtime.consoleKeys,
      ring: runtime.approverKeys,
      ...auditViews(options.replayHost !== undefined ? { replayHost: options.replayHost } : {}),
      statusOf: (code) =>
        Object.hasOwn(ERROR_STATUS, code) ? ERROR_STATUS[code as ApiErrorCode] : undefined,
    });
  }

  return {
    app,
    runtime,
    get url() {
      return url;
    },
    routes,
    async listen(at = {}) {
      const host = at.host ?? cfg.host;
      await app.listen({ host, port: at.port ?? cfg.port });
      const addr = app.server.address() as AddressInfo;
      const h = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
      url = `${cfg.tls ? "https" : "http"}://${h}:${addr.port}`;
      return url;
    },
    close() {
      state.closing = true;
      closing ??= (async () => {
        // Blocked calls (approval waits, slow tools) get the grace period, then are cancelled.
        const timer = setTimeout(() => shutdown.abort(new Error("shutting down")), cfg.shutdown.graceMs);
        try {
          const closed = app.close();
          dropIdleConnections(state);
          await closed;
        } finally {
          clearTimeout(timer);
          await runtime.close();
        }
      })();
      return closing;
    },
  };
}

/** Opens the runtime for a configuration and starts listening. */
export async function startSidecar(
  runtime: SidecarRuntime,
  at: { host?: string; port?: number } = {},
  options: SidecarServerOptions = {},
): Promise<SidecarServer> {
  const server = createSidecarServer(runtime, options);
  try {
    await server.listen(at);
  } catch (err) {
    await server.close();
    throw err;
  }
  return server;
}
