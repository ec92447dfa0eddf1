// In-memory stand-ins for the Gate, executors, journal and tool catalogue that keep the
// guarantees the loop relies on: tickets exist only when the fake Gate minted them, and
// the fake executor redeems each exactly once.
import {
  canonicalJson,
  type Decision,
  type GateRequestInput,
  type TaintLabel,
} from "../../src/contracts/index.js";
import {
  type ExecutionOutcome,
  type ExecutorPort,
  type GatePort,
  type GateVerdict,
  type JournalPort,
  type LoopEvent,
  type ModelAdapter,
  type ModelRequest,
  type ModelResponse,
  type ModelTool,
  parseToolArguments,
  type ResolvedCall,
  type ToolCatalog,
} from "../../src/loop/index.js";

export class MemoryJournal implements JournalPort {
  readonly events: LoopEvent[] = [];
  append(event: LoopEvent): void {
    // Canonical JSON, as the real journal persists it: undefined, NaN or cycles throw here too.
    this.events.push({ ...event, body: JSON.parse(canonicalJson(event.body)) as Record<string, unknown> });
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
  last(type: LoopEvent["type"]): LoopEvent {
    const e = this.events.filter((x) => x.type === type).at(-1);
    if (e === undefined) throw new Error(`no ${type} event`);
    return e;
  }
}

interface ArgDef {
  type: "string" | "number";
  required?: boolean;
}

const TOOLS: Record<string, { toolClass: string; action: string; args: Record<string, ArgDef> }> = {
  fetch_page: { toolClass: "http", action: "get", args: { url: { type: "string", required: true } } },
  read_file: { toolClass: "file", action: "read", args: { path: { type: "string", required: true } } },
  http_post: {
    toolClass: "http",
    action: "post",
    args: { url: { type: "string", required: true }, body: { type: "string", required: true } },
  },
};

/** A catalogue with three contracts and a small argument checker (the real one is the tools layer's). */
export class FakeCatalog implements ToolCatalog {
  readonly resolved: string[] = [];
  modelTools(): ModelTool[] {
    return Object.entries(TOOLS).map(([name, t]) => ({
      name,
      description: `${t.toolClass} ${t.action}`,
      inputSchema: {
        type: "object",
        additionalProperties: false,
        properties: Object.fromEntries(Object.entries(t.args).map(([k, a]) => [k, { type: a.type }])),
        required: Object.entries(t.args)
          .filter(([, a]) => a.required)
          .map(([k]) => k),
      },
    }));
  }
  resolve(name: string, args: Record<string, unknown>): ResolvedCall {
    this.resolved.push(name);
    const t = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
    if (t === undefined) return { ok: false, code: "ERR_TOOL_UNKNOWN", message: `no contract named ${name}` };
    for (const k of Object.keys(args)) {
      if (!Object.hasOwn(t.args, k))
        return { ok: false, code: "ERR_TOOL_ARG_UNKNOWN", message: `unknown argument ${k}` };
    }
    for (const [k, a] of Object.entries(t.args)) {
      if (!(k in args)) {
        if (a.required) return { ok: false, code: "ERR_TOOL_ARG_MISSING", message: `missing argument ${k}` };
        continue;
      }
      if (typeof args[k] !== a.type)
        return { ok: false, code: "ERR_TOOL_ARG_TYPE", message: `${k} must be a ${a.type}` };
    }
    return { ok: true, toolClass: t.toolClass, action: t.action, tool: name, parameters: { ...args } };
  }
}

/** A ticket the fake Gate mints; the executor accepts only registered, unredeemed ones. */
export class FakeTicket {
  private constructor(
    readonly tool: string,
    readonly parameters: Readonly<Record<string, unknown>>,
  ) {
    Object.freeze(this);
  }
  static mint(tool: string, parameters: Record<string, unknown>): FakeTicket {
    const t = new FakeTicket(tool, Object.freeze({ ...parameters }));
    minted.add(t);
    return t;
  }
}
const minted = new WeakSet<object>();
const redeemed = new WeakSet<object>();

export type Rule = (req: GateRequestInput) => {
  decision: Decision;
  reasons?: string[];
  parameters?: Record<string, unknown>;
  quarantined?: boolean;
  withholdTicket?: boolean;
};

export class FakeGate implements GatePort<FakeTicket> {
  readonly requests: GateRequestInput[] = [];
  inFlight = 0;
  maxInFlight = 0;
  #n = 0;
  constructor(readonly rule: Rule = () => ({ decision: "allow" })) {}

