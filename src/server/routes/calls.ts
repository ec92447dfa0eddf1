// Agent calls: POST /v1/decide (decision only) and POST /v1/execute (decide, execute
// with the Gate's ticket, record the result). The request is completed from the
// credential and the contract, parsed once, and its run must be one the runtime created
// for this principal (POST /v1/runs): an invented, foreign or ended run id is a 404
// ERR_RUN_UNKNOWN before the Gate sees the call, so rotating run ids cannot shed a run's
// state and a principal cannot pile calls onto another's run.
import { performance } from "node:perf_hooks";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { parseGateRequest, parseId, taskOutcomeOf } from "../../contracts/index.js";
import {
  approvalOf,
  type ExecutionTicket,
  faultOf,
  type GateOutcome,
  runTraceId,
  ticketOf,
  withExecutionSpan,
} from "../../gate/index.js";
import type { CompiledTool } from "../../tools/index.js";
import { identityOf } from "../auth-plugin.js";
import { traceParentOf } from "../edge.js";
import { ApiError } from "../errors.js";
import { keyedAttempt } from "../idempotency.js";
import { AUTH_ERRORS, BODY_ERRORS, mount, parseInput, type RouteSpec } from "../route.js";
import { CallBody, DecideResponse, ExecuteResponse } from "../schemas.js";
import { callSignal, inTurn, type RouteContext } from "./context.js";
import { decisionView, denialMessage, faultError } from "./views.js";

const CALL_ERRORS = [
  ...AUTH_ERRORS,
  ...BODY_ERRORS,
  "ERR_AUTH_PRINCIPAL_MISMATCH",
  "ERR_RUN_UNKNOWN",
  "ERR_RUN_ELSEWHERE",
  "ERR_RUNTIME_STORE_UNAVAILABLE",
  "ERR_SERVER_JOURNAL_UNAVAILABLE",
  "ERR_SERVER_POLICY_ERROR",
  "ERR_SERVER_SHUTTING_DOWN",
  "ERR_TRUST_BELOW_THRESHOLD",
] as const;

const callBody = { name: "CallBody", schema: CallBody, required: true } as const;

/** How long a /v1/execute call holds its fair-queue slot before giving it back (approval waits, slow tools). */
const EXECUTE_SLICE_MS = 1000;

export const DECIDE = {
  method: "POST",
  url: "/v1/decide",
  access: "agent",
  summary: "Decision only (the host executes); step_up and defer are returned, not awaited",
  body: callBody,
  response: { name: "DecideResponse", schema: DecideResponse },
  description: "The decision",
  errors: [...CALL_ERRORS, "ERR_SERVER_IDEMPOTENCY_PENDING", "ERR_SERVER_IDEMPOTENCY_MISMATCH"],
} as const satisfies RouteSpec;

export const EXECUTE = {
  method: "POST",
  url: "/v1/execute",
  access: "agent",
  summary: "Gate and execute a contract-named tool call for the authenticated principal",
  body: callBody,
  response: { name: "ExecuteResponse", schema: ExecuteResponse },
  description: "Decided (and executed when allowed)",
  errors: [
    ...CALL_ERRORS,
    "ERR_SERVER_NO_EXECUTOR",
    "ERR_SERVER_BUSY",
    "ERR_SERVER_IDEMPOTENCY_PENDING",
    "ERR_SERVER_IDEMPOTENCY_MISMATCH",
  ],
} as const satisfies RouteSpec;

