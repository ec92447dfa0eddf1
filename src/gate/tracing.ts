// OpenTelemetry spans of one governed action, through `@opentelemetry/api` only (the SDK
// is the embedding application's choice; without one every call here is a no-op). One
// span per action, named and attributed after the GenAI `execute_tool` semantic
// conventions (gen_ai.operation.name, gen_ai.tool.name, gen_ai.tool.type,
// gen_ai.tool.call.id), with child spans for the Gate's stages: contract validation,
// drift, policy, journal commit, and — started by whoever executes — execution.
// A non-recording action span gets no children: no SDK, no cost beyond one no-op span.

import {
  type Attributes,
  type Context,
  context,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

export const TRACER_NAME = "warden";
const tracer = trace.getTracer(TRACER_NAME);

export const SPAN = {
  contract: "warden.contract_validation",
  drift: "warden.drift",
  policy: "warden.policy",
  journal: "warden.journal_commit",
  resolution: "warden.resolution",
  execution: "warden.execution",
} as const;

/** Starts the action span under `parent` (default: the active context). */
export function startActionSpan(parent: Context | undefined): { span: Span; ctx: Context } {
  const p = parent ?? context.active();
  const span = tracer.startSpan(
    "execute_tool",
    { kind: SpanKind.INTERNAL, attributes: { "gen_ai.operation.name": "execute_tool" } },
    p,
  );
  return { span, ctx: trace.setSpan(p, span) };
}

/** Runs `fn` in a child span of `ctx` when the action is recorded; plain `fn()` otherwise. */
export function stage<T>(action: Span, ctx: Context, name: string, fn: () => T): T {
  if (!action.isRecording()) return fn();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, ctx);
  try {
    const out = fn();
    if (out instanceof Promise) {
      return out.then(
        (v) => {
          span.end();
          return v;
        },
        (err: unknown) => {
          fail(span, err);
          throw err;
        },
      ) as T;
    }
    span.end();
    return out;
  } catch (err) {
    fail(span, err);
    throw err;
  }
}

function fail(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.setAttribute("error.type", (err as { code?: string } | null)?.code ?? "error");
  span.end();
}

/** What the action span records about the decision. */
export interface ActionFacts {
  tool: string;
  decisionId: string | null;
  runId?: string;
  principalId?: string;
  toolClass?: string;
  action?: string;
  decision: string;
  reasonCodes: readonly string[];
  traceId?: string;
  riskScore?: number | undefined;
  drift?: { action: number; cumulative: number } | undefined;
  fault?: string | undefined;
}

/** Names and attributes the action span after the decision, and ends it. */
export function endActionSpan(span: Span, f: ActionFacts): void {
  if (!span.isRecording()) {
    span.end();
    return;
  }
  span.updateName(`execute_tool ${f.tool}`);
  const a: Attributes = {
    "gen_ai.tool.name": f.tool,
    "gen_ai.tool.type": "extension",
    "warden.decision": f.decision,
    "warden.reason_codes": [...f.reasonCodes],
  };
  if (f.decisionId !== null) a["gen_ai.tool.call.id"] = f.decisionId;
  if (f.runId !== undefined) a["warden.run_id"] = f.runId;
  if (f.principalId !== undefined) a["warden.principal_id"] = f.principalId;
  if (f.toolClass !== undefined) a["warden.tool_class"] = f.toolClass;
  if (f.action !== undefined) a["warden.action"] = f.action;
  if (f.traceId !== undefined) a["warden.trace_id"] = f.traceId;
  if (f.riskScore !== undefined) a["warden.risk_score"] = f.riskScore;
  if (f.drift !== undefined) {
    a["warden.drift"] = f.drift.action;
    a["warden.drift_cumulative"] = f.drift.cumulative;
  }
  span.setAttributes(a);
  if (f.fault !== undefined) {
    span.setAttribute("error.type", f.fault);
    span.setStatus({ code: SpanStatusCode.ERROR, message: f.fault });
  }
  span.end();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C `traceparent` header (version 00) as a remote span context; undefined when malformed or all-zero. */
export function parseTraceparent(header: string | undefined): SpanContext | undefined {
  if (header === undefined || header.length !== 55) return undefined;
  const m = TRACEPARENT.exec(header.toLowerCase());
  if (!m) return undefined;
  const [, traceId, spanId, flags] = m as unknown as [string, string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
}

export function formatTraceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The context whose parent is the remote span `traceparent` names (ROOT when it names none). */
export function contextFromTraceparent(header: string | undefined): Context | undefined {
  const sc = parseTraceparent(header);
  return sc === undefined ? undefined : trace.setSpanContext(context.active(), sc);
}

/** The `traceparent` of a span, when it has a valid context. */
export function traceparentOf(span: Span): string | undefined {
  const sc = span.spanContext();
  return trace.isSpanContextValid(sc) ? formatTraceparent(sc) : undefined;
}

/**
 * Runs an execution in a `warden.execution` span, child of the action span the outcome's
 * `traceparent` names (the Gate's answer carries it). Without one, `fn` runs untraced.
 */
export async function withExecutionSpan<T>(
  traceparent: string | undefined,
  attrs: { tool: string; decisionId: string },
  fn: () => Promise<T>,
): Promise<T> {
  const parent = contextFromTraceparent(traceparent);
  if (parent === undefined) return fn();
  const span = tracer.startSpan(
    SPAN.execution,
    {
      kind: SpanKind.INTERNAL,
      attributes: { "gen_ai.tool.name": attrs.tool, "gen_ai.tool.call.id": attrs.decisionId },
    },
    parent,
  );
  try {
    const out = await fn();
    span.end();
    return out;
  } catch (err) {
    fail(span, err);
    throw err;
  }
}