  async decide(request: GateRequestInput): Promise<GateVerdict<FakeTicket>> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setImmediate(r));
      this.requests.push(structuredClone(request));
      const r = this.rule(request);
      this.#n += 1;
      const decisionId = `dec-${this.#n}`;
      const params = r.parameters ?? (request.parameters as Record<string, unknown>);
      const ticketed = (r.decision === "allow" || r.decision === "modify") && !r.withholdTicket;
      return {
        decision: r.decision,
        decisionId,
        reasons: r.reasons ?? [`${r.decision} by fake policy`],
        policyIds: ["fake-policy"],
        ...(ticketed ? { ticket: FakeTicket.mint(request.tool ?? request.action, params) } : {}),
        ...(r.decision === "modify" ? { parameters: params } : {}),
        ...(r.quarantined ? { quarantined: true } : {}),
      };
    } finally {
      this.inFlight -= 1;
    }
  }
}

export type Handler = (
  params: Readonly<Record<string, unknown>>,
) => ExecutionOutcome | Promise<ExecutionOutcome>;

export class FakeExecutor implements ExecutorPort<FakeTicket> {
  readonly executed: { tool: string; parameters: Readonly<Record<string, unknown>> }[] = [];
  constructor(readonly handlers: Record<string, Handler> = {}) {}

  async execute(ticket: FakeTicket): Promise<ExecutionOutcome> {
    if (!minted.has(ticket)) return { ok: false, code: "ERR_TICKET_FORGED", message: "not a Gate ticket" };
    if (redeemed.has(ticket)) return { ok: false, code: "ERR_TICKET_REUSED", message: "ticket already used" };
    redeemed.add(ticket);
    this.executed.push({ tool: ticket.tool, parameters: ticket.parameters });
    const h = this.handlers[ticket.tool];
    if (h === undefined) return { ok: true, output: { tool: ticket.tool, echo: ticket.parameters } };
    return h(ticket.parameters);
  }
}

export const WEB: TaintLabel = { source: "web", origin: "http://127.0.0.1/page" };

export interface Turn {
  text?: string | null;
  calls?: { name: string; arguments: Record<string, unknown> | string; id?: string }[];
  usage?: { inputTokens: number; outputTokens: number };
}

/** A programmable model that records every request it was given. */
export class RecordingModel implements ModelAdapter {
  readonly id = "recording";
  readonly requests: ModelRequest[] = [];
  #i = 0;
  constructor(readonly turns: (Turn | ((req: ModelRequest) => Turn | Promise<Turn>))[]) {}

  async complete(request: ModelRequest, options: { signal?: AbortSignal } = {}): Promise<ModelResponse> {
    this.requests.push(structuredClone({ messages: [...request.messages], tools: [...request.tools] }));
    const t = this.turns[this.#i++];
    if (t === undefined) throw new Error("model has no more turns");
    if (options.signal?.aborted) throw new Error("aborted");
    const turn = typeof t === "function" ? await t(request) : t;
    return {
      text: turn.text ?? null,
      toolCalls: (turn.calls ?? []).map((c, i) => ({
        id: c.id ?? `m${this.#i}_${i}`,
        name: c.name,
        arguments:
          typeof c.arguments === "string"
            ? parseToolArguments(c.arguments)
            : { ok: true as const, value: c.arguments },
      })),
      usage: turn.usage ?? { inputTokens: 10, outputTokens: 5 },
    };
  }
}

/** The observation text the model received for a tool call id, parsed. */
export function observationFor(req: ModelRequest | undefined, callId: string): Record<string, unknown> {
  const m = req?.messages.find((x) => x.role === "tool" && x.toolCallId === callId);
  if (m === undefined || m.role !== "tool") throw new Error(`no observation for ${callId}`);
  return JSON.parse(m.content) as Record<string, unknown>;
}