function bodyInvalid(issue: { path: PropertyKey[]; message: string } | undefined): ApiError {
  return new ApiError(
    "ERR_SERVER_REQUEST_INVALID",
    `request body invalid at ${issue?.path.map(String).join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
  );
}

/**
 * The Gate request for an agent call. The body (CallBody: a GateRequest without the
 * principal, and without toolClass/action for a contract-named call) is completed from
 * the credential and the contract, then parsed once with parseGateRequest: the result is
 * deep-frozen and marked, so the Gate does not parse it again. A value the body states
 * is kept as stated (and checked), never overwritten, so a body naming another principal
 * or relabelling a contract is refused rather than silently corrected.
 */
function agentRequest(ctx: RouteContext, req: FastifyRequest) {
  const who = identityOf(req);
  const raw = req.body;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    parseInput(CallBody, raw, "request body"); // throws, with CallBody's own message
    throw new ApiError("ERR_SERVER_REQUEST_INVALID", "request body invalid at (root)");
  }
  const body = raw as Record<string, unknown>;
  // A contract decides what kind of action a call is; a caller cannot relabel a POST
  // tool as an http "get" to reach a more permissive rule (checked after the parse).
  const tool = typeof body.tool === "string" ? ctx.runtime.contracts?.get(body.tool) : undefined;
  const c = tool !== undefined ? ctx.runtime.runner.classify(tool) : undefined;
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
  // The verified AgentPin identity comes from the credential only: a body that states one
  // is refused (it could only be a claim the credential does not back).
  if (body.identity !== undefined) {
    throw new ApiError(
      "ERR_AUTH_PRINCIPAL_MISMATCH",
      "identity comes from the AgentPin credential, not the body",
    );
  }
  if (who.kind === "agent" && who.agent !== undefined) {
    body.identity = {
      agentId: who.agent.agentId,
      domain: who.agent.domain,
      capabilities: [...who.agent.capabilities],
    };
  }
  const parsed = parseGateRequest(body);
  if (!parsed.success) throw bodyInvalid(parsed.error.issues[0]);
  const request = parsed.data;
  // One id grammar at the edge: an id the journal would refuse is a 400 here, not a 503 later.
  const id = parseId("run", request.runId);
  if (!id.ok) throw bodyInvalid({ path: ["runId"], message: id.reason });
  if (request.principalId !== who.id) {
    throw new ApiError("ERR_AUTH_PRINCIPAL_MISMATCH", "principalId does not match the credential");
  }
  return { request, tool, c, who };
}

/**
 * The agent's request, its run servable here: runs are created by the runtime and bound to
 * their principal, so ERR_RUN_UNKNOWN (404) answers alike for an invented, ended, evicted
 * or another principal's run id; in distributed mode a run another live replica serves is
 * ERR_RUN_ELSEWHERE (421), and one whose owner's lease expired is adopted first.
 */
async function agentCall(ctx: RouteContext, req: FastifyRequest) {
  const { request, tool, c, who } = agentRequest(ctx, req);
  await ctx.runtime.ensureRun(request.runId, who.id);
  ctx.runtime.gate.sessions.run(request.runId, who.id);
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
}

export function callRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const observe: Observe = (endpoint, o, t0, tool) => {
    ctx.metrics.decision(endpoint, o.decision, (performance.now() - t0) / 1000);
    ctx.metrics.outcome(tool, o.decision, o.reasonCodes);
    const fault = faultOf(o);
    if (fault !== undefined) ctx.metrics.fault(fault);
  };

  mount(
    app,
    DECIDE,
    (req, reply) =>
      // A retried decision with the key of an earlier attempt answers that attempt's decision
      // (one journaled decision, one spent budget unit), never a second one.
      keyedAttempt(ctx.runtime, "POST /v1/decide", req, reply, () => decideCall(ctx, observe, req, reply)),
    { parse: false },
  );

  mount(
    app,
    EXECUTE,
    (req, reply) =>
      // A retry with the key of an earlier attempt answers that attempt's outcome, wherever
      // its run lives now (checked before the run is located).
      keyedAttempt(ctx.runtime, "POST /v1/execute", req, reply, () =>
        // In the principal's fair turn; a call still running after a second (an approval
        // wait, a slow tool) gives its slot back, since it waits on nothing the others share.
        inTurn(ctx, req, reply, () => executeCall(ctx, observe, req, reply), EXECUTE_SLICE_MS),
      ),
    { parse: false },
  );
}

type Observe = (endpoint: "execute" | "decide", o: GateOutcome, t0: number, tool: string | undefined) => void;

/** One /v1/decide attempt: located and decided (the host executes). */
async function decideCall(
  ctx: RouteContext,
  observe: Observe,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<Record<string, unknown>> {
  const { gate } = ctx.runtime;
  const { request } = await agentCall(ctx, req);
  const t0 = performance.now();
  const parent = traceParentOf(req);
  // Evaluation and the durable journal commit are shared work: served in the principal's fair turn.
  // A /v1/decide host executes on its own and has no result channel: nothing will
  // collect this call's pending result, so none is held (issue 17 #9).
  const o = await inTurn(ctx, req, reply, () =>
    gate.evaluate(request, parent !== undefined ? { parent, noResult: true } : { noResult: true }),
  );
  if (o.traceparent !== undefined) reply.header("traceparent", o.traceparent);
  observe("decide", o, t0, request.tool);
  const fault = faultError(o);
  if (fault) throw fault;
  return decisionView(o, ctx.runtime.composed.journalChain) as unknown as Record<string, unknown>;
}

/** One /v1/execute attempt: located, decided, executed when allowed, its result recorded. */
async function executeCall(
  ctx: RouteContext,
  observe: Observe,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<Record<string, unknown>> {
  const { gate } = ctx.runtime;
  const { request, tool } = await agentCall(ctx, req);
  const runnable = executable(ctx, request.tool, tool);
  const signal = callSignal(ctx, reply);
  const t0 = performance.now();
  const parent = traceParentOf(req);
  const o = await gate.authorize(request, signal, parent !== undefined ? { parent } : undefined);
  if (o.traceparent !== undefined) reply.header("traceparent", o.traceparent);
  observe("execute", o, t0, request.tool);
  const fault = faultError(o);
  if (fault) throw fault;
  const view = decisionView(o, ctx.runtime.composed.journalChain);
  const approval = approvalView(o);
  if (approval !== undefined) view.approval = approval;
  const ticket = ticketOf(o);
  if (ticket === undefined || runnable === undefined || o.decisionId === null) {
    return {
      ...view,
      denial: { reasonCodes: o.reasonCodes, message: denialMessage(o) },
      evidenceId: null,
    };
  }
  const traceId = o.traceId ?? request.traceId ?? runTraceId(request.runId);
  const decisionId = o.decisionId;
  const done = await withExecutionSpan(o.traceparent, { tool: runnable.name, decisionId }, () =>
    runAndRecord(ctx, { ticket, decisionId, tool: runnable, signal, traceId }),
  );
  return { ...view, ...done };
}

/** How a step-up or defer was resolved, as the agent sees it (no approver justification). */
function approvalView(o: GateOutcome): Record<string, unknown> | undefined {
  const approval = approvalOf(o);
  if (approval === undefined) return undefined;
  return {
    outcome: approval.outcome,
    ...(approval.approver !== undefined ? { approver: approval.approver } : {}),
    ...(approval.hitl !== undefined ? { hitlId: approval.hitl.approval_id } : {}),
  };
}

/**
 * The contract /v1/execute will run: undefined when `tool` names no contract (the Gate
 * denies it); a coded refusal when no tool is named or no executor serves it.
 */
function executable(
  ctx: RouteContext,
  named: string | undefined,
  tool: CompiledTool | undefined,
): CompiledTool | undefined {
  if (named === undefined) {
    throw new ApiError(
      "ERR_SERVER_NO_EXECUTOR",
      "execute runs contract-named tools only (set `tool`); use /v1/decide for a decision alone",
    );
  }
  if (tool === undefined) return undefined;
  const why = ctx.runtime.runner.unsupported(tool);
  if (why !== undefined) throw new ApiError("ERR_SERVER_NO_EXECUTOR", why);
  return tool;
}

interface Granted {
  ticket: ExecutionTicket;
  decisionId: string;
  tool: CompiledTool;
  signal: AbortSignal;
  traceId: string;
}

/**
 * Executes a granted call and records its result (taint into the run, the journal).
 * Evidence that cannot be journaled withholds the result (503, never an unrecorded output).
 */
async function runAndRecord(ctx: RouteContext, g: Granted): Promise<Record<string, unknown>> {
  const { gate, runner } = ctx.runtime;
  const decisionId = g.decisionId as Parameters<typeof gate.recordResult>[0];
  let run: Awaited<ReturnType<typeof runner.run>>;
  try {
    run = await runner.run(g.ticket, g.tool, { signal: g.signal, traceId: g.traceId });
  } catch {
    // The executor could not journal its evidence: the result is withheld.
    await gate.recordResult(decisionId, {}).catch(() => undefined);
    ctx.metrics.fault("journal_unavailable");
    throw new ApiError(
      "ERR_SERVER_JOURNAL_UNAVAILABLE",
      "the execution evidence could not be recorded; the action may have executed (retry with the same Idempotency-Key)",
      { details: { decisionId, mayHaveExecuted: true } },
    );
  }
  let recorded: { taint: unknown[] };
  try {
    recorded = await gate.recordResult(decisionId, {
      taintLabels: run.taint,
      outcome: taskOutcomeOf(run.view.ok, run.view.ok ? undefined : run.view.code),
      ...(run.data !== undefined ? { data: run.data } : {}),
      // A failed call's message reaches the agent too (an [mcp] upstream's JSON-RPC error): screened.
      ...(!run.view.ok ? { error: run.view.message } : {}),
      ...(run.usage !== undefined ? { usage: run.usage } : {}),
      ...(run.outputHash !== null ? { outputHash: run.outputHash as `sha256:${string}` } : {}),
    });
  } catch {
    ctx.metrics.fault("journal_unavailable");
    throw new ApiError(
      "ERR_SERVER_JOURNAL_UNAVAILABLE",
      "the result could not be recorded; the action executed, its output is withheld (retry with the same Idempotency-Key)",
      {
        details: { decisionId, evidenceId: run.evidenceId, mayHaveExecuted: true },
      },
    );
  }
  return { result: run.view, taint: recorded.taint, evidenceId: run.evidenceId };
}
