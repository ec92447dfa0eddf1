// The sidecar HTTP server (Ari Kernel §12 sidecar mode): the agent's only path to its
// tools. Every call is authenticated from its credential (never its body), parsed
// strictly (size, depth, duplicate keys), rate limited per credential, decided by the
// Gate, executed only with the Gate's ticket, and journaled; a journal or policy fault
// is a 503, never an execution. Shutdown stops accepting, lets in-flight calls finish
// (cancelling approval waits after a grace period), then flushes the journal.
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type onRequestHookHandler,
} from "fastify";
import type { z } from "zod";
import { parseGateRequest, parseStrictJson } from "../contracts/index.js";
import { Keyring } from "../crypto/index.js";
import {
  type ApprovalVerdict,
  approvalOf,
  faultOf,
  type GateOutcome,
  runTraceId,
  termsOf,
  ticketOf,
} from "../gate/index.js";
import { signHead, verifyJournal } from "../journal/index.js";
import { classifyContract } from "../tools/index.js";
import { Authenticator, type Identity } from "./auth.js";
import { ApiError, toApiError } from "./errors.js";
import { SidecarMetrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import type { SidecarRuntime } from "./runtime.js";
import {
  ApprovalDecisionBody,
  ApprovalIdParam,
  CallBody,
  JournalQueryString,
  RunIdParam,
  VerifyBody,
} from "./schemas.js";

type Access = "none" | "agent" | "operator" | "any" | "metrics";

declare module "fastify" {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    identity?: Identity;
  }
}

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

/**
 * Per-credential token bucket: `perMinute` requests, refilled continuously. Keyed by the
 * Authenticator's identity object, which is one frozen object per configured credential.
 */
