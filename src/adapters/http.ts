// HTTP mode: the governed call goes to a Warden sidecar (docs/http-api.md) with the
// agent's bearer token. The run is created by the sidecar (`POST /v1/runs`); each call is
// `POST /v1/execute` with the structured arguments only, which the sidecar authenticates,
// decides, journals, executes from the contract's template and reports back into the
// run's session (taint, provenance) before it answers. A step-up blocks that request
// until an approver decides (`/v1/approvals`) or a bound passes: the adapter's own bound
// aborts the request, and the sidecar journals the wait as cancelled.
import { z } from "zod";
import { AdapterError, type TaintLabel, timedScope } from "../contracts/index.js";
import type { ModelTool } from "../tools/index.js";
import { deniedOutcome, faultOutcome, type GovernedOutcome } from "./outcome.js";
import { type CallOptions, checkWait, type GovernedTarget, RunOnce, TaintCarry } from "./target.js";

export interface HttpOptions {
  /** The sidecar's base URL, e.g. `http://127.0.0.1:8787` (https for anything but loopback). */
  url: string;
  /** The agent's bearer token (its principal comes from the token, never from the body). */
  token: string;
  /** The model's view of each contract the agent may call (`contractModelTool(file)` or your own copy). */
  tools: readonly ModelTool[];
  /** A run the sidecar created for this token; without it one is created on the first call. */
  runId?: string;
  /** With a new run: a parent run whose taint it inherits. */
  parentRun?: string;
  /** With a new run: the user's request, the trusted origin of flow control (docs/threat-model.md#flow-control). */
  originalRequest?: string;
  /** How long one call may take, step-up wait included (default 60 s). */
  waitMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

const Taint = z.looseObject({ source: z.string(), origin: z.string() });
const ExecuteAnswer = z.looseObject({
  decisionId: z.string().nullable(),
  decision: z.enum(["allow", "deny", "modify", "step_up", "defer"]),
  reasonCodes: z.array(z.string()).default([]),
  parameters: z.record(z.string(), z.unknown()).optional(),
  result: z
    .union([
      z.looseObject({ ok: z.literal(true), output: z.unknown() }),
      z.looseObject({ ok: z.literal(false), code: z.string(), message: z.string() }),
    ])
    .optional(),
  taint: z.array(Taint).default([]),
});
const ErrorAnswer = z.looseObject({ error: z.looseObject({ code: z.string(), message: z.string() }) });
const RunAnswer = z.looseObject({ runId: z.string() });

function loopbackHost(u: URL): boolean {
  return u.hostname === "127.0.0.1" || u.hostname === "localhost" || u.hostname === "[::1]";
}

export class HttpTarget implements GovernedTarget {
  readonly mode = "http" as const;
  readonly #o: HttpOptions;
  readonly #base: URL;
  readonly #tools: ReadonlyMap<string, ModelTool>;
  readonly #waitMs: number;
  readonly #fetch: typeof fetch;
  readonly #taint = new TaintCarry();
  readonly #run: RunOnce;

  constructor(o: HttpOptions) {
    let base: URL;
    try {
      base = new URL(o.url);
    } catch {
      throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", "the sidecar URL does not parse");
    }
    if (base.protocol !== "https:" && !(base.protocol === "http:" && loopbackHost(base)))
      throw new AdapterError("ERR_ADAPTER_CONFIG_INVALID", "plain http is for a loopback sidecar only");
    if (o.token.length === 0 || o.token.length > 512 || /\s/.test(o.token))
      throw new AdapterError(
        "ERR_ADAPTER_CONFIG_INVALID",
        "the agent token is empty, too long or has spaces",
      );
    this.#o = o;
    this.#base = base;
    this.#tools = new Map(o.tools.map((t) => [t.name, t]));
    this.#waitMs = checkWait(o.waitMs);
    this.#fetch = o.fetch ?? fetch;
    this.#run = new RunOnce(() => this.#startRun(), o.runId);
  }

  modelTool(name: string): ModelTool | undefined {
    return this.#tools.get(name);
  }

  runId(): Promise<string> {
    return this.#run.get();
  }

  async #startRun(): Promise<string> {
    const { status, body } = await this.#post("/v1/runs", {
      ...(this.#o.parentRun !== undefined ? { parentRun: this.#o.parentRun } : {}),
      ...(this.#o.originalRequest !== undefined ? { originalRequest: this.#o.originalRequest } : {}),
    });
    const ok = RunAnswer.safeParse(body);
    if (status === 201 && ok.success) return ok.data.runId;
    const err = ErrorAnswer.safeParse(body);
    throw new AdapterError(
      "ERR_ADAPTER_SIDECAR_UNAVAILABLE",
      err.success ? `${err.data.error.code}: POST /v1/runs refused` : `POST /v1/runs answered ${status}`,
    );
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<GovernedOutcome> {
    const outcome = await this.#call(tool, args, options);
    this.#taint.observe(outcome);
    return outcome;
  }

  async #call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<GovernedOutcome> {
    if (!this.#tools.has(tool))
      return {
        kind: "denied",
        code: "ERR_TOOL_UNKNOWN",
        reasonCodes: ["ERR_TOOL_UNKNOWN"],
        decisionId: null,
      };
    let runId: string;
    try {
      runId = await this.runId();
    } catch (err) {
      return faultOutcome(
        "ERR_ADAPTER_SIDECAR_UNAVAILABLE",
        err instanceof Error ? err.message : String(err),
      );
    }
    const body = {
      runId,
      tool,
      parameters: args,
      taintLabels: this.#taint.labels(),
      ...(options.traceId !== undefined ? { traceId: options.traceId } : {}),
    };
    // The caller's signal may serve many calls: the call follows it only while it runs
    // (`timedScope`, not `AbortSignal.any`, which leaves an entry per call with it in Node 20–24).
    const scope = timedScope(options.signal, this.#waitMs);
    let answer: { status: number; body: unknown };
    try {
      answer = await this.#post("/v1/execute", body, scope.signal);
    } catch (err) {
      if (scope.timedOut) return faultOutcome("ERR_ADAPTER_TIMEOUT", `no answer within ${this.#waitMs} ms`);
      const reason = scope.signal.aborted
        ? "cancelled by the caller"
        : `the sidecar is unreachable (${String(err)})`;
      return faultOutcome("ERR_ADAPTER_SIDECAR_UNAVAILABLE", reason);
    } finally {
      scope.release();
    }
    return outcomeOf(answer);
  }

  async #post(path: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
    const res = await this.#fetch(new URL(path, this.#base), {
      method: "POST",
      headers: { authorization: `Bearer ${this.#o.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal !== undefined ? { signal } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }
}

/** The sidecar's answer as an outcome; anything not in its documented shape is a fault. */
export function outcomeOf(answer: { status: number; body: unknown }): GovernedOutcome {
  if (answer.status !== 200) {
    const err = ErrorAnswer.safeParse(answer.body);
    if (!err.success)
      return faultOutcome("ERR_ADAPTER_SIDECAR_UNAVAILABLE", `the sidecar answered ${answer.status}`);
    return faultOutcome(err.data.error.code, err.data.error.message);
  }
  const p = ExecuteAnswer.safeParse(answer.body);
  if (!p.success)
    return faultOutcome("ERR_ADAPTER_SIDECAR_UNAVAILABLE", "the sidecar's answer has an unknown shape");
  const a = p.data;
  const taint = a.taint as TaintLabel[];
  if (a.decision !== "allow" && a.decision !== "modify") return deniedOutcome(a.decisionId, a.reasonCodes);
  if (a.decisionId === null || a.result === undefined)
    return faultOutcome("ERR_ADAPTER_SIDECAR_UNAVAILABLE", "an allowed call came back without a result");
  if (!a.result.ok) return faultOutcome(a.result.code, a.result.message, { decisionId: a.decisionId, taint });
  return {
    kind: "allowed",
    decisionId: a.decisionId,
    decision: a.decision,
    output: a.result.output,
    taint,
    parameters: a.parameters ?? {},
  };
}