class RateLimiter {
  readonly #buckets = new Map<Identity, { tokens: number; at: number }>();
  constructor(
    readonly perMinute: number,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** Milliseconds to wait, or 0 when the request may proceed. */
  take(key: Identity): number {
    const t = this.now();
    let b = this.#buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.perMinute, at: t };
      this.#buckets.set(key, b);
    }
    b.tokens = Math.min(this.perMinute, b.tokens + ((t - b.at) * this.perMinute) / 60_000);
    b.at = t;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - b.tokens) * 60_000) / this.perMinute);
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ApiError(
      "ERR_SERVER_REQUEST_INVALID",
      `${what} invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return r.data;
}

function denialMessage(o: GateOutcome): string {
  const reasons = o.matchedRules.map((r) => r.reason).filter((r): r is string => r !== undefined);
  return reasons.length > 0 ? reasons.join("; ") : o.reasonCodes.join(", ");
}

function decisionView(o: GateOutcome): Record<string, unknown> {
  return {
    decisionId: o.decisionId,
    decision: o.decision,
    policyDecision: o.policyDecision,
    reasonCodes: o.reasonCodes,
    matchedRules: o.matchedRules.map((r) => ({
      id: r.id,
      source: r.source,
      decision: r.decision,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    })),
    obligations: o.obligations,
    parameters: o.parameters,
    ...(o.originalParameters !== undefined ? { originalParameters: o.originalParameters } : {}),
    ...(o.changes !== undefined ? { changes: o.changes } : {}),
    ...termsOf(o),
    taint: o.taint,
    journalSeqs: o.journalSeqs,
    ...(o.policyBundleHash !== undefined ? { policyBundleHash: o.policyBundleHash } : {}),
  };
}

function faultError(o: GateOutcome): ApiError | undefined {
  const fault = faultOf(o);
  if (fault === "journal_unavailable") {
    return new ApiError(
      "ERR_SERVER_JOURNAL_UNAVAILABLE",
      "the decision could not be recorded; nothing was executed",
      { details: { decisionId: o.decisionId } },
    );
  }
  if (fault === "policy_error") {
    return new ApiError("ERR_SERVER_POLICY_ERROR", "policy could not be evaluated; nothing was executed", {
      details: { decisionId: o.decisionId },
    });
  }
  return undefined;
}

export interface SidecarServerOptions {
  /** Fastify logger (default off). */
  logger?: boolean;
}

export function createSidecarServer(
  runtime: SidecarRuntime,
  options: SidecarServerOptions = {},
): SidecarServer {
  const cfg = runtime.loaded.config;
  const limits = cfg.limits;
  const { gate, approvals } = runtime;
  const auth = new Authenticator(cfg.auth, (id) => runtime.loaded.gate.principals[id]?.roles.slice() ?? []);
  const limiter = new RateLimiter(limits.rateLimitPerMinute);
  const metrics = new SidecarMetrics();
  const shutdown = new AbortController();
  let closing: Promise<void> | undefined;
  let inFlight = 0;
  let url: string | undefined;
  let openapi: Record<string, unknown> | undefined;

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

  // Bodies are parsed only as strict JSON: size and depth bounded, duplicate keys and
  // __proto__ refused (two parsers that disagree on duplicates is a classic bypass).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    try {
      done(
        null,
        parseStrictJson(body as string, { maxLength: limits.bodyBytes, maxDepth: limits.jsonDepth }),
      );
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // The per-request hooks are callback-style, not async: an async hook costs a promise
  // and a microtask turn per request per hook, which on /v1/decide is a measurable share
  // of everything the HTTP layer adds (bench/sidecar.ts).
  const leave = () => {
    inFlight--;
  };
  app.addHook("onRequest", (_req, reply, done) => {
    inFlight++;
    // 'close' fires once per response, finished or aborted: the gauge cannot leak.
    reply.raw.on("close", leave);
    if (closing !== undefined) {
      reply.header("connection", "close");
      done(new ApiError("ERR_SERVER_SHUTTING_DOWN", "the server is shutting down"));
      return;
    }
    done();
  });
  app.addHook("onSend", (_req, reply, payload, done) => {
    // During shutdown a kept-alive connection is not reused.
    if (closing !== undefined) reply.header("connection", "close");
    // Counted here rather than in onResponse: every reply passes through onSend, and an
    // onResponse hook makes fastify attach two listeners and read the clock twice per request.
    metrics.response(reply.statusCode);
    done(null, payload);
  });

  const header = (req: FastifyRequest, name: string) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(",") : v;
  };
  /**
   * The route-level authentication hook for one access class (built once per route, so a
   * request does not look its route's options up). The identity comes from the credential
   * only; the rate limit is per credential and applies before any parsing or decision.
   */
  const authHook = (access: Access): onRequestHookHandler => {
    return (req, _reply, done) => {
      let needs = access;
      if (needs === "metrics") needs = cfg.metrics.public ? "none" : "operator";
      if (needs === "none") {
        done();
        return;
      }
      const r = auth.authenticate(header(req, "authorization"), header(req, "x-api-key"));
      if (!r.ok) {
        done(new ApiError(r.code, r.message, { headers: { "www-authenticate": 'Bearer realm="warden"' } }));
        return;
      }
      const who = r.identity;
      if ((needs === "agent" && who.kind !== "agent") || (needs === "operator" && who.kind !== "operator")) {
        done(
          new ApiError(
            "ERR_AUTH_FORBIDDEN",
            needs === "agent"
              ? "this route needs an agent credential"
              : "this route needs an operator credential",
          ),
        );
        return;
      }
      const wait = limiter.take(who);
      if (wait > 0) {
        done(
          new ApiError("ERR_SERVER_RATE_LIMITED", "rate limit exceeded", {
            headers: { "retry-after": String(Math.ceil(wait / 1000)) },
          }),
        );
        return;
      }
      req.identity = who;
      done();
    };
  };
  // Every route states its access class; the hook is attached when the route is added.
  app.addHook("onRoute", (r) => {
    const access = (r.config as { access?: Access } | undefined)?.access;
    if (access === undefined) throw new Error(`route ${r.url} does not declare its access`);
    if (access === "none") return;
    const own = r.onRequest === undefined ? [] : [r.onRequest].flat();
    r.onRequest = [authHook(access), ...own];
  });

  app.setErrorHandler((err, _req, reply) => {
    const e = toApiError(err);
    if (e.code === "ERR_SERVER_INTERNAL") app.log.error(err);
    void reply.code(e.status).headers(e.headers).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new ApiError(
      "ERR_SERVER_NOT_FOUND",
      `no route ${req.method} ${req.url.split("?")[0]?.slice(0, 200)}`,
    );
    void reply.code(e.status).send(e.body());
  });

  /** Aborts when the client goes away or the shutdown grace period ends. */
  const callSignal = (reply: FastifyReply): AbortSignal => {
    const client = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) client.abort(new Error("client disconnected"));
    });
    return AbortSignal.any([client.signal, shutdown.signal]);
  };

  /**
   * The Gate request for an agent call. The body (CallBody: a GateRequest without the
   * principal, and without toolClass/action for a contract-named call) is completed from
   * the credential and the contract, then parsed once with parseGateRequest: the result is
   * deep-frozen and marked, so the Gate does not parse it again. A value the body states
   * is kept as stated (and checked), never overwritten, so a body naming another principal
   * or relabelling a contract is refused rather than silently corrected.
   */
  const agentRequest = (req: FastifyRequest) => {
    const who = req.identity as Identity;
    const raw = req.body;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      parse(CallBody, raw, "request body"); // throws, with CallBody's own message
      throw new ApiError("ERR_SERVER_REQUEST_INVALID", "request body invalid at (root)");
    }
    const body = raw as Record<string, unknown>;
    // A contract decides what kind of action a call is; a caller cannot relabel a POST
    // tool as an http "get" to reach a more permissive rule (checked after the parse).
    const tool = typeof body.tool === "string" ? runtime.contracts?.get(body.tool) : undefined;
    const c = tool !== undefined ? classifyContract(tool) : undefined;
    // Completed in place: the body is this request's own object from the strict parser,
    // and zod's fast path is about twice as fast on it as on a spread copy with more keys.
    if (body.toolClass === undefined && c !== undefined) body.toolClass = c.toolClass;
    if (body.action === undefined && c !== undefined) body.action = c.action;
    if (body.toolClass === undefined || body.action === undefined) {
      throw new ApiError(
        "ERR_SERVER_REQUEST_INVALID",
        "toolClass and action are required unless `tool` names a contract",
      );
    }
    if (body.principalId === undefined) body.principalId = who.id;
    const parsed = parseGateRequest(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiError(
        "ERR_SERVER_REQUEST_INVALID",
        `request body invalid at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
      );
    }
    const request = parsed.data;
    if (request.principalId !== who.id) {
      throw new ApiError("ERR_AUTH_PRINCIPAL_MISMATCH", "principalId does not match the credential");
    }
    // A run belongs to the principal that opened it; another principal cannot touch it
    // (not even to pile denials onto it and trip its quarantine).
    const owner = gate.sessions.get(request.runId)?.principalId;
    if (owner !== undefined && owner !== who.id) {
      throw new ApiError("ERR_SERVER_RUN_FORBIDDEN", "the run belongs to another principal");
    }
    if (
      tool !== undefined &&
      c !== undefined &&
      (request.toolClass !== c.toolClass || request.action !== c.action)
    ) {
      throw new ApiError(
        "ERR_SERVER_REQUEST_INVALID",
        `tool ${tool.name} is ${c.toolClass}/${c.action}; the request says ${request.toolClass}/${request.action}`,
      );
    }
    return { request, tool };
  };

  /** Records a Gate outcome in the metrics; `t0` is when the Gate was called. */
  const observe = (endpoint: "execute" | "decide", o: GateOutcome, t0: number) => {
    metrics.decision(endpoint, o.decision, (performance.now() - t0) / 1000);
    const fault = faultOf(o);
    if (fault !== undefined) metrics.fault(fault);
  };

  app.post("/v1/decide", { config: { access: "agent" } }, async (req) => {
    const { request } = agentRequest(req);
    const t0 = performance.now();
    const o = await gate.evaluate(request);
    observe("decide", o, t0);
    const fault = faultError(o);
    if (fault) throw fault;
    return decisionView(o);
  });

  app.post("/v1/execute", { config: { access: "agent" } }, async (req, reply) => {
    const { request, tool } = agentRequest(req);
    if (request.tool === undefined) {
      throw new ApiError(
        "ERR_SERVER_NO_EXECUTOR",
        "execute runs contract-named tools only (set `tool`); use /v1/decide for a decision alone",
      );
    }
    if (tool !== undefined) {
      const why = runtime.runner.unsupported(tool);
      if (why !== undefined) throw new ApiError("ERR_SERVER_NO_EXECUTOR", why);
    }
    const signal = callSignal(reply);
    const t0 = performance.now();
    const o = await gate.authorize(request, signal);
    observe("execute", o, t0);
    const fault = faultError(o);
    if (fault) throw fault;
    const view = decisionView(o);
    const approval = approvalOf(o);
    if (approval !== undefined) {
      view.approval = {
        outcome: approval.outcome,
        ...(approval.approver !== undefined ? { approver: approval.approver } : {}),
        ...(approval.hitl !== undefined ? { hitlId: approval.hitl.approval_id } : {}),
      };
    }
    const ticket = ticketOf(o);
    if (ticket === undefined || tool === undefined || o.decisionId === null) {
      return {
        ...view,
        denial: { reasonCodes: o.reasonCodes, message: denialMessage(o) },
        evidenceId: null,
      };
    }
    let run: Awaited<ReturnType<typeof runtime.runner.run>>;
    try {
      run = await runtime.runner.run(ticket, tool, {
        signal,
        traceId: request.traceId ?? runTraceId(request.runId),
      });
    } catch {
      // The executor could not journal its evidence: the result is withheld.
      await gate.recordResult(o.decisionId, {}).catch(() => undefined);
      metrics.fault("journal_unavailable");
      throw new ApiError("ERR_SERVER_JOURNAL_UNAVAILABLE", "the execution evidence could not be recorded", {
        details: { decisionId: o.decisionId },
      });
    }
    let recorded: { taint: unknown[] };
    try {
      recorded = await gate.recordResult(o.decisionId, {
        taintLabels: run.taint,
        ...(run.data !== undefined ? { data: run.data } : {}),
        ...(run.outputHash !== null ? { outputHash: run.outputHash as `sha256:${string}` } : {}),
      });
    } catch {
      metrics.fault("journal_unavailable");
      throw new ApiError(
        "ERR_SERVER_JOURNAL_UNAVAILABLE",
        "the result could not be recorded; output withheld",
        {
          details: { decisionId: o.decisionId, evidenceId: run.evidenceId },
        },
      );
    }
    return { ...view, result: run.view, taint: recorded.taint, evidenceId: run.evidenceId };
  });

  app.get("/v1/runs/:id", { config: { access: "any" } }, async (req) => {
    const who = req.identity as Identity;
    const { id } = parse(RunIdParam, req.params, "path");
    const session = gate.sessions.get(id);
    // Another principal's run is indistinguishable from a missing one.
    if (session === undefined || (who.kind === "agent" && session.principalId !== who.id)) {
      throw new ApiError("ERR_SERVER_RUN_NOT_FOUND", "no such run");
    }
    const f = session.snapshot();
    const budgets: Record<string, { used: number; limit: number; remaining: number }> = {};
    for (const [k, b] of Object.entries(f.budgets)) {
      if (b) budgets[k] = { used: b.used, limit: b.limit, remaining: Math.max(0, b.limit - b.used) };
    }
    return {
      runId: f.runId,
      principalId: session.principalId,
      quarantined: f.quarantined,
      ...(f.quarantineReason !== undefined ? { quarantineReason: f.quarantineReason } : {}),
      counters: f.counters,
      perToolCalls: f.perToolCalls,
      budgets,
      taintSeen: f.taintSeen ?? [],
      dataClassificationsSeen: f.dataClassificationsSeen,
    };
  });

  app.get("/v1/approvals", { config: { access: "operator" } }, async () => {
    const steps = approvals.pending().map((p) => ({ kind: "step_up" as const, ...p }));
    const deferred = gate.deferQueue.list().map((d) => ({
      kind: "defer" as const,
      id: d.id,
      decisionId: d.decisionId,
      runId: d.runId,
      approverRole: "approver",
      tool: d.summary,
      createdAt: d.createdAt,
      expiresAt: d.expiresAt,
    }));
    return { pending: [...steps, ...deferred] };
  });

  app.post("/v1/approvals/:id", { config: { access: "operator" } }, async (req) => {
    const who = req.identity as Identity;
    const { id } = parse(ApprovalIdParam, req.params, "path");
    const body = parse(ApprovalDecisionBody, req.body, "request body");
    const approver = { id: who.id, roles: [...who.roles] };
    if (approvals.pending().some((p) => p.id === id)) {
      const verdict: Exclude<ApprovalVerdict, { outcome: "timeout" } | { outcome: "cancelled" }> =
        body.outcome === "modify"
          ? {
              outcome: "modify",
              approver,
              justification: body.justification,
              parameters: body.parameters ?? {},
            }
          : { outcome: body.outcome, approver, justification: body.justification };
      const r = approvals.decide(id, verdict);
      if (!r.ok) throw new ApiError(r.code, r.message);
      return { ok: true, id, outcome: body.outcome };
    }
    if (gate.deferQueue.list().some((d) => d.id === id)) {
      if (!who.roles.includes("approver"))
        throw new ApiError("ERR_APPROVAL_FORBIDDEN", "approver lacks role approver");
      if (body.outcome === "modify")
        throw new ApiError("ERR_APPROVAL_INVALID", "a deferred action cannot be modified");
      const done = gate.deferQueue.resolve(id, {
        outcome: body.outcome === "approve" ? "allow" : "deny",
        by: who.id,
        note: body.justification,
      });
      if (!done) throw new ApiError("ERR_APPROVAL_NOT_FOUND", "no pending approval with that id");
      return { ok: true, id, outcome: body.outcome };
    }
    throw new ApiError("ERR_APPROVAL_NOT_FOUND", "no pending approval with that id");
  });

  const journalFault = (err: unknown): never => {
    throw new ApiError("ERR_SERVER_JOURNAL_UNAVAILABLE", "the journal cannot be read", {
      details: { cause: toApiError(err).code },
    });
  };

  app.get("/v1/journal", { config: { access: "operator" } }, async (req) => {
    const q = parse(JournalQueryString, req.query, "query");
    const entries = await runtime.store
      .query({
        ...(q.run_id !== undefined ? { run_id: q.run_id } : {}),
        ...(q.type !== undefined ? { type: q.type } : {}),
        ...(q.since !== undefined ? { since: q.since } : {}),
        ...(q.until !== undefined ? { until: q.until } : {}),
        ...(q.decision !== undefined ? { decision: q.decision } : {}),
        descending: q.order === "desc",
        limit: q.limit,
      })
      .catch(journalFault);
    return { entries };
  });

  app.get("/v1/journal/head", { config: { access: "operator" } }, async () => {
    const head = await runtime.journal.head().catch(journalFault);
    return {
      head,
      signed: head === null ? null : signHead(head, runtime.signer),
      publicKey: runtime.signer.publicKey.export({ format: "jwk" }),
    };
  });

  app.post("/v1/journal/verify", { config: { access: "operator" } }, async (req) => {
    const body = parse(VerifyBody, req.body ?? {}, "request body");
    return verifyJournal(runtime.store, new Keyring([runtime.signer.publicKey]), {
      ...(body.expectHead !== undefined ? { expectHead: body.expectHead } : {}),
    }).catch(journalFault);
  });

  app.get("/health", { config: { access: "none" } }, async () => ({ status: "ok" }));

  app.get("/ready", { config: { access: "none" } }, async () => {
    await runtime.store.count().catch(journalFault);
    return { status: "ready" };
  });

  app.get("/metrics", { config: { access: "metrics" } }, async (_req, reply) => {
    const names = runtime.contracts?.names() ?? [];
    const text = metrics.render({
      approvalsPending: () => approvals.pending().length,
      deferredPending: () => gate.deferQueue.size,
      inFlight: () => inFlight,
      breakers: () => names.map((tool) => ({ tool, state: runtime.breakers.for(tool).state })),
    });
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });

  app.get("/v1/openapi.json", { config: { access: "none" } }, async () => {
    openapi ??= openApiDocument();
    return openapi;
  });

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
      closing ??= (async () => {
        // Blocked calls (approval waits, slow tools) get the grace period, then are cancelled.
        const timer = setTimeout(() => shutdown.abort(new Error("shutting down")), cfg.shutdown.graceMs);
        try {
          await app.close();
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
